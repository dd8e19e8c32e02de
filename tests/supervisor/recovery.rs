//! pi-stalled-agent-recovery [SAR-*]: the original extension's 36 test cases. 1–26 test the pure detectors; 27–29 the
//! settings the supervisor accepts; 30–36 the wiring through the supervisor. In the wiring tests the
//! shared cooldown between automatic messages is 0, to isolate the recovery rules (the cooldown has its
//! own tests in `arbiter`).

use pokeshell::supervisor::recovery::emptiness::{EmptyReply, evaluate_empty};
use pokeshell::supervisor::recovery::loop_guard::{
    LoopDecision, ToolLoop, decide_loop_action, detect_tool_loop,
};
use pokeshell::supervisor::recovery::signature::{stable_json, tool_signature};
use pokeshell::supervisor::{
    Block, DeliverAs, Event, LedgerKind, Message, NotifyLevel, RecoveryConfig, StopReason,
};
use serde_json::json;

use super::sim::{Sim, call_and_result, text_reply, thinking_only, tool_call};

fn recovery_sim() -> Sim {
    Sim::configured(|config| config.global_cooldown_seconds = 0)
}

fn bash_fail(id: &str) -> Vec<Message> {
    call_and_result(id, "bash", json!({"command": "make test"}), true)
}

fn count(messages: &[Message]) -> Option<u32> {
    detect_tool_loop(messages).map(|found| found.count)
}

// evaluateEmptyResponse (SAR-D1)

#[test]
fn sar_01_d1_thinking_only_is_empty() {
    assert_eq!(
        evaluate_empty(Some(&thinking_only())),
        Some(EmptyReply::ThinkingOnly)
    );
    assert!(EmptyReply::ThinkingOnly.reason().contains("reasoning"));
}

#[test]
fn sar_02_d1_tool_call_is_not_empty() {
    assert_eq!(
        evaluate_empty(Some(&tool_call("c1", "bash", json!({"command": "ls"})))),
        None
    );
}

#[test]
fn sar_03_d1_bare_tool_result_is_empty() {
    let result = Message::tool_result("c1", "bash", true);
    assert_eq!(evaluate_empty(Some(&result)), Some(EmptyReply::BareToolResult));
    assert!(EmptyReply::BareToolResult.reason().contains("tool result"));
}

#[test]
fn sar_04_d1_text_is_not_empty() {
    assert_eq!(evaluate_empty(Some(&text_reply("All done."))), None);
}

#[test]
fn sar_05_d1_api_error_is_not_empty() {
    let error = Message::assistant(StopReason::Error, vec![]).with_error("boom");
    assert_eq!(evaluate_empty(Some(&error)), None);
    assert_eq!(evaluate_empty(None), None);
    let whitespace = Message::assistant(StopReason::Stop, vec![Block::text("  \n")]);
    assert_eq!(evaluate_empty(Some(&whitespace)), Some(EmptyReply::Empty));
}

// stableStringify / toolCallSignature (SAR-L1)

