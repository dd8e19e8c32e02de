//! pi-stalled-agent-recovery's pure detectors [SAR-D1, SAR-L1..L3] and settings [SAR-C1]: cases 1–29
//! of the original extension's 36 test cases (30–36, the wiring, are in `recovery`).

use pokeshell_core::supervisor::recovery::emptiness::{EmptyReply, evaluate_empty};
use pokeshell_core::supervisor::recovery::loop_guard::{
    LoopDecision, ToolLoop, decide_loop_action, detect_tool_loop,
};
use pokeshell_core::supervisor::recovery::signature::{stable_json, tool_signature};
use pokeshell_core::supervisor::{Block, Message, RecoveryConfig, StopReason};
use serde_json::json;

use super::sim::{Sim, call_and_result, text_reply, thinking_only, tool_call};

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
            max_loop_nudges: 3,
            promise_poke: true,
            max_promise_pokes: 2,
            promise_second_opinion: false,
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
            ..RecoveryConfig::default()
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
