//! The no-progress rails on real pi 1.6.0 against the scripted model [GUARD-L1, GUARD-L2, GUARD-L3,
//! GUARD-E1..E3]: the same call with the same result, two calls taking turns, and the same reply
//! again and again each climb the ladder: a message that names the repetition (what the model
//! receives), a handoff to a fresh context (a compaction, then a message), then the run is stopped
//! and the person asked (the footer, the side pane). Healthy twins: a long run of varied calls, and
//! an agent asked to poll CI with wakeups, are never touched.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::matrix::{Matrix, trailing_user_text};
use support::{Step, model_server};

const SUMMARY: &str = "## Goal\nList the files.\n\n## Next Steps\n1. Try another way.";

/// Counts the model calls that came before each rung: the chat requests up to the one that carried
/// the rung's message (or, for the stop, all of them).
fn rung_at(m: &Matrix, text: &str) -> usize {
    m.wait_trailing(text) + 1
}

/// The ledger's guard records, rule and reason, for the report and the failure messages.
fn guard_records(m: &Matrix) -> Vec<(String, String)> {
    m.ledger()
        .iter()
        .filter(|r| r["rule"].as_str().is_some_and(|r| r.starts_with("GUARD-")))
        .map(|r| {
            (
                r["rule"].as_str().unwrap_or_default().to_string(),
                r["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Climbs the whole ladder and checks each rung: the message, the handoff and its message, the stop.
fn climbs_the_ladder(m: &mut Matrix, rail: &str, evidence: &str) {
    let first = rung_at(m, "[Guard] pokeshell sees no progress");
    let record = m.wait_record("GUARD-E1", "action", rail);
    assert!(
        record["reason"].as_str().unwrap_or_default().contains(evidence),
        "{record}"
    );
    m.wait_record("GUARD-E2", "action", "handing off to a fresh context");
    let second = rung_at(m, "[Guard] Your context was handed off");
    m.wait_record("HO-T1", "outcome", "the handoff compaction finished");
    m.wait_footer("⛔ runaway");
    m.wait_side("paused:");
    m.wait_record(
        "GUARD-E3",
        "action",
        "and asks you to let it go on or leave it stopped",
    );
    // The stop comes at a tool call's end; pi may already have sent the next model call, which the
    // abort cuts short. Once pi is idle, nothing more reaches the model.
    let at_stop = m.chat().len();
    m.wait_side("● idle");
    m.assert_model_quiet(Duration::from_secs(3));
    let third = m.chat().len();
    assert!(
        third <= at_stop + 1,
        "one call past the stop at most: {at_stop} then {third}"
    );
    eprintln!(
        "{rail}: model calls before rung 1: {first}, before rung 2's message: {second}, before the stop: {third}; records: {:?}",
        guard_records(m)
    );
    assert!(first < second && second < third, "{first} {second} {third}");
}

#[test]
fn guard_l1_the_same_call_with_the_same_result_climbs_message_handoff_stop() {
    let server = model_server();
    server.set_default(Step::bash("ls"));
    server.set_default_summary(Step::text(SUMMARY));
    let mut m = Matrix::builder()
        .settings(json!({
            "pokeshell": {"sameCallRepeats": 3},
            "compaction": {"keepRecentTokens": 1}
        }))
        .start(server);
    m.submit("list the files");
    climbs_the_ladder(&mut m, "GUARD-L1", "the same call `bash ls` 3 times in a row");
}

#[test]
fn guard_l2_two_calls_taking_turns_climb_the_ladder() {
    let server = model_server();
    let steps: Vec<Step> = (0..40)
        .map(|i| Step::bash(if i % 2 == 0 { "echo A" } else { "echo B" }))
        .collect();
    server.push_all(steps);
    server.set_default(Step::bash("echo A"));
    server.set_default_summary(Step::text(SUMMARY));
    let mut m = Matrix::builder()
        .settings(json!({
            "pokeshell": {"alternatingRepeats": 2},
            "compaction": {"keepRecentTokens": 1}
        }))
        .start(server);
    m.submit("check the two values");
    climbs_the_ladder(&mut m, "GUARD-L2", "two calls taking turns");
}

#[test]
fn guard_l3_the_same_reply_again_and_again_climbs_the_ladder() {
    let server = model_server();
    // A model that announces the step and never takes it: each promise poke gets the same words.
    server.set_default(Step::text("Now I'll run the tests:"));
    server.set_default_summary(Step::text(SUMMARY));
    let mut m = Matrix::builder()
        .settings(json!({
            "pokeshell": {"sameReplyRepeats": 2},
            "stalledAgentRecovery": {"maxPromisePokes": 10},
            "compaction": {"keepRecentTokens": 1}
        }))
        .start(server);
    m.submit("run the tests");
    climbs_the_ladder(&mut m, "GUARD-L3", "the same reply 2 times in a row");
}

#[test]
fn guard_l1_healthy_twin_a_long_run_of_varied_calls_is_never_touched() {
    let server = model_server();
    let steps: Vec<Step> = (0..30)
        .map(|i| Step::bash(format!("echo building part {i}")))
        .chain([Step::text("The build is done.")])
        .collect();
    server.push_all(steps);
    let mut m = Matrix::builder().start(server);
    m.submit("build all thirty parts");
    m.wait_text("The build is done.");
    m.assert_model_quiet(Duration::from_secs(2));
    assert_eq!(m.chat().len(), 31);
    assert!(guard_records(&m).is_empty(), "{:?}", guard_records(&m));
}

#[test]
fn guard_p1_healthy_twin_an_agent_asked_to_poll_ci_is_never_touched() {
    let server = model_server();
    // Each wakeup: check CI (pending), schedule the next check, say so in the same words.
    let round = || {
        [
            Step::bash("echo 'ci: pending'"),
            Step::tool(
                "schedule_wakeup",
                json!({"delay_seconds": 1, "prompt": "Check CI again.", "reason": "poll CI"}),
            ),
            Step::text("CI is still pending; I will check again shortly."),
        ]
    };
    let rounds = 6;
    server.push_all((0..rounds).flat_map(|_| round()));
    server.push(Step::text("CI passed."));
    let mut m = Matrix::builder()
        .settings(json!({"pokeshell": {"wakeupMinSeconds": 1}}))
        .start(server);
    m.submit("poll CI until it is done");
    let found = m.server.wait_until(
        "every poll round and the last check",
        Duration::from_secs(60),
        |reqs| {
            reqs.iter()
                .filter_map(trailing_user_text)
                .filter(|t| t.contains("Check CI again."))
                .count()
                >= rounds
        },
    );
    if let Err(e) = found {
        m.pty.fail(&e.to_string());
    }
    m.wait_text("CI passed.");
    let acted: Vec<(String, String)> = guard_records(&m)
        .into_iter()
        .filter(|(rule, _)| rule != "GUARD-P1")
        .collect();
    assert!(acted.is_empty(), "a poll is not a loop: {acted:?}");
    let guard_texts: Vec<Value> = m
        .trailing_user_texts()
        .into_iter()
        .filter(|t| t.contains("[Guard]"))
        .map(Value::from)
        .collect();
    assert!(guard_texts.is_empty(), "{guard_texts:?}");
}
