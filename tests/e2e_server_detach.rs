//! Sessions outlive their terminals, on real pi 1.6.0 against the scripted model: a client detached
//! with prefix+d, or hung up with SIGHUP, in the middle of a tool call leaves the run going in the
//! server, which finishes it with nobody watching; `pokeshell attach` shows the finished screen and
//! `pokeshell ls` the session's state; `pokeshell kill NAME` ends a session for good; a name that
//! names no session is an error for `kill` and `attach`; a session made in a directory named
//! `host:x` is attached here by the name it is offered, never through ssh to `host`.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::time::Instant;

use common::{cli, client, detach, ls_cell, ls_row, start, wait_ls, wait_ready};
use portable_pty::CommandBuilder;
use serde_json::json;
use support::matrix::{COLS, Matrix, ROWS, side_flat};
use support::pty::{Pty, ServerHome};
use support::{START_WAIT, Step, WAIT, model_server};

const FINAL: &str = "The sleepy task is done: 42 sheep counted.";

/// A session whose first prompt runs `sleep SECONDS` through bash, then answers [`FINAL`]; returns
/// once the tool runs.
fn mid_tool(home: &ServerHome, seconds: u32) -> Matrix {
    let server = model_server();
    server.push(Step::bash(format!("sleep {seconds}")));
    server.push(Step::text(FINAL));
    let mut m = start(home, server, json!({}));
    m.submit("count the sheep, slowly");
    m.wait_footer("⏳ bash");
    m
}

/// The client has just ended: the tool still runs, then its result reaches the model.
#[track_caller]
fn tool_result_unwatched(m: &Matrix) {
    assert_eq!(
        m.chat().len(),
        1,
        "the tool was still running when the client ended: {:?}",
        m.trailing_user_texts()
    );
    let chat = m.wait_chats(2);
    let request = &chat[1];
    assert!(
        !request.tool_results().is_empty(),
        "the second request carries the bash result: {:?}",
        request.messages()
    );
}

#[test]
fn prefix_d_mid_run_detaches_the_run_finishes_unwatched_and_attach_shows_it() {
    let home = ServerHome::new();
    let mut m = mid_tool(&home, 5);
    detach(&mut m.pty);
    assert!(home.server_pid().is_some(), "the server stays");
    tool_result_unwatched(&m);
    let listing = wait_ls(&m, "the session idle again", |l| {
        ls_cell(l, "1:work", "STATE").as_deref() == Some("idle")
    });
    assert_eq!(
        ls_cell(&listing, "1:work", "ATTACHED").as_deref(),
        Some("-"),
        "nobody is attached: {listing}"
    );
    let again = client(&m, &["attach"], ROWS, COLS);
    wait_ready(&again);
    again.wait_for_text(FINAL, WAIT);
    again.wait_for_text("count the sheep, slowly", WAIT);
    assert_eq!(m.chat().len(), 2, "attaching sent nothing to the model");
}

#[test]
fn sighup_mid_run_ends_the_client_and_the_run_goes_on() {
    let home = ServerHome::new();
    let mut m = mid_tool(&home, 6);
    m.pty.signal(libc::SIGHUP);
    let code = m.pty.wait_exit(WAIT);
    assert_eq!(code, 128 + libc::SIGHUP, "the client ends as a hangup would");
    // The server hears of a session's state within a second or so.
    let listing = wait_ls(&m, "the session working in its tool call", |l| {
        ls_cell(l, "1:work", "STATE").as_deref() == Some("working")
            && ls_cell(l, "1:work", "TOOL").is_some_and(|t| t.starts_with("bash"))
    });
    assert_eq!(
        ls_cell(&listing, "1:work", "ATTACHED").as_deref(),
        Some("-"),
        "the hung-up client left: {listing}"
    );
    tool_result_unwatched(&m);
    let listing = wait_ls(&m, "the session idle after its run", |l| {
        ls_cell(l, "1:work", "STATE").as_deref() == Some("idle")
    });
    assert_eq!(
        ls_cell(&listing, "1:work", "TOOL").as_deref(),
        Some("-"),
        "the tool is over: {listing}"
    );
    let last = m.chat().len();
    assert_eq!(last, 2, "the run ended with the final answer");
}

