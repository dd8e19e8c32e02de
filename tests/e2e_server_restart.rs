//! The server killed (SIGKILL: no chance to save or say goodbye) and brought back by the next
//! `pokeshell attach`, on real pi 1.6.0 against the scripted model: the new server relaunches each
//! saved session's pi on its session file; the one whose agent was mid-run is resumed through the
//! arbiter [RST-S1] with the earlier conversation, and, nobody being attached yet, the user's
//! `pokeshell.notifyCommand` says so; the one that was idle is relaunched and left alone.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{client, notify_script, start, wait_file, wait_ready};
use serde_json::{Value, json};
use support::matrix::{COLS, Matrix, ROWS, trailing_user_text};
use support::pty::{Pty, ServerHome};
use support::shell::side;
use support::{Step, WAIT, model_server};

/// Generous: under load, a new server and pi take seconds to start.
const RESTART_WAIT: Duration = Duration::from_secs(60);
const MARKER: &str = "zebra-lighthouse-42";
const RESUME: &str = "pokeshell had to restart pi";
const CARRIED_ON: &str = "Picked the work up again after the server came back.";

fn sessions_file(m: &Matrix) -> PathBuf {
    m.ledger_path().with_file_name("sessions.json")
}

/// Waits until the saved list's only session holds `what`; returns it.
#[track_caller]
fn wait_saved(m: &Matrix, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let text = wait_file(&sessions_file(m), what, WAIT, |text| {
        serde_json::from_str::<Value>(text)
            .is_ok_and(|v| v["sessions"][0].is_object() && done(&v["sessions"][0]))
    });
    let list: Value = serde_json::from_str(&text).expect("sessions.json is JSON");
    list["sessions"][0].clone()
}

fn gone(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
        .unwrap_or(true)
}

