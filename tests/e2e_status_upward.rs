//! What pokeshell tells the terminal around it, on real pi 1.6.0 meeting a provider limit: a
//! terminal that answered the program-status query (OSC 7501) hears `blocked` with kind `limit` and
//! the countdown while pokeshell waits the limit out, then pi's own reports again; a terminal that
//! did not answer hears no report at all. Both get the window title with the session's state when
//! `pokeshell.windowTitle` is on (pi 1.6.0 names its window itself, so `auto` leaves it to pi).

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::time::Instant;

use pokeshell::term::screen::program_status::{Osc7501, parse};
use pokeshell::term::screen::{ProgramState, ProgramStatus};
use serde_json::json;
use support::matrix::Matrix;
use support::pi::PiEnv;
use support::pty::{Pty, ServerHome};
use support::shell::{submit, wait_ready};
use support::{Step, WAIT, model_server};

const ANSWER: &str = "Back after the limit.";

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Every OSC 7501 report in `raw`, decoded, in order.
fn reports(raw: &[u8]) -> Vec<ProgramStatus> {
    let mut out = Vec::new();
    let mut rest = raw;
    while let Some(at) = find(rest, b"\x1b]7501;") {
        let body = &rest[at + 7..];
        let end = body
            .iter()
            .position(|b| *b == 0x1b || *b == 0x07)
            .unwrap_or(body.len());
        if let Osc7501::Report(r) = parse(&body[..end]) {
            out.push(r);
        }
        rest = &body[end..];
    }
    out
}

/// A terminal that reads program-status reports: it answers that query and DA1.
fn status_host(chunk: &[u8]) -> Vec<u8> {
    let mut reply = Vec::new();
    if find(chunk, b"\x1b]7501;?").is_some() {
        reply.extend_from_slice(b"\x1b]7501;?\x1b\\");
    }
    if find(chunk, b"\x1b[c").is_some() {
        reply.extend_from_slice(b"\x1b[?62;22c");
    }
    reply
}

/// pi meets a rate limit it does not retry itself; pokeshell waits out the reset and resumes.
fn limited(answering: bool) -> (Pty, support::ModelServer, PiEnv) {
    let server = model_server();
    server.push(Step::rate_limited(4));
    server.set_default(Step::text(ANSWER));
    let env = PiEnv::builder(&server.base_url())
        .settings(json!({"retry": {"maxRetries": 0}, "pokeshell": {"windowTitle": "on"}}))
        .build();
    let cmd = env.pokeshell_command(&[], &[]);
    let mut pty = if answering {
        Pty::spawn_answering(cmd, 40, 140, status_host)
    } else {
        Pty::spawn(cmd, 40, 140)
    };
    wait_ready(&pty);
    submit(&mut pty, &server, "refactor the parser");
    (pty, server, env)
}

/// Waits until `done` holds for the output so far.
fn wait_raw(pty: &Pty, what: &str, done: impl Fn(&[u8]) -> bool) {
    let deadline = Instant::now() + WAIT;
    loop {
        let raw = pty.raw_output();
        if done(&raw) {
            return;
        }
        let now = Instant::now();
        if now >= deadline {
            pty.fail(&format!("{what}; reports so far: {:?}", reports(&raw)));
        }
        pty.wait_for_output(raw.len(), deadline - now);
    }
}

fn is_limit(r: &ProgramStatus) -> bool {
    r.state == ProgramState::Blocked
        && r.kind.as_deref() == Some("limit")
        && r.msg
            .as_deref()
            .is_some_and(|m| m.starts_with("rate limit: resuming in 0:0"))
}

#[test]
fn a_terminal_that_reads_reports_hears_the_limit_wait_then_pis_reports_again() {
    let (pty, _server, _env) = limited(true);
    wait_raw(&pty, "a blocked report for the limit", |raw| {
        reports(raw).iter().any(is_limit)
    });
    pty.wait_for_text(ANSWER, WAIT);
    wait_raw(&pty, "pi's own reports after the wait", |raw| {
        let all = reports(raw);
        let limit = all.iter().rposition(is_limit).unwrap_or(usize::MAX);
        all.iter()
            .skip(limit.saturating_add(1))
            .any(|r| r.app.as_deref() == Some("pi"))
    });
    let all = reports(&pty.raw_output());
    let countdowns: Vec<&str> = all
        .iter()
        .filter(|r| is_limit(r))
        .filter_map(|r| r.msg.as_deref())
        .collect();
    assert!(!countdowns.is_empty(), "{all:?}");
    wait_raw(&pty, "the title with the limit", |raw| {
        let text = String::from_utf8_lossy(raw);
        text.contains("\x1b]2;work — waiting for the limit until")
    });
}

#[test]
fn a_terminal_that_did_not_answer_hears_no_report_but_gets_the_title() {
    let (pty, _server, _env) = limited(false);
    wait_raw(&pty, "the title with the limit", |raw| {
        String::from_utf8_lossy(raw).contains("\x1b]2;work — waiting for the limit until")
    });
    pty.wait_for_text(ANSWER, WAIT);
    let raw = pty.raw_output();
    assert!(find(&raw, b"\x1b]7501;state=").is_none(), "{:?}", reports(&raw));
}

/// Two terminals on one session in the server: only the one whose terminal answered the query gets
/// reports. `pokeshell ls` shows the session's tokens and cost meanwhile.
#[test]
fn in_the_server_each_client_is_judged_by_its_own_terminal() {
    let home = ServerHome::new();
    let server = model_server();
    server.push(
        Step::slow(4, 200, "w ")
            .with_prompt_tokens(10_000)
            .with_completion_tokens(2_000),
    );
    let mut m = Matrix::builder()
        .prices(3.0, 15.0, 0.3)
        .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
        .start(server);
    let mut cmd = portable_pty::CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.arg("attach");
    m.env.apply(&mut cmd);
    let answering = Pty::spawn_answering(cmd, 50, 150, status_host);
    answering.wait_for_text("mock-", WAIT);
    m.submit("hello");
    wait_raw(&answering, "pi's working and done through the server", |raw| {
        let all = reports(raw);
        let working = all.iter().position(|r| r.state == ProgramState::Working);
        working.is_some_and(|w| all[w..].iter().any(|r| r.state == ProgramState::Done))
    });
    let silent = m.pty.raw_output();
    assert!(
        find(&silent, b"\x1b]7501;state=").is_none(),
        "the terminal that did not answer got {:?}",
        reports(&silent)
    );
    let listing = common::wait_ls(&m, "the cost in ls", |l| {
        common::ls_cell(l, "1:work", "COST").as_deref() == Some("$0.0600")
    });
    assert_eq!(
        common::ls_cell(&listing, "1:work", "TOKENS IN/OUT").as_deref(),
        Some("10.0k/2.0k"),
        "{listing}"
    );
}