#[test]
fn sar_06_l1_stable_json_ignores_key_order_at_every_depth() {
    let a = stable_json(&json!({"b": 1, "a": {"d": 2, "c": 3}}));
    let b = stable_json(&json!({"a": {"c": 3, "d": 2}, "b": 1}));
    assert_eq!(a, b);
    assert_eq!(a, r#"{"a":{"c":3,"d":2},"b":1}"#);
    assert_eq!(
        stable_json(&json!([2, 1, "x\"y"])),
        r#"[2,1,"x\"y"]"#,
        "arrays keep order, strings are escaped"
    );
}

#[test]
fn sar_07_l1_different_arguments_differ() {
    assert_ne!(
        tool_signature("bash", &json!({"command": "ls"})),
        tool_signature("bash", &json!({"command": "pwd"}))
    );
}

#[test]
fn sar_08_l1_same_arguments_in_another_order_are_one_signature() {
    assert_eq!(
        tool_signature("read", &json!({"path": "/x", "offset": 1})),
        tool_signature("read", &json!({"offset": 1, "path": "/x"}))
    );
    assert_eq!(
        tool_signature("read", &serde_json::Value::Null),
        "read\n{}",
        "missing arguments count as {{}}"
    );
}

#[test]
fn sar_09_l1_different_tools_differ() {
    let args = json!({"path": "/x"});
    assert_ne!(tool_signature("read", &args), tool_signature("write", &args));
}

// detectToolLoop (SAR-L2)

#[test]
fn sar_10_l2_assistant_tail_is_no_loop() {
    let mut messages = bash_fail("c1");
    messages.push(text_reply("Giving up."));
    assert_eq!(detect_tool_loop(&messages), None);
}

#[test]
fn sar_11_l2_successful_result_is_no_loop() {
    assert_eq!(
        detect_tool_loop(&call_and_result("c1", "bash", json!({"command": "ls"}), false)),
        None
    );
}

#[test]
fn sar_12_l2_one_failure_counts_one() {
    let found = detect_tool_loop(&bash_fail("c1")).expect("a loop record");
    assert_eq!(
        found,
        ToolLoop {
            signature: tool_signature("bash", &json!({"command": "make test"})),
            tool_name: "bash".into(),
            count: 1
        }
    );
}

#[test]
fn sar_13_l2_two_identical_failures_count_two() {
    let messages = [bash_fail("c1"), bash_fail("c2")].concat();
    assert_eq!(count(&messages), Some(2));
}

#[test]
fn sar_14_l2_changed_arguments_start_over() {
    let messages = [
        call_and_result("c1", "bash", json!({"command": "make test"}), true),
        call_and_result("c2", "bash", json!({"command": "make test -j4"}), true),
    ]
    .concat();
    assert_eq!(count(&messages), Some(1));
}

#[test]
fn sar_15_l2_another_tools_success_does_not_break_the_run() {
    let messages = [
        bash_fail("c1"),
        call_and_result("r1", "read", json!({"path": "a"}), false),
        bash_fail("c2"),
    ]
    .concat();
    assert_eq!(count(&messages), Some(2));
}

fn sibling_batch(grep_failed: bool) -> Vec<Message> {
    let mut messages = bash_fail("c1");
    messages.push(Message::assistant(
        StopReason::ToolUse,
        vec![
            Block::tool_call("g1", "grep", json!({"pattern": "x"})),
            Block::tool_call("c2", "bash", json!({"command": "make test"})),
        ],
    ));
    messages.push(Message::tool_result("g1", "grep", grep_failed));
    messages.push(Message::tool_result("c2", "bash", true));
    messages
}

#[test]
fn sar_16_l2_sibling_call_in_the_same_batch_succeeds() {
    assert_eq!(count(&sibling_batch(false)), Some(2));
}

// decideLoopAction (SAR-L3), threshold 2, max nudges 3

#[test]
fn sar_17_l3_below_threshold_none() {
    assert_eq!(decide_loop_action(1, 2, 3, 0), LoopDecision::None { crossing: 0 });
}

#[test]
fn sar_18_l3_first_crossing_nudges() {
    assert_eq!(decide_loop_action(2, 2, 3, 0), LoopDecision::Nudge { number: 1 });
}

#[test]
fn sar_19_l3_same_crossing_none() {
    assert_eq!(decide_loop_action(3, 2, 3, 1), LoopDecision::None { crossing: 1 });
}

#[test]
fn sar_20_l3_second_crossing_nudges_two() {
    assert_eq!(decide_loop_action(4, 2, 3, 1), LoopDecision::Nudge { number: 2 });
    assert_eq!(
        decide_loop_action(10, 5, 3, 0),
        LoopDecision::Nudge { number: 2 },
        "a jump skips numbers"
    );
}

#[test]
fn sar_21_l3_past_the_last_nudge_gives_up_once() {
    assert_eq!(
        decide_loop_action(8, 2, 3, 3),
        LoopDecision::GiveUp { crossing: 4 }
    );
    assert_eq!(
        decide_loop_action(10, 2, 3, 4),
        LoopDecision::None { crossing: 5 }
    );
}

// Walk semantics (SAR-L2)

#[test]
fn sar_22_l2_failed_sibling_does_not_break_the_run() {
    assert_eq!(count(&sibling_batch(true)), Some(2));
}

#[test]
fn sar_23_l2_recovery_follow_ups_are_invisible() {
    let messages = [
        bash_fail("c1"),
        vec![Message::custom("stalled-agent-recovery-loop", "change approach")],
        bash_fail("c2"),
    ]
    .concat();
    assert_eq!(count(&messages), Some(2));
}

#[test]
fn sar_24_l2_genuine_user_message_breaks_the_run() {
    let messages = [
        bash_fail("c1"),
        vec![Message::user("hey, look at this")],
        bash_fail("c2"),
    ]
    .concat();
    assert_eq!(count(&messages), Some(1));
}

#[test]
fn sar_25_l2_every_custom_message_is_invisible_to_the_walk() {
    // isFighterFollowUp: in pi, custom messages are not message entries; pokeshell's own pokes and
    // wakeups are custom messages too, so none of them breaks a count.
    for custom_type in [
        "stalled-agent-recovery-retry",
        "stalled-agent-recovery-loop",
        "poke",
        "wakeup",
    ] {
        let messages = [
            bash_fail("c1"),
            vec![Message::custom(custom_type, "x")],
            bash_fail("c2"),
        ]
        .concat();
        assert_eq!(count(&messages), Some(2), "{custom_type}");
    }
}

#[test]
fn sar_26_l2_user_tool_result_and_other_roles_are_not_follow_ups() {
    let with_user = [bash_fail("c1"), vec![Message::user("plain")], bash_fail("c2")].concat();
    assert_eq!(count(&with_user), Some(1), "a plain user message is genuine");
    let with_bash_execution = [
        bash_fail("c1"),
        vec![Message::other("bashExecution")],
        bash_fail("c2"),
    ]
    .concat();
    assert_eq!(
        count(&with_bash_execution),
        Some(1),
        "another role stops the walk"
    );
    let unknown_call = [vec![Message::tool_result("zz", "bash", true)], bash_fail("c2")].concat();
    assert_eq!(
        count(&unknown_call),
        Some(1),
        "a result without its call stops the walk"
    );
}

// Settings (SAR-C1). Reading the file is the configuration module's job; the supervisor's part is the
// defaults and never misbehaving on a value outside the range.

#[test]
fn sar_27_c1_defaults() {
    assert_eq!(
        RecoveryConfig::default(),
        RecoveryConfig {
            max_retries: 5,
            loop_threshold: 5,
            max_loop_nudges: 3
        }
    );
}

#[test]
fn sar_29_c1_out_of_range_loop_settings_fall_back_to_defaults() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.recovery = RecoveryConfig {
            max_retries: 0,
            loop_threshold: 0,
            max_loop_nudges: 0,
        };
    });
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert!(sim.sent().is_empty(), "maxRetries 0 turns the retry off");
    let mut branch = vec![Message::user("go")];
    for index in 0..5 {
        branch.extend(bash_fail(&format!("c{index}")));
        sim.settle_with(branch.clone());
    }
    let sent = sim.sent_of("stalled-agent-recovery-loop");
    assert_eq!(sent.len(), 5, "the loop guard stays on");
    assert!(
        sent[4].text.contains("with the very same arguments"),
        "threshold 0 behaves as 5: {}",
        sent[4].text
    );
    assert!(
        !sent[4].text.contains("Stop calling"),
        "max nudges 0 behaves as 3"
    );
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

