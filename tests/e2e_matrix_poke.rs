//! The stall matrix, post-compaction rows: real pi 1.6.0 inside pokeshell, the scripted model, and
//! for each row what pokeshell shows and what the model received.
//! Compactions use mock-tiny (16k window, threshold 8000 tokens) as docs/pi-facts.md describes.

mod support;

use std::time::Duration;

use support::matrix::{Matrix, long_text, queue_compaction_history};
use support::shell::footer;
use support::{Step, model_server};

const REJECTED: &str = "request after compaction rejected";

/// The stall of docs/pi-facts.md (Compactions): the tool call's 9000 tokens make pi compact between
/// turns; the request after the compaction fails (held back `fail_delay_ms` first, so the wake can be seen).
fn start_mid_run_stall(fail_delay_ms: u64, settings: serde_json::Value) -> Matrix {
    start_stall(
        model_server(),
        Step::error(400, REJECTED).with_delay_ms(fail_delay_ms),
        settings,
    )
}

#[test]
fn poke_w4_mid_run_compaction_then_a_failed_request_gets_one_resume_poke_and_work_goes_on() {
    let m = start_mid_run_stall(1500, serde_json::json!({}));
    // Between the compaction and the failed request the wake is armed and watching.
    m.wait_footer("👀 post-compact");
    // The answer to the poke is held back a little so the footer's `📤 resume` can be seen.
    m.server
        .push(Step::text("Resuming the long job where it stopped.").with_delay_ms(1500));
    m.wait_footer("📤 resume");
    m.wait_text("Resuming the long job where it stopped.");
    m.wait_record("POKE-W4", "outcome", "progress");
    m.wait_side("sent the post-compaction resume poke");
    m.wait_side("progress: the agent resumed");

    let pokes = m.pokes();
    assert_eq!(pokes.len(), 1, "exactly one resume poke: {pokes:?}");
    assert!(
        pokes[0].starts_with("[Poke] The context was compacted (about ") && pokes[0].contains("k tokens)"),
        "the poke names the compaction: {:?}",
        pokes[0]
    );
    assert!(
        pokes[0].contains(REJECTED),
        "and the error that cut the turn off: {:?}",
        pokes[0]
    );
    assert!(!m.server.summary_requests().is_empty(), "pi really compacted");
    m.assert_model_quiet(Duration::from_secs(3));
    assert_eq!(m.pokes().len(), 1);
    m.pty
        .wait_until("the footer back to its base", support::WAIT, |s| {
            footer(s).starts_with("📌 p:on") && !footer(s).contains("📤") && !footer(s).contains("👀")
        });
}

#[test]
fn poke_w4_overflow_compaction_whose_retry_fails_is_poked_with_the_compaction_text() {
    // The request pi retries after its overflow compaction is refused.
    let m = start_overflow_with(model_server(), Step::error(400, "the retry was refused"));
    m.server.push(Step::text("Back on the summary."));
    m.wait_text("Back on the summary.");
    m.wait_record("POKE-W4", "action", "sent the post-compaction resume poke");
    m.wait_side("sent the post-compaction resume poke");
    let pokes = m.pokes();
    assert_eq!(pokes.len(), 1, "{pokes:?}");
    assert!(
        pokes[0].starts_with("[Poke] The context was compacted"),
        "{:?}",
        pokes[0]
    );
    assert!(pokes[0].contains("the retry was refused"), "{:?}", pokes[0]);
    m.assert_model_quiet(Duration::from_secs(3));
}

fn start_overflow_with(server: support::ModelServer, retry: Step) -> Matrix {
    server.push_all([
        Step::text(long_text("Notes", 1600)).with_prompt_tokens(2000),
        Step::overflow(),
        retry,
    ]);
    let mut m = Matrix::builder().tiny().start(server);
    m.submit("take some notes");
    m.wait_text("line 3 of the scripted notes");
    m.submit("summarize everything you know");
    m
}

#[test]
fn poke_w5_overflow_twice_fails_the_compaction_and_the_poke_says_so() {
    // pi compacts once and retries; the retry overflows again: session_compact_failed.
    let m = start_overflow_with(model_server(), Step::overflow());
    m.server.push(Step::text("Working with a smaller scope now."));
    m.wait_text("Working with a smaller scope now.");
    m.wait_side("sent the post-compaction resume poke");
    let pokes = m.pokes();
    assert_eq!(pokes.len(), 1, "{pokes:?}");
    assert!(
        pokes[0].starts_with("[Poke] An automatic context compaction failed"),
        "the failed-compaction text: {:?}",
        pokes[0]
    );
    assert!(
        pokes[0].contains("overflow recovery failed"),
        "with pi's error: {:?}",
        pokes[0]
    );
    assert!(pokes[0].contains("/compact"), "{:?}", pokes[0]);
    m.assert_model_quiet(Duration::from_secs(3));
}

