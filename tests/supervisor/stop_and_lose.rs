//! Esc means stop, everywhere (ARB-ABORT, WAK-ESC, ARB-PARK), and a rule that loses a settle changes
//! nothing (ARB-LOSE). docs/supervision.md, "Arbitration".

use pokeshell_core::supervisor::{Block, Event, LedgerKind, Message, NotifyLevel, StopReason, texts};
use serde_json::json;

use super::sim::{Sim, call_and_result, thinking_only};

fn no_cooldown() -> Sim {
    Sim::configured(|config| config.global_cooldown_seconds = 0)
}

fn bash_fail(id: &str) -> Vec<Message> {
    call_and_result(id, "bash", json!({"command": "make test"}), true)
}

/// What pi writes for a bash call the user's Esc killed: the output so far, then the notice.
fn bash_aborted(id: &str) -> Vec<Message> {
    let mut result = Message::tool_result(id, "bash", true);
    result
        .content
        .push(Block::text("make: building...\n\nCommand aborted"));
    vec![
        super::sim::tool_call(id, "bash", json!({"command": "make test"})),
        result,
    ]
}

fn turn_end(sim: &mut Sim, branch: &[Message]) {
    sim.event(Event::TurnEnd {
        tail: branch.to_vec(),
    });
}

fn schedule_wakeup(sim: &mut Sim, delay_s: u64) {
    let args = json!({ "delay_seconds": delay_s, "prompt": "check the build" });
    sim.tool_call("w1", "schedule_wakeup", args);
}

#[test]
fn arb_abort_no_loop_nudge_is_steered_in_while_esc_unwinds_the_run() {
    let mut sim = no_cooldown();
    sim.agent_start();
    let mut branch = vec![Message::user("run the tests")];
    for i in 1..=4u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    // The fifth identical call is the one the user's Esc kills: pi ends its batch with an aborted
    // result and a turn_end before the run settles as aborted.
    branch.extend(bash_aborted("c5"));
    turn_end(&mut sim, &branch);
    sim.agent_end(StopReason::Aborted).settle_aborted();
    assert!(sim.sent().is_empty(), "{:?}", sim.sent());
}

#[test]
fn arb_abort_no_loop_nudge_inside_a_run_after_an_aborted_settle_until_the_user_types() {
    let mut sim = no_cooldown();
    sim.agent_start().agent_end(StopReason::Aborted).settle_aborted();
    // Something other than the user starts a run (another extension's message, say).
    sim.agent_start();
    let mut branch = vec![Message::user("run the tests")];
    for i in 1..=5u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    assert!(sim.sent().is_empty());
    sim.user_types();
    branch.extend(bash_fail("c6"));
    turn_end(&mut sim, &branch);
    assert_eq!(
        sim.sent_of(texts::CT_LOOP).len(),
        1,
        "once you typed, the loop guard speaks again"
    );
}

#[test]
fn sar_l4_inside_a_run_the_nudge_waits_for_the_shared_cooldown() {
    let mut sim = Sim::new();
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent_of(texts::CT_RETRY).len(), 1);
    sim.agent_start();
    let mut branch = vec![Message::user("go")];
    for i in 1..=5u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    assert!(sim.sent_of(texts::CT_LOOP).is_empty(), "inside the 5 s cooldown");
    let held = sim.records("SAR-L4", LedgerKind::Declined);
    assert!(held.iter().any(|r| r.reason.contains("held back")), "{held:?}");
    sim.advance(5);
    branch.extend(bash_fail("c6"));
    turn_end(&mut sim, &branch);
    let sent = sim.sent_of(texts::CT_LOOP);
    assert_eq!(sent.len(), 1, "the nudge held back goes out at a later turn");
    assert!(sent[0].text.contains("failed 6 times"), "{}", sent[0].text);
}