// The loop guard inside one run (pokeshell's addition: pi does not settle between tool calls).

fn turn_end(sim: &mut Sim, tail: &[Message]) {
    sim.event(Event::TurnEnd { tail: tail.to_vec() });
}

#[test]
fn sar_l4_inside_a_run_nudges_are_steered_in_at_each_threshold_then_it_gives_up() {
    let mut sim = recovery_sim();
    sim.agent_start();
    let mut branch = vec![Message::user("run the tests")];
    let mut loop_sends = Vec::new();
    for i in 1..=20u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
        loop_sends.push(sim.sent_of("stalled-agent-recovery-loop").len());
    }
    let sent = sim.sent_of("stalled-agent-recovery-loop");
    // Nudges at 5, 10 and 15 (the last one says stop); no continuation messages inside a run.
    assert_eq!(sent.len(), 3, "{loop_sends:?}");
    assert!(
        sent.iter()
            .all(|s| s.deliver_as == DeliverAs::Steer && !s.display)
    );
    assert!(sent[0].text.contains("failed 5 times"), "{}", sent[0].text);
    assert!(sent[1].text.contains("failed 10 times"));
    assert!(sent[2].text.contains("failed 15 times") && sent[2].text.contains("Stop calling it"));
    assert_eq!(loop_sends[3], 0, "nothing before the fifth failure");
    assert_eq!(loop_sends[4], 1);
    // The twentieth failure (the fourth crossing) gives up with a desktop notification.
    let give_up = sim
        .notifications()
        .into_iter()
        .filter(|(level, text, desktop)| {
            *level == NotifyLevel::Error && *desktop && text.contains("no longer")
        })
        .count();
    assert_eq!(give_up, 1);
}

