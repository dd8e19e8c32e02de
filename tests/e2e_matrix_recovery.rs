//! The stall matrix, stalled-agent recovery: a reply
//! with nothing but reasoning, and one tool call failing the same way again and again. Real pi 1.6.0
//! inside pokeshell, the scripted model.

mod support;

use std::time::Duration;

use serde_json::json;
use support::matrix::Matrix;
use support::{Step, model_server};

const RETRY: &str = "Your last reply ended without any visible output";

#[test]
fn sar_s7_a_thinking_only_reply_is_retried_max_retries_times_then_reported() {
    let server = model_server();
    server.set_default(Step::thinking("Weighing the options, still weighing them."));
    let mut m = Matrix::builder()
        .settings(json!({"stalledAgentRecovery": {"maxRetries": 2}}))
        .start(server);
    m.submit("pick an option");
    m.wait_footer("✋ No usable reply after 2 attempts; pokeshell stops retrying");
    m.wait_record("SAR-S7", "declined", "2 retries were sent already");
    m.wait_side("2 retries were sent already");
    m.assert_model_quiet(Duration::from_secs(3));
    let trailing = m.trailing_user_texts();
    assert_eq!(trailing.len(), 3, "the prompt and two retries: {trailing:?}");
    assert_eq!(trailing[0], "pick an option");
    assert!(trailing[1..].iter().all(|t| t.starts_with(RETRY)), "{trailing:?}");
    assert_eq!(m.records("SAR-S8", "action").len(), 2);
}

/// A test extension in the style of pi's own example (docs/extensions.md, `tool_call`): it blocks
/// `rm -rf` and ends the tool batch (`terminate: true`), so pi settles on the failed tool result.
const GUARD: &str = r#"
export default function (pi: any) {
	pi.on("tool_call", (event: any) => {
		if (event.toolName === "bash" && String(event.input?.command ?? "").includes("rm -rf")) {
			return { block: true, reason: "rm -rf is not allowed in this folder", terminate: true };
		}
		return undefined;
	});
}
"#;

/// A model that answers every request with the same blocked call.
fn start_loop(settings: serde_json::Value) -> Matrix {
    let server = model_server();
    server.set_default(Step::bash("rm -rf build"));
    let mut m = Matrix::builder()
        .settings(json!({"pokeshell": {"injectionCooldownSeconds": 0}}))
        .settings(settings)
        .extension(GUARD)
        .start(server);
    m.submit("clean the build folder");
    m
}

#[test]
fn sar_l4_five_identical_failing_calls_draw_the_loop_nudge() {
    let m = start_loop(json!({}));
    m.wait_trailing("has now failed 5 times with the very same arguments");
    let trailing = m.trailing_user_texts();
    assert_eq!(trailing[0], "clean the build folder");
    for (n, text) in trailing[1..5].iter().enumerate() {
        let count = n + 1;
        let times = if count == 1 { "time" } else { "times" };
        assert!(
            text.starts_with(&format!("The bash call has failed {count} {times} so far.")),
            "continuation {count}: {text:?}"
        );
    }
    assert!(
        trailing[5].contains("Do not send it again unchanged"),
        "the first nudge, not the last: {:?}",
        trailing[5]
    );
    m.wait_footer("'bash' failed 5 times with the same arguments: told the agent to change course");
    m.wait_side("nudges 1/3");
}

#[test]
fn sar_l4_continuation_nudge_final_nudge_then_give_up() {
    let mut m = start_loop(json!({"stalledAgentRecovery": {"loopThreshold": 2, "maxLoopNudges": 2}}));
    // Failures 1–4 each restart the agent; after the final nudge (4) failure 5 is met with silence.
    m.wait_record("SAR-L4", "declined", "the final nudge was sent already");
    m.wait_side("the final nudge was sent already, so pokeshell stays quiet");
    m.assert_model_quiet(Duration::from_secs(2));
    let trailing = m.trailing_user_texts();
    assert_eq!(
        trailing.len(),
        5,
        "the prompt and four loop messages: {trailing:?}"
    );
    assert!(
        trailing[1].starts_with("The bash call has failed 1 time so far."),
        "{trailing:?}"
    );
    assert!(
        trailing[2].starts_with("The bash call has now failed 2 times")
            && trailing[2].contains("Do not send it again unchanged"),
        "nudge 1: {:?}",
        trailing[2]
    );
    assert!(
        trailing[3].starts_with("The bash call has failed 3 times so far."),
        "{trailing:?}"
    );
    assert!(
        trailing[4].starts_with("The bash call has now failed 4 times")
            && trailing[4].contains("Stop calling it"),
        "the final nudge: {:?}",
        trailing[4]
    );
    // A manual poke is a custom message: invisible to the count, so the next failure is the 6th.
    m.pty.send("\x1dp");
    m.wait_footer("✋ 'bash' still fails after 2 nudges; pokeshell no longer steps in on this loop");
    m.wait_record(
        "SAR-L4",
        "declined",
        "gave up on the bash loop: 6 identical failures after 2 nudges",
    );
    m.assert_model_quiet(Duration::from_secs(2));
    let trailing = m.trailing_user_texts();
    assert_eq!(trailing.len(), 6, "{trailing:?}");
    assert!(trailing[5].starts_with("[Poke] The user poked"), "{trailing:?}");
}

/// pokeshell's addition to the loop guard: a model that repeats a failing call inside one run never
/// lets the run settle (pi goes on after every tool result), so the nudge is steered in between turns.
/// pi waits for the bridge's `turn_end` until pokeshell has steered the nudge in, so the nudge reaches
/// the model with the very next request.
#[test]
fn sar_l4_inside_one_run_the_nudge_is_steered_in_between_turns() {
    let server = model_server();
    server.set_default(Step::bash("ls /no-such-dir-for-pokeshell"));
    let mut m = Matrix::builder()
        .settings(json!({"pokeshell": {"injectionCooldownSeconds": 0}}))
        .start(server);
    m.submit("list the folder");
    m.wait_record("SAR-L4", "action", "inside one run");
    let n = m.wait_trailing("has now failed 5 times with the very same arguments");
    let chats = m.chat();
    let with_nudge = &chats[n];
    assert_eq!(
        with_nudge.tool_results().len(),
        5,
        "the request right after the fifth failure"
    );
    let user_texts = with_nudge.user_texts();
    assert_eq!(
        user_texts.first().map(String::as_str),
        Some("list the folder"),
        "still the first prompt's run"
    );
    assert!(
        chats[..n]
            .iter()
            .all(|c| !c.last_user_text().unwrap_or_default().contains("so far")),
        "no continuation messages inside the run"
    );
    m.wait_footer("'bash' failed 5 times with the same arguments: told the agent to change course");
}
