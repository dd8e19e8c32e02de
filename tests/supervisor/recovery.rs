//! pi-stalled-agent-recovery [SAR-*]: the wiring through the supervisor, cases 30–36 of the original
//! extension's 36 test cases (1–29 are in `recovery_detectors`), then pokeshell's additions. The
//! shared cooldown between automatic messages is 0, to isolate the recovery rules (the cooldown has its
//! own tests in `arbiter`).

use pokeshell_core::supervisor::{Block, LedgerKind, Message, NotifyLevel, StopReason};
use serde_json::json;

use super::sim::{Sim, call_and_result, text_reply, thinking_only, tool_call};

pub(super) fn recovery_sim() -> Sim {
    Sim::configured(|config| config.global_cooldown_seconds = 0)
}

pub(super) fn bash_fail(id: &str) -> Vec<Message> {
    call_and_result(id, "bash", json!({"command": "make test"}), true)
}

// Wiring (SAR-S1..S8, SAR-L4, SAR-L5)

#[test]
fn sar_30_s8_thinking_only_is_retried_and_a_text_reply_resets() {
    let mut sim = recovery_sim();
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    let sent = sim.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].custom_type, "stalled-agent-recovery-retry");
    assert!(!sent[0].display && sent[0].trigger_turn);
    sim.settle_with(vec![Message::user("go"), text_reply("All done.")]);
    assert_eq!(sim.view().counters.retries, 0, "reset by the reply");
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent().len(), 2);
    assert!(sim.sent()[1].text.contains("Continue"), "{}", sim.sent()[1].text);
}

#[test]
fn sar_31_s7_budget_of_five_then_an_error_notification() {
    let mut sim = recovery_sim();
    for _ in 0..5 {
        sim.settle_with(vec![Message::user("go"), thinking_only()]);
    }
    assert_eq!(sim.sent().len(), 5);
    let before = sim.notifications().len();
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent().len(), 5, "no sixth retry");
    let notes = sim.notifications();
    assert_eq!(notes.len(), before + 1);
    let (level, text, desktop) = &notes[notes.len() - 1];
    assert_eq!(*level, NotifyLevel::Error);
    assert!(text.contains("5 attempts") && *desktop, "{text}");
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent().len(), 6, "the next occurrence starts again at 1");
}

#[test]
fn sar_32_s2_an_aborted_reply_resets_the_budget() {
    let mut sim = recovery_sim();
    for _ in 0..2 {
        sim.settle_with(vec![Message::user("go"), thinking_only()]);
    }
    let aborted_thinking = Message::assistant(StopReason::Aborted, vec![Block::thinking("hmm")]);
    sim.settle_with(vec![Message::user("go"), aborted_thinking]);
    assert_eq!(sim.sent().len(), 2, "an aborted run is never retried");
    sim.user_types();
    for _ in 0..4 {
        sim.settle_with(vec![Message::user("go"), thinking_only()]);
    }
    assert_eq!(sim.sent().len(), 6, "four more: the count restarted at 0");
    let before = sim.notifications().len();
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent().len(), 7, "retry #5 of the new occurrence");
    let (_, text, _) = sim.notifications()[before..]
        .last()
        .cloned()
        .expect("a notification");
    assert!(text.contains("(5/5)"), "{text}");
}

/// A branch that grows by one identical failing bash call per settle.
fn failing_branch_settles(sim: &mut Sim, branch: &mut Vec<Message>, next_id: &mut u32, times: u32) {
    for _ in 0..times {
        *next_id += 1;
        branch.extend(bash_fail(&format!("c{next_id}")));
        sim.settle_with(branch.clone());
    }
}

#[test]
fn sar_33_l4_escalation_over_twenty_identical_failures() {
    let mut sim = recovery_sim();
    let (mut branch, mut id) = (vec![Message::user("go")], 0);
    failing_branch_settles(&mut sim, &mut branch, &mut id, 20);
    let sent = sim.sent();
    assert!(
        sent.iter()
            .all(|sent| sent.custom_type == "stalled-agent-recovery-loop" && !sent.display)
    );
    assert!(sent[0].text.contains("failed 1 time "), "{}", sent[0].text);
    assert!(
        sent[4].text.contains("failed 5 times") && !sent[4].text.contains("Stop calling"),
        "{}",
        sent[4].text
    );
    assert!(sent[9].text.contains("failed 10 times"), "{}", sent[9].text);
    assert!(
        sent[14].text.contains("Stop calling"),
        "final nudge: {}",
        sent[14].text
    );
    assert_eq!(sent.len(), 15);
    let (level, text, desktop) = sim.notifications().pop().expect("a notification");
    assert_eq!(level, NotifyLevel::Error);
    assert!(text.contains("no longer steps in") && desktop, "{text}");
    failing_branch_settles(&mut sim, &mut branch, &mut id, 2);
    assert_eq!(sim.sent().len(), 15, "silent after giving up");
}