#[test]
fn sar_l4_a_nudge_given_inside_the_run_is_not_repeated_at_its_settle() {
    let mut sim = recovery_sim();
    sim.agent_start();
    let mut branch = vec![Message::user("run the tests")];
    for i in 1..=5u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    assert_eq!(sim.sent_of("stalled-agent-recovery-loop").len(), 1);
    // The run then settles on that same failure (a terminated batch): the nudge is on its way, so the
    // settle adds nothing, neither a second nudge #1 nor a continuation.
    sim.agent_end(StopReason::ToolUse).settle_with(branch.clone());
    assert_eq!(sim.sent_of("stalled-agent-recovery-loop").len(), 1);
    let quiet = sim.records("SAR-L4", LedgerKind::Declined);
    assert!(
        quiet.iter().any(|r| r.reason.contains("already spoke")),
        "{quiet:?}"
    );
    // A later failure at its settle gets the usual continuation again.
    branch.extend(bash_fail("c6"));
    sim.agent_start()
        .agent_end(StopReason::ToolUse)
        .settle_with(branch.clone());
    let sent = sim.sent_of("stalled-agent-recovery-loop");
    assert_eq!(sent.len(), 2);
    assert!(sent[1].text.contains("failed 6 times so far"), "{}", sent[1].text);
}

#[test]
fn sar_l4_inside_a_run_a_changed_call_or_a_success_breaks_the_count() {
    let mut sim = recovery_sim();
    sim.agent_start();
    let mut branch = vec![Message::user("go")];
    for i in 1..=4u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    branch.extend(call_and_result(
        "c5",
        "bash",
        json!({"command": "make test -j4"}),
        true,
    ));
    turn_end(&mut sim, &branch);
    branch.extend(bash_fail("c6"));
    turn_end(&mut sim, &branch);
    assert!(sim.sent_of("stalled-agent-recovery-loop").is_empty());
}

#[test]
fn sar_l4_inside_a_run_nothing_happens_while_disabled() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.poke.enabled = false;
    });
    sim.agent_start();
    let mut branch = vec![Message::user("go")];
    for i in 1..=5u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    assert!(sim.sent().is_empty());
}