/// Ends the server with `signal`. SIGKILL: its client says the server went away and ends with 1;
/// SIGTERM: the server says it is shutting down and the client ends with 0.
#[track_caller]
fn end_server(home: &ServerHome, m: &mut Matrix, signal: i32) -> i32 {
    let pid = home.server_pid().expect("a server runs");
    // SAFETY: a signal to the server of this test's own runtime dir.
    unsafe { libc::kill(pid, signal) };
    let deadline = Instant::now() + WAIT;
    while !gone(pid) {
        assert!(
            Instant::now() < deadline,
            "the server {pid} survived signal {signal}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = m.pty.wait_exit(WAIT);
    if signal == libc::SIGKILL {
        assert_eq!(code, 1, "the client lost its server");
        m.pty.wait_for_text("server went away", WAIT);
    } else {
        assert_eq!(code, 0, "the client was detached");
        m.pty.wait_for_text("server is shutting down", WAIT);
    }
    pid
}

/// `pokeshell attach` in a new terminal: it starts a new server, which brings the session back.
fn attach_again(m: &mut Matrix, old_server: i32, home: &ServerHome) {
    m.pty = client(m, &["attach"], ROWS, COLS);
    m.pty
        .wait_until("the session back in the new client", RESTART_WAIT, |s| {
            s.contents().contains("mock-") && support::shell::footer(s).contains("📌 p:")
        });
    let new = home.server_pid().expect("a new server runs");
    assert_ne!(new, old_server, "a new server");
}

/// The pi session the side pane names (`session  0193ab…c4d5e6`): the same after a relaunch on its
/// file, another for a fresh pi.
#[track_caller]
fn side_session(pty: &Pty) -> String {
    let mut found = String::new();
    pty.wait_until("pi's session in the side pane", WAIT, |s| {
        found = side(s)
            .lines()
            .find(|l| l.starts_with("session "))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        !found.is_empty()
    });
    found
}

#[test]
fn rst_s1_a_server_killed_mid_run_is_brought_back_and_the_run_resumed() {
    ended_mid_run_then_attached(libc::SIGKILL);
}

/// The server asked to end (a logout, a shutdown): pi is ended with it, and the list saved at
/// that moment says the run was under way, so the next server resumes it all the same. pi ends its
/// run as it is told to end and reports that; it is held on its way out (a test extension) so that
/// the report surely reaches the server before pi is gone.
#[test]
fn rst_s1_a_server_stopped_with_sigterm_mid_run_is_brought_back_and_the_run_resumed() {
    ended_mid_run_then_attached(libc::SIGTERM);
}

/// Blocks pi's exit for 2.5 s, after everything it had to say went out.
const SLOW_EXIT: &str = r#"
export default function (_pi: any) {
	process.on("exit", () => {
		Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2500);
	});
}
"#;

fn ended_mid_run_then_attached(signal: i32) {
    let home = ServerHome::new();
    let dir = tempfile::tempdir().expect("a temp dir");
    let (command, notes) = notify_script(dir.path());
    let server = model_server();
    server.push(Step::bash("sleep 40"));
    server.push(Step::text(CARRIED_ON));
    let mut m = support::matrix::Matrix::builder()
        .settings(json!({"pokeshell": {"notifyCommand": command}}))
        .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
        .extension(SLOW_EXIT)
        .start(server);
    m.submit(&format!("run the long sleep, remember {MARKER}"));
    m.wait_footer("⏳ bash");
    wait_saved(&m, "the run under way", |s| {
        s["mid_run"] == true && s["session_file"].is_string()
    });
    let before = side_session(&m.pty);
    let old = end_server(&home, &mut m, signal);

    attach_again(&mut m, old, &home);
    let reqs = m
        .server
        .wait_until("the resume after the server came back", RESTART_WAIT, |reqs| {
            reqs.iter()
                .filter_map(trailing_user_text)
                .any(|t| t.contains(RESUME))
        })
        .unwrap_or_else(|e| {
            let ledger: Vec<String> = m.ledger().iter().map(Value::to_string).collect();
            m.pty.fail(&format!("{e}; the ledger:\n{}", ledger.join("\n")))
        });
    let resume = reqs
        .iter()
        .find(|r| trailing_user_text(r).is_some_and(|t| t.contains(RESUME)))
        .unwrap_or_else(|| m.pty.fail("no resume request"));
    let texts = resume.user_texts().join("\n");
    assert!(
        texts.contains(MARKER),
        "the resume carries the earlier conversation: {texts}"
    );
    assert_eq!(side_session(&m.pty), before, "relaunched on its session");
    m.wait_record(
        "RST-S1",
        "action",
        "server was restarted while the agent was mid-run",
    );
    // The new server started the session with nobody attached yet: the user hears of it by their
    // command, or, when the client that started the server was attached by then, in its terminal.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let by_command = std::fs::read_to_string(&notes).unwrap_or_default();
        if by_command
            .lines()
            .any(|l| l.starts_with("work|") && l.contains("server was restarted"))
        {
            break;
        }
        let raw = m.pty.raw_output();
        let osc = b"\x1b]9;pokeshell: work: ";
        let told = raw
            .windows(osc.len())
            .position(|w| w == osc)
            .is_some_and(|i| String::from_utf8_lossy(&raw[i..]).contains("server was restarted"));
        if told {
            break;
        }
        if std::time::Instant::now() >= deadline {
            m.pty.fail(&format!(
                "nobody heard of the relaunch: neither the command ({by_command:?}) nor the terminal"
            ));
        }
        m.pty.wait_for_output(raw.len(), Duration::from_millis(100));
    }
    m.wait_text(CARRIED_ON);
    m.assert_model_quiet(Duration::from_secs(3));
    let resumes = m
        .trailing_user_texts()
        .iter()
        .filter(|t| t.contains(RESUME))
        .count();
    assert_eq!(resumes, 1, "one resume: {:?}", m.trailing_user_texts());
}

#[test]
fn rst_s1_twin_an_idle_session_is_relaunched_but_not_resumed() {
    let home = ServerHome::new();
    let server = model_server();
    server.push(Step::bash("sleep 2"));
    server.push(Step::text("Done with the short nap."));
    let mut m = start(&home, server, json!({}));
    m.submit(&format!("take a short nap, remember {MARKER}"));
    wait_saved(&m, "the run under way", |s| s["mid_run"] == true);
    m.wait_text("Done with the short nap.");
    wait_saved(&m, "the run over", |s| {
        s["mid_run"] == false && s["session_file"].is_string()
    });
    let before = side_session(&m.pty);
    let old = end_server(&home, &mut m, libc::SIGKILL);

    attach_again(&mut m, old, &home);
    wait_ready(&m.pty);
    m.wait_text("Done with the short nap.");
    m.wait_text(MARKER);
    assert_eq!(side_session(&m.pty), before, "relaunched on its session");
    m.assert_model_quiet(Duration::from_secs(6));
    assert_eq!(m.chat().len(), 2, "{:?}", m.trailing_user_texts());
    let restarts: Vec<Value> = m
        .ledger()
        .into_iter()
        .filter(|r| r["rule"].as_str().is_some_and(|rule| rule.starts_with("RST")))
        .collect();
    assert!(restarts.is_empty(), "not a restart mid-run: {restarts:?}");
}
