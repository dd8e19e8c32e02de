//! The stall matrix, wakeups: the model schedules its own
//! return through the bridge's `schedule_wakeup` tool; pokeshell keeps the timer, delivers the prompt
//! busy-gated, cancels on request, and re-arms a pending wakeup after a restart. The 60 s minimum is
//! lowered with the documented `pokeshell.wakeupMinSeconds` test setting.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::matrix::{Matrix, side_flat, trailing_user_text};
use support::shell::footer;
use support::{Step, WAIT, model_server};

fn fast_wakeups() -> Value {
    json!({"pokeshell": {"wakeupMinSeconds": 1}})
}

fn schedule(delay: u64, prompt: &str, reason: &str) -> Step {
    Step::tool(
        "schedule_wakeup",
        json!({"delay_seconds": delay, "prompt": prompt, "reason": reason}),
    )
}

/// The text of every tool result the model received, in order.
fn tool_results(m: &Matrix) -> Vec<String> {
    let last = m.chat().pop();
    last.map(|r| {
        r.tool_results()
            .iter()
            .map(|t| match &t["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    })
    .unwrap_or_default()
}

#[test]
fn wak_t3_a_wakeup_scheduled_then_idle_starts_a_turn_when_due() {
    let server = model_server();
    server.push_all([
        schedule(2, "Check whether the build finished.", "the build takes a while"),
        Step::text("I will check back soon."),
        Step::text("The build finished fine."),
    ]);
    let mut m = Matrix::builder().settings(fast_wakeups()).start(server);
    m.submit("start the build and check on it later");
    m.wait_text("I will check back soon.");
    m.wait_side("wakeups wake-1 in");
    m.wait_side("wake-1 in 1s the build takes a while");
    let index = m.wait_trailing("Check whether the build finished.");
    let delivered = trailing_user_text(&m.chat()[index]).unwrap_or_default();
    assert_eq!(
        delivered,
        "Check whether the build finished.\n\n[scheduled wakeup: the build takes a while]"
    );
    m.wait_text("The build finished fine.");
    m.wait_record("WAK-T3", "action", "wakeup wake-1 fired");
    m.wait_side("wakeup wake-1 fired");
    assert!(
        tool_results(&m)
            .iter()
            .any(|t| t.contains("Wakeup wake-1 is set: it fires in 2s (the build takes a while).")),
        "the model got pokeshell's reply: {:?}",
        tool_results(&m)
    );
    m.pty.wait_until("the wakeup gone from the side pane", WAIT, |s| {
        !side_flat(s).contains("wakeups wake-1")
    });
    m.assert_model_quiet(Duration::from_secs(2));
    assert_eq!(m.chat().len(), 3);
}

#[test]
fn wak_p3_a_wakeup_due_while_busy_waits_for_the_run_as_a_follow_up() {
    let server = model_server();
    server.push_all([
        schedule(1, "Look at the test log.", "tests"),
        Step::bash("sleep 3"),
        Step::text("Slept through it."),
        Step::text("The test log looks fine."),
    ]);
    let mut m = Matrix::builder().settings(fast_wakeups()).start(server);
    m.submit("schedule a look at the tests, then sleep");
    // Due after 1 s, while `sleep 3` still runs.
    m.pty.wait_until("the wakeup firing while bash runs", WAIT, |s| {
        footer(s).contains("⏳ bash") && side_flat(s).contains("wakeup wake-1 fired")
    });
    let index = m.wait_trailing("Look at the test log.");
    m.wait_text("The test log looks fine.");
    let chat = m.chat();
    let before = &chat[index - 1];
    assert_eq!(
        before.messages().last().map(|msg| msg["role"].clone()),
        Some(json!("tool")),
        "the request after the tool carried only its result; the wakeup came as a follow-up after it"
    );
    assert_eq!(index, 3, "prompt, tool results, the answer, then the wakeup");
}

#[test]
fn wak_t2_a_cancelled_wakeup_never_fires() {
    let server = model_server();
    server.push_all([
        schedule(3, "Re-run the flaky test.", "flaky"),
        Step::tool("cancel_wakeup", json!({"id": "wake-1"})),
        Step::text("Cancelled the reminder."),
    ]);
    let mut m = Matrix::builder().settings(fast_wakeups()).start(server);
    m.submit("set a reminder, then cancel it");
    m.wait_text("Cancelled the reminder.");
    m.wait_record("WAK-T2", "action", "the agent cancelled wakeup wake-1");
    m.wait_side("the agent cancelled wakeup wake-1");
    let results = tool_results(&m);
    assert!(
        results.iter().any(|t| t.contains("Wakeup wake-1 is set"))
            && results.iter().any(|t| t.contains("Wakeup wake-1 cancelled.")),
        "{results:?}"
    );
    assert!(m.pty.with_screen(|s| !side_flat(s).contains("wakeups")));
    m.assert_model_quiet(Duration::from_secs(4));
    assert!(m.records("WAK-T3", "action").is_empty(), "it never fired");
}

#[test]
fn wak_t5_a_pending_wakeup_survives_a_pokeshell_restart() {
    let server = model_server();
    server.push_all([
        schedule(6, "Resume the migration.", "restart test"),
        Step::text("Scheduled the migration check."),
        Step::text("Migration resumed."),
    ]);
    let mut m = Matrix::builder().settings(fast_wakeups()).start(server);
    m.submit("plan the migration check");
    m.wait_text("Scheduled the migration check.");
    m.wait_side("wakeups wake-1 in");
    // Checked before the restart, not after: a restart slower than the delay (a loaded machine)
    // finds the wakeup due, and the new pokeshell rightly fires it as soon as it re-arms it.
    assert!(
        m.records("WAK-T3", "action").is_empty(),
        "it had not fired before the restart"
    );
    m.restart(&["--continue"]);
    m.wait_record(
        "WAK-T5",
        "action",
        "re-armed pending wakeups from the session: wake-1",
    );
    let index = m.wait_trailing("Resume the migration.");
    m.wait_text("Migration resumed.");
    m.wait_side("wakeup wake-1 fired");
    assert_eq!(
        m.trailing_user_texts()
            .iter()
            .filter(|t| t.starts_with("Resume the migration."))
            .count(),
        1,
        "it fires once"
    );
    assert_eq!(index, 2);
    m.assert_model_quiet(Duration::from_secs(2));
}