#[test]
fn arb_park_an_aborted_compaction_drops_the_resume_that_waited_for_it() {
    let mut sim = no_cooldown();
    sim.event(Event::CompactStart {
        reason: pokeshell_core::supervisor::CompactReason::Threshold,
        will_retry: false,
    });
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert!(
        sim.view().pending_resume.is_some(),
        "the retry waits for the compaction"
    );
    sim.event(Event::CompactFailed {
        reason: pokeshell_core::supervisor::CompactReason::Threshold,
        aborted: true,
        will_retry: false,
        error_message: None,
    });
    sim.run_for(60);
    assert!(sim.sent().is_empty(), "{:?}", sim.sent());
    assert!(sim.view().pending_resume.is_none());
    let cancelled = sim.records("SAR-S8", LedgerKind::Declined);
    assert!(
        cancelled.iter().any(|r| r.reason.contains("aborted")),
        "{cancelled:?}"
    );
}

#[test]
fn wak_esc_a_wakeup_due_after_esc_waits_until_you_type() {
    let mut sim = Sim::new();
    schedule_wakeup(&mut sim, 60);
    sim.agent_start().agent_end(StopReason::Aborted).settle_aborted();
    sim.run_for(120);
    assert!(sim.sent_of(texts::CT_WAKEUP).is_empty(), "held by your Esc");
    let view = sim.view();
    assert_eq!(view.wakeups.len(), 1);
    let held = view.wakeups[0].held.expect("shown as held");
    assert!(held.contains("stopped"), "{held}");
    assert_eq!(sim.sup.next_deadline(), None, "nothing to tick for while held");
    sim.user_types().run_for(1);
    assert_eq!(sim.sent_of(texts::CT_WAKEUP).len(), 1, "your input releases it");
}

#[test]
fn wak_esc_a_manual_poke_releases_a_held_wakeup_for_the_next_settle() {
    let mut sim = Sim::new();
    schedule_wakeup(&mut sim, 60);
    sim.agent_start().agent_end(StopReason::Aborted).settle_aborted();
    sim.run_for(120).manual_poke().run_for(1);
    assert_eq!(sim.sent().len(), 1, "the poke alone: one message per settle");
    sim.agent_start().agent_end(StopReason::Stop).settle().run_for(1);
    assert_eq!(sim.sent_of(texts::CT_WAKEUP).len(), 1);
}

#[test]
fn arb_lose_the_retry_give_up_does_not_fire_when_the_wake_wins() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.recovery.max_retries = 1;
    });
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.view().counters.retries, 1);
    // A compaction cuts the retried run; the run settles empty: the wake and the retry's give-up both
    // claim the settle, and the wake wins.
    sim.agent_start().compact(false);
    sim.agent_end(StopReason::Stop);
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.auto_pokes(), 1, "the wake poked");
    assert_eq!(sim.view().counters.retries, 1, "the retry count did not move");
    assert!(
        sim.notifications()
            .iter()
            .all(|(_, text, _)| *text != texts::notify_retry_give_up(1)),
        "no give-up announced"
    );
    let lost = sim.records("SAR-S7", LedgerKind::Declined);
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert!(
        lost[0].reason.contains("pre-empted by POKE-W4"),
        "{}",
        lost[0].reason
    );
}

#[test]
fn arb_lose_the_wake_give_up_does_not_fire_under_a_loop_claim() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.poke.post_compact_max_pokes = 0;
    });
    sim.agent_start().compact(false);
    let mut tail = vec![Message::user("go")];
    tail.extend(bash_fail("c1"));
    sim.agent_end(StopReason::ToolUse).settle_with(tail);
    assert_eq!(sim.sent_of(texts::CT_LOOP).len(), 1, "the loop guard won");
    assert!(sim.view().wake.is_some(), "the wake is still armed");
    assert!(
        sim.notifications()
            .iter()
            .all(|(level, text, _)| *level != NotifyLevel::Error || *text != texts::notify_poke_limit(0)),
        "no poke-limit give-up announced"
    );
    let lost = sim.records("POKE-W4", LedgerKind::Declined);
    assert!(
        lost.iter()
            .any(|r| r.reason.contains("give-up was pre-empted by SAR-L4")),
        "{lost:?}"
    );
}