#[test]
fn sar_34_l4_interleaved_other_tool_failures_do_not_hide_the_loop() {
    // Each round: a failing bash call, then a failing grep call; the settle sees the grep failure last.
    let mut sim = recovery_sim();
    let mut branch = vec![Message::user("go")];
    for index in 0..5 {
        branch.extend(bash_fail(&format!("b{index}")));
        branch.extend(call_and_result(
            &format!("g{index}"),
            "grep",
            json!({"pattern": "x"}),
            true,
        ));
        sim.settle_with(branch.clone());
    }
    let sent = sim.sent();
    assert_eq!(sent.len(), 5, "one loop-guard message per settle");
    let fifth: Vec<_> = sent
        .iter()
        .filter(|sent| sent.text.contains("failed 5 times"))
        .collect();
    assert_eq!(fifth.len(), 1, "exactly one message mentions the fifth failure");
    assert!(fifth[0].text.contains("grep"), "{}", fifth[0].text);
}

#[test]
fn sar_35_l5_a_text_reply_resets_the_loop_memory() {
    let mut sim = recovery_sim();
    let (mut branch, mut id) = (vec![Message::user("go")], 0);
    failing_branch_settles(&mut sim, &mut branch, &mut id, 5);
    assert_eq!(sim.view().counters.loop_nudges, 1, "nudge #1 recorded");
    branch.push(text_reply("Moved on."));
    sim.settle_with(branch);
    assert_eq!(sim.view().counters.loop_nudges, 0, "reset");
    let mark = sim.mark();
    let (mut fresh, mut id) = (vec![Message::user("again")], 100);
    failing_branch_settles(&mut sim, &mut fresh, &mut id, 5);
    let sent = sim.sent_since(mark);
    assert_eq!(sent.len(), 5);
    assert!(
        sent[4].text.contains("failed 5 times") && sent[4].text.contains("very same"),
        "{}",
        sent[4].text
    );
}

#[test]
fn sar_36_l5_a_tool_call_only_reply_does_not_reset() {
    let mut sim = recovery_sim();
    let (mut branch, mut id) = (vec![Message::user("go")], 0);
    failing_branch_settles(&mut sim, &mut branch, &mut id, 5);
    branch.push(tool_call("x1", "read", json!({"path": "a"})));
    sim.settle_with(branch.clone());
    assert_eq!(sim.view().counters.loop_nudges, 1, "no reset");
    branch.pop();
    let mark = sim.mark();
    failing_branch_settles(&mut sim, &mut branch, &mut id, 1);
    let sent = sim.sent_since(mark);
    assert_eq!(sent.len(), 1);
    assert!(sent[0].text.contains("failed 6 times"), "{}", sent[0].text);
    assert!(
        !sent[0].text.contains("very same"),
        "a continuation, not a nudge: {}",
        sent[0].text
    );
}

#[test]
fn sar_s5_bare_successful_tool_result_is_retried_user_tail_is_not() {
    let mut sim = recovery_sim();
    let mut branch = vec![Message::user("go")];
    branch.extend(call_and_result("c1", "bash", json!({"command": "ls"}), false));
    sim.settle_with(branch);
    assert_eq!(sim.sent_of("stalled-agent-recovery-retry").len(), 1);
    sim.settle_with(vec![Message::user("only a user message")]);
    assert_eq!(sim.sent().len(), 1);
    let retry = sim.records("SAR-S8", LedgerKind::Action);
    assert_eq!(retry.len(), 1);
    assert!(retry[0].sent.is_some(), "the ledger keeps what was sent");
}

#[test]
fn sar_budgets_are_per_session_and_reset_by_session_start() {
    let mut sim = recovery_sim();
    for _ in 0..3 {
        sim.settle_with(vec![Message::user("go"), thinking_only()]);
    }
    assert_eq!(sim.view().counters.retries, 3);
    sim.session("s2");
    assert_eq!(sim.view().counters.retries, 0);
}
