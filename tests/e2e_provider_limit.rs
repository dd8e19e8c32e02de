//! Provider limits on real pi 1.6.0 inside pokeshell [LIMIT-W1]: pi retries a 429 on its own schedule
//! and gives up; pokeshell reads the provider's "try again in 6s", counts it down in the footer and
//! resumes the agent after the reset, not before.

mod support;

use std::time::Duration;

use serde_json::json;
use support::matrix::{Matrix, trailing_user_text};
use support::{Step, model_server};

const RESET_SECONDS: u64 = 6;

#[test]
fn limit_w1_a_429_with_a_reset_hint_is_resumed_after_the_reset() {
    let server = model_server();
    // The first request and pi's three retries all meet the limit; the resume gets an answer.
    server.push_all((0..4).map(|_| Step::rate_limited(RESET_SECONDS)));
    server.set_default(Step::text("Back at it after the limit."));
    let mut m = Matrix::builder()
        .settings(json!({"retry": {"maxRetries": 3, "baseDelayMs": 300}}))
        .start(server);
    m.submit("refactor the parser");
    m.wait_chats(4);
    m.wait_footer("⏸ limit 0:0");
    m.wait_side("rate limit");
    let record = m.wait_record("LIMIT-W1", "action", "rate limit");
    assert!(
        record["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("reset time the provider named"),
        "{record}"
    );
    let resumed = m.wait_trailing("failed with a rate limit");
    let chat = m.chat();
    assert_eq!(
        resumed, 4,
        "the request after pi's four attempts is pokeshell's resume"
    );
    let text = trailing_user_text(&chat[resumed]).unwrap_or_default();
    assert!(text.contains("that wait is over"), "{text:?}");
    let last_failure = chat[3].at;
    let waited = chat[resumed].at - last_failure;
    eprintln!(
        "last 429 → resumed request: {waited:?} (reset hint {RESET_SECONDS}s; first request → resume: {:?})",
        chat[resumed].at - chat[0].at
    );
    assert!(
        waited >= Duration::from_secs(RESET_SECONDS),
        "not before the reset the provider named: {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(RESET_SECONDS + 8),
        "soon after it: {waited:?}"
    );
    m.wait_text("Back at it after the limit.");
    m.wait_record("LIMIT-W1", "action", "wait is over");
    m.assert_model_quiet(Duration::from_secs(2));
}

/// A rate limit that asks for a minute: long enough that only the user ends the wait.
fn waiting_a_minute() -> Matrix {
    let server = model_server();
    server.push_all((0..2).map(|_| Step::rate_limited(60)));
    server.set_default(Step::text("Back after the poke."));
    let mut m = Matrix::builder()
        .settings(json!({"retry": {"maxRetries": 1, "baseDelayMs": 200}}))
        .start(server);
    m.submit("refactor the lexer");
    m.wait_chats(2);
    m.wait_footer("⏸ limit 1:0");
    m
}

#[test]
fn limit_w1_typing_in_pis_editor_cancels_the_wait() {
    let mut m = waiting_a_minute();
    m.pty.send("x");
    m.wait_record("LIMIT-W1", "declined", "cancelled: you typed");
    m.pty.wait_until("the countdown gone", support::WAIT, |s| {
        !support::shell::footer(s).contains("⏸ limit")
    });
    m.assert_model_quiet(Duration::from_secs(3));
    assert_eq!(m.chat().len(), 2, "nothing resumed the agent");
}

#[test]
fn limit_w1_prefix_p_resumes_at_once_with_one_message() {
    let mut m = waiting_a_minute();
    m.pty.send("\x1dp");
    m.wait_trailing("poked this session by hand");
    m.wait_record("LIMIT-W1", "declined", "poked by hand");
    m.wait_text("Back after the poke.");
    m.assert_model_quiet(Duration::from_secs(3));
    let trailing = m.trailing_user_texts();
    assert_eq!(
        trailing.len(),
        3,
        "the prompt, pi's retry of it and the manual poke, no planned resume: {trailing:?}"
    );
    assert!(trailing[2].contains("poked this session by hand"), "{trailing:?}");
    assert!(
        !trailing.iter().any(|t| t.contains("failed with a")),
        "{trailing:?}"
    );
}

#[test]
fn limit_r1_the_wait_survives_a_restart_of_pokeshell() {
    // Long enough that pokeshell and pi are back, on a busy machine, before the wait is over.
    const RESET: u64 = 25;
    let server = model_server();
    server.push_all((0..2).map(|_| Step::rate_limited(RESET)));
    server.set_default(Step::text("Resumed after the restart."));
    let mut m = Matrix::builder()
        .settings(json!({"retry": {"maxRetries": 1, "baseDelayMs": 200}}))
        .start(server);
    m.submit("tidy the tests");
    m.wait_chats(2);
    m.wait_footer("⏸ limit 0:2");
    m.restart(&["--continue"]);
    m.wait_footer("⏸ limit 0:");
    m.wait_record(
        "LIMIT-R1",
        "action",
        "re-armed the planned resume after a rate limit",
    );
    // The resume is due a second after the reset, counted from the last 429, not from now.
    let resumed = m.wait_trailing_within("failed with a rate limit", Duration::from_secs(RESET + 30));
    let chat = m.chat();
    let waited = chat[resumed].at - chat[1].at;
    eprintln!("last 429 → resumed request across a restart: {waited:?} (reset hint {RESET}s)");
    assert!(
        waited >= Duration::from_secs(RESET),
        "not before the reset: {waited:?}"
    );
    m.wait_text("Resumed after the restart.");
}

#[test]
fn soak_seed_20261203_pi_killed_while_waiting_out_a_limit_comes_back_and_is_resumed_at_the_reset() {
    // The soak found it: a pi killed while its session waited out a rate limit ended the session,
    // and the planned resume and the rest of the work with it.
    const RESET: u64 = 20;
    let server = model_server();
    server.push_all((0..2).map(|_| Step::rate_limited(RESET)));
    server.set_default(Step::text("Resumed after pi came back."));
    let mut m = Matrix::builder()
        .settings(json!({"retry": {"maxRetries": 1, "baseDelayMs": 200}}))
        .start(server);
    m.submit("tidy the docs");
    m.wait_chats(2);
    m.wait_footer("⏸ limit 0:");
    let pi = support::procs::children_of(m.pty.host_pid() as u32)
        .into_iter()
        .next()
        .unwrap_or_else(|| m.pty.fail("pi is not running under pokeshell"));
    // SAFETY: a signal to pokeshell's own child, found by its parent.
    unsafe { libc::kill(pi, libc::SIGKILL) };
    m.wait_record("RST-D1", "action", "pi was killed by signal 9");
    m.wait_record(
        "LIMIT-R1",
        "action",
        "re-armed the planned resume after a rate limit",
    );
    assert!(m.pty.try_exit_code().is_none(), "pokeshell keeps the session");
    let resumed = m.wait_trailing_within("failed with a rate limit", Duration::from_secs(RESET + 30));
    let chat = m.chat();
    let waited = chat[resumed].at - chat[1].at;
    assert!(
        waited >= Duration::from_secs(RESET),
        "not before the reset: {waited:?}"
    );
    m.wait_text("Resumed after pi came back.");
    assert_eq!(
        m.trailing_user_texts()
            .iter()
            .filter(|t| t.contains("failed with a rate limit"))
            .count(),
        1,
        "one resume"
    );
}