#[test]
fn poke_w1_compaction_after_a_finished_run_arms_nothing() {
    let server = model_server();
    server.push_all([
        Step::text(long_text("Notes", 1600)).with_prompt_tokens(2000),
        // A complete answer whose size crosses the threshold: pi compacts after the run.
        Step::text(long_text("Report", 1600)).with_prompt_tokens(9000),
    ]);
    let mut m = Matrix::builder().tiny().start(server);
    m.submit("take some notes");
    m.wait_text("line 3 of the scripted notes");
    m.submit("write the report");
    m.wait_text("Compacted from");
    m.wait_record("POKE-W1", "declined", "compaction after a run that had finished");
    m.wait_side("compaction after a run that had finished");
    m.assert_model_quiet(Duration::from_secs(3));
    assert!(m.pokes().is_empty(), "{:?}", m.pokes());
    assert_eq!(m.chat().len(), 2);
    assert!(!m.server.summary_requests().is_empty(), "pi compacted");
    assert!(
        m.pty.with_screen(|s| !footer(s).contains("👀")),
        "no wake was armed"
    );
}

#[test]
fn poke_b5_esc_during_the_resumed_run_stops_all_pokes() {
    let m = start_mid_run_stall(0, serde_json::json!({}));
    // The poke's run hangs until the user gives up on it.
    m.server.push(Step::hang());
    m.server
        .wait_for_hanging(1, support::WAIT)
        .unwrap_or_else(|e| m.pty.fail(&e.to_string()));
    let mut m = m;
    m.pty.send("\x1b");
    m.wait_record("ARB-ABORT", "declined", "you (Esc) stopped the run");
    m.wait_side("stopped by you (Esc): no automatic poke until you type");
    assert_eq!(m.pokes().len(), 1, "only the first poke: {:?}", m.pokes());
    m.assert_model_quiet(Duration::from_secs(3));
    assert_eq!(m.pokes().len(), 1);
    let dropped = m.records("ARB-ABORT", "declined");
    assert!(
        dropped.iter().any(|r| r["reason"]
            .as_str()
            .is_some_and(|t| t.contains("pending post-compaction resume is dropped"))),
        "the watching wake was dropped: {dropped:?}"
    );
}

#[test]
fn poke_w4_max_pokes_then_give_up_then_silence_when_every_request_fails() {
    let server = model_server();
    server.set_default(Step::error(400, "the model is down"));
    let m = start_stall(
        server,
        Step::error(400, REJECTED),
        serde_json::json!({"poke": {"postCompactMaxPokes": 2}}),
    );
    m.wait_footer("✋ pokeshell stops resuming this stall: 2 pokes");
    m.wait_record("POKE-W4", "declined", "2 pokes were sent in this episode already");
    m.wait_side("2 pokes were sent in this episode already");
    assert_eq!(m.pokes().len(), 2, "{:?}", m.pokes());
    m.assert_model_quiet(Duration::from_secs(4));
    assert_eq!(m.pokes().len(), 2, "silence after the give-up");
    assert_eq!(m.records("POKE-W4", "action").len(), 2);
}

/// The stall of [`start_mid_run_stall`] with `after` answering the request after the compaction.
fn start_stall(server: support::ModelServer, after: Step, settings: serde_json::Value) -> Matrix {
    queue_compaction_history(&server);
    server.push(after);
    let mut m = Matrix::builder().tiny().settings(settings).start(server);
    m.submit("take some notes");
    m.wait_text("line 3 of the scripted notes");
    m.submit("now run the long job");
    m
}

#[test]
fn poke_n1_the_users_prompt_while_a_wake_is_pending_cancels_the_poke() {
    let mut m = start_mid_run_stall(4000, serde_json::json!({}));
    m.wait_footer("👀 post-compact");
    // The steered prompt is answered once pi gets to it.
    m.server.push(Step::text("Stopping the job as you asked."));
    m.submit("never mind the job, stop there");
    m.wait_text("Stopping the job as you asked.");
    m.wait_record("POKE-E11", "declined", "you typed");
    m.assert_model_quiet(Duration::from_secs(3));
    assert!(m.pokes().is_empty(), "{:?}", m.pokes());
    assert!(
        m.trailing_user_texts()
            .iter()
            .any(|t| t.contains("never mind the job")),
        "the model got the user's prompt: {:?}",
        m.trailing_user_texts()
    );
}

#[test]
fn poke_w1_manual_compact_arms_nothing() {
    let server = model_server();
    server.push_all([
        Step::text(long_text("Notes", 1600)).with_prompt_tokens(2000),
        Step::text(long_text("More notes", 1600)).with_prompt_tokens(3000),
    ]);
    let mut m = Matrix::builder().tiny().start(server);
    m.submit("take some notes");
    m.wait_text("line 3 of the scripted notes");
    m.submit("take more notes");
    m.wait_text("More notes: line 1");
    m.submit("/compact");
    m.wait_text("Compacted from");
    m.wait_record("POKE-W1", "declined", "manual compaction");
    m.wait_side("manual compaction: you asked for it");
    m.assert_model_quiet(Duration::from_secs(3));
    assert!(m.pokes().is_empty(), "{:?}", m.pokes());
    assert_eq!(m.chat().len(), 2, "no request besides the two prompts");
}
