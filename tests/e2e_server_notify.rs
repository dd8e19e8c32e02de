//! `pokeshell.notifyCommand` on real pi 1.6.0 against the scripted model: when pokeshell acts on
//! its own (here it aborts a stalled stream, STALL-S1) and nobody is attached to the session, the
//! user's command runs with the message as its last argument; with a client attached the bell and
//! the desktop notification go to that client's terminal instead and the command does not run.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{detach, notify_script, start, wait_file};
use serde_json::json;
use support::matrix::Matrix;
use support::pty::ServerHome;
use support::{Step, WAIT, model_server};

const STALL_SECONDS: u64 = 6;
const MESSAGE: &str = "pokeshell stopped a stalled model stream";
const RECOVERED: &str = "Back on track after the stall.";

/// A session whose first answer stalls behind keep-alives, with a notify command that appends
/// `<session>|<message>` to `notes`.
fn stalling(home: &ServerHome, dir: &Path) -> (Matrix, PathBuf) {
    let (command, notes) = notify_script(dir);
    let server = model_server();
    server.push(Step::stall("Let me think", 1000));
    server.set_default(Step::text(RECOVERED));
    let settings = json!({
        "poke": {"streamStallSeconds": STALL_SECONDS},
        "pokeshell": {"notifyCommand": command}
    });
    let mut m = start(home, server, settings);
    m.submit("think it over");
    (m, notes)
}

#[test]
fn a_detached_session_runs_the_notify_command_with_the_message() {
    let home = ServerHome::new();
    let dir = tempfile::tempdir().expect("a temp dir");
    let (mut m, notes) = stalling(&home, dir.path());
    detach(&mut m.pty);
    assert!(
        m.records("STALL-S1", "action").is_empty(),
        "the stall was not noticed before the client left: {:?}",
        m.ledger()
    );
    let text = wait_file(&notes, "the notification", Duration::from_secs(30), |t| {
        t.contains(MESSAGE)
    });
    let line = text.lines().find(|l| l.contains(MESSAGE)).unwrap_or_default();
    assert!(
        line.starts_with("work|") && line.contains(&format!("silent for {STALL_SECONDS}s")),
        "the session's name and the whole message: {text}"
    );
    m.wait_record("STALL-S1", "action", "aborted the agent");
    m.wait_trailing("[Poke] The model provider's reply stream stalled");
}

#[test]
fn with_a_client_attached_the_client_is_told_and_the_command_does_not_run() {
    let home = ServerHome::new();
    let dir = tempfile::tempdir().expect("a temp dir");
    let (m, notes) = stalling(&home, dir.path());
    m.wait_record("STALL-S1", "action", "aborted the agent");
    let osc = format!("\x1b]9;pokeshell: 🔴 {MESSAGE}");
    let deadline = Instant::now() + WAIT;
    loop {
        let raw = m.pty.raw_output();
        if raw.windows(osc.len()).any(|w| w == osc.as_bytes()) {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if !m.pty.wait_for_output(raw.len(), left) {
            m.pty.fail("the client got no notification of the stall");
        }
    }
    m.wait_text(RECOVERED);
    // The command would have started when the notification went out; give a started one time to
    // write, and see that none did.
    let quiet = Instant::now() + Duration::from_secs(2);
    while Instant::now() < quiet {
        assert!(
            !notes.exists(),
            "the notify command ran while a client was attached: {:?}",
            std::fs::read_to_string(&notes)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_client_showing_another_session_is_told_and_the_command_does_not_run() {
    let home = ServerHome::new();
    let dir = tempfile::tempdir().expect("a temp dir");
    let (m, notes) = stalling(&home, dir.path());
    // A second session in the same directory; the client shows it while the first one stalls.
    let mut pty = m.pty;
    pty.send("\x1dn");
    pty.wait_for_text("New session", WAIT);
    pty.send("\r");
    pty.wait_until("the second session shown", WAIT, |s| {
        support::shell::side(s).contains("▸2")
    });
    let osc = format!("\x1b]9;pokeshell: work: 🔴 {MESSAGE}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let raw = pty.raw_output();
        if raw.windows(osc.len()).any(|w| w == osc.as_bytes()) {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if !pty.wait_for_output(raw.len(), left) {
            pty.fail("the client showing the other session got no notification of the stall");
        }
    }
    let quiet = Instant::now() + Duration::from_secs(2);
    while Instant::now() < quiet {
        assert!(
            !notes.exists(),
            "the notify command ran while a terminal was attached: {:?}",
            std::fs::read_to_string(&notes)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