#[test]
fn pokeshell_kill_ends_a_session_and_a_bad_name_is_an_error() {
    let home = ServerHome::new();
    let server = model_server();
    let mut m = start(&home, server, json!({}));
    let pi = m.env.pi().to_string_lossy().into_owned();
    let spare = cli(&m, &["new", "-d", "--name", "spare", "--pi", &pi]);
    assert!(spare.status.success(), "pokeshell new -d: {spare:?}");
    wait_ls(&m, "both sessions", |l| {
        ls_row(l, "1:work").is_some() && ls_row(l, "2:spare").is_some()
    });
    m.wait_side("2 spare");

    let bad = cli(&m, &["kill", "nope"]);
    assert_eq!(bad.status.code(), Some(1), "a bad name fails: {bad:?}");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("no session named \"nope\""),
        "the error names what was not found: {err}"
    );
    let mut wrong = client(&m, &["attach", "nope"], 24, 80);
    assert_eq!(wrong.wait_exit(WAIT), 1, "attaching to a bad name fails");
    wrong.wait_for_text("no session named \"nope\"", WAIT);

    a_name_is_never_taken_for_another_machine(&m, &pi);

    let killed = cli(&m, &["kill", "spare"]);
    assert!(killed.status.success(), "pokeshell kill spare: {killed:?}");
    assert!(
        String::from_utf8_lossy(&killed.stdout).contains("2:spare"),
        "{killed:?}"
    );
    let listing = wait_ls(&m, "the spare session gone", |l| ls_row(l, "2:spare").is_none());
    assert!(
        ls_row(&listing, "1:work").is_some(),
        "the other one stays: {listing}"
    );
    m.pty
        .wait_until("the session list gone from the side pane", WAIT, |s| {
            !side_flat(s).contains("spare")
        });

    let killed = cli(&m, &["kill", "work"]);
    assert!(killed.status.success(), "pokeshell kill work: {killed:?}");
    let code = m.pty.wait_exit(WAIT);
    assert_eq!(code, 0, "the attached client ends with pi's clean exit");
    let listing = wait_ls(&m, "no session left", |l| ls_row(l, "1:work").is_none());
    assert!(listing.starts_with("no sessions"), "{listing}");
}

/// Issue 34, low 9, as found: a session made in a directory named `host:x` was named `host:x`,
/// offered so by completion and `ls`, and `attach host:x` ran ssh to the machine `host`. Now the
/// name it is offered is attached here (ssh, a stand-in that notes each call, is never run), and
/// `--name` with a `:` is refused. The session is killed again before returning.
fn a_name_is_never_taken_for_another_machine(m: &Matrix, pi: &str) {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("a temp dir");
    let dir = tmp.path().join("host:x");
    std::fs::create_dir(&dir).expect("a directory named host:x");
    let called = tmp.path().join("ssh-called");
    let ssh = tmp.path().join("ssh");
    let script = format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 255\n", called.display());
    std::fs::write(&ssh, script).expect("the stand-in ssh");
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let made = cli(m, &["new", "-d", "--pi", pi, "--dir", &dir.to_string_lossy()]);
    assert!(made.status.success(), "pokeshell new -d in host:x: {made:?}");
    // The name `ls --json` gives (completion offers the same, without the number).
    let mut name = String::new();
    wait_ls(m, "the session made in host:x", |_| {
        let out = cli(m, &["ls", "--json"]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let sessions = doc["sessions"].as_array().cloned().unwrap_or_default();
        name = sessions
            .iter()
            .find(|s| s["dir"].as_str() == Some(&*dir.to_string_lossy()))
            .and_then(|s| s["name"].as_str())
            .unwrap_or_default()
            .to_string();
        !name.is_empty()
    });

    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["attach", &name]);
    m.env.apply(&mut cmd);
    cmd.env("POKESHELL_SSH", &ssh);
    let mut pty = Pty::spawn(cmd, ROWS, COLS);
    let deadline = Instant::now() + START_WAIT;
    loop {
        let ssh_ran = std::fs::read_to_string(&called).unwrap_or_default();
        assert!(ssh_ran.is_empty(), "`attach {name}` ran ssh {ssh_ran:?}");
        if pty.try_wait_until(std::time::Duration::from_millis(200), |s| {
            s.contents().contains("mock-")
        }) {
            break;
        }
        if Instant::now() >= deadline {
            pty.fail(&format!("`attach {name}` did not show the session"));
        }
    }
    wait_ready(&pty);
    detach(&mut pty);
    assert_eq!(name, "host-x", "a name from a directory never holds `:`");
    let killed = cli(m, &["kill", &name]);
    assert!(killed.status.success(), "pokeshell kill {name}: {killed:?}");

    let refused = cli(m, &["new", "-d", "--pi", pi, "--name", "gpu:train"]);
    assert!(!refused.status.success(), "a name with `:`: {refused:?}");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("gpu:train") && err.contains("DEST:NAME"), "{err}");
}
