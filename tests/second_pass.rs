//! Issue 34, second red-team pass: what did not hold, each as it was found, on the real binary (a
//! server only where one is needed): a timeout too large for a `Duration` (1e308 seconds,
//! u64::MAX) made `pokeshell wait` panic, and made `pokeshell mcp`'s `wait_for` panic in its task,
//! so that the call was never answered (pi waits for it until its own deadline); another machine's
//! output reached the terminal raw; reading a session's changes ran the repository's fsmonitor.

#[path = "server_hardening/common.rs"]
mod common;
mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use common::Home;
use support::WAIT;

#[test]
fn a_huge_wait_timeout_is_an_answer_not_a_panic() {
    let home = Home::new();
    for t in ["1e308", "18446744073709551615", "1e20"] {
        let out = home.pokeshell(&["wait", "w", "--timeout", t]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "--timeout {t}: {err}");
        assert_eq!(out.status.code(), Some(1), "--timeout {t}: {out:?}");
        assert!(err.contains("no pokeshell server runs"), "--timeout {t}: {err}");
    }
}

#[test]
fn mcp_answers_a_wait_for_with_a_huge_timeout() {
    let home = Home::new();
    let mut mcp = home
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pokeshell mcp");
    let mut stdin = mcp.stdin.take().expect("stdin");
    let stdout = mcp.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let send = |stdin: &mut std::process::ChildStdin, v: serde_json::Value| {
        writeln!(stdin, "{v}").expect("write to pokeshell mcp");
    };
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "redteam", "version": "1"}}}),
    );
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "wait_for", "arguments": {"session": "w", "timeout_seconds": 1e308}}}),
    );
    let deadline = std::time::Instant::now() + WAIT;
    let answer = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx
            .recv_timeout(left.max(Duration::from_millis(1)))
            .unwrap_or_else(|_| panic!("wait_for was never answered"));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if v["id"] == 2 {
            break v;
        }
    };
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let said = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(said.contains("no pokeshell server runs"), "{answer}");
    drop(stdin);
    let _ = mcp.kill();
    let _ = mcp.wait();
}

/// Second pass: `read`, `wait`, `events`, `send` and `diff` on `DEST:NAME` passed the other
/// machine's output on as it was (found with an ssh that answers like a machine taken over):
/// a clipboard write (OSC 52), a title and a screen clear reached the user's terminal.
#[test]
fn another_machines_output_cannot_drive_this_terminal() {
    let home = Home::new();
    let ssh = home.work.join("hostile-ssh");
    std::fs::write(
        &ssh,
        "#!/bin/sh\nprintf 'reply \\033]52;c;cHduZWQ=\\007 \\033]0;TITLE\\007\\033[2J \\033[32mgreen\\033[m\\n'\n\
         printf 'err \\033]52;c;ZXJy\\007\\n' >&2\nexit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&ssh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let ssh = ssh.to_string_lossy().into_owned();
    for args in [
        &["read", "box:w"][..],
        &["wait", "box:w"],
        &["events", "box:w"],
        &["send", "box:w", "hi"],
        &["diff", "box:w", "--no-pager", "--color=always"],
    ] {
        let out = home
            .command(args)
            .env("POKESHELL_SSH", &ssh)
            .output()
            .expect("run pokeshell");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            stdout.contains("reply \\x1b]52;c;cHduZWQ=\\x07"),
            "{args:?}: {stdout:?}"
        );
        let raw = stdout.replace("\x1b[32m", "").replace("\x1b[m", "");
        let colour_kept = args[0] == "diff";
        assert!(
            !raw.contains('\x1b'),
            "{args:?}: raw escapes on stdout: {stdout:?}"
        );
        assert_eq!(
            stdout.contains("\x1b[32mgreen\x1b[m"),
            colour_kept,
            "{args:?}: {stdout:?}"
        );
        assert!(
            !stderr.contains('\x1b'),
            "{args:?}: raw escapes on stderr: {stderr:?}"
        );
    }
}

/// Second pass: `pokeshell diff` (and so the Changes view, which reads every 5 s while the agent
/// works, and prefix+r) ran the program the repository's `core.fsmonitor` names, as the server: the
/// checkout and its configuration are the agent's.
#[test]
fn reading_the_changes_runs_no_fsmonitor_of_the_repository() {
    let home = Home::new();
    let repo = home.work.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(repo.join("f.txt"), "base\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "base"]);
    let out = home
        .command(&[
            "new",
            "-d",
            "--name",
            "fsm",
            "--dir",
            &repo.to_string_lossy(),
            "--command",
            "sleep 600",
        ])
        .output()
        .expect("run pokeshell new");
    assert!(out.status.success(), "{out:?}");
    home.wait_listed("fsm");
    let marker = home.work.join("fsmonitor-ran");
    let hook = home.work.join("fsmonitor.sh");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\nexit 1\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(&["config", "core.fsmonitor", &hook.to_string_lossy()]);
    std::fs::write(repo.join("f.txt"), "base\nchanged\n").unwrap();
    let out = home.pokeshell(&["diff", "fsm", "--no-pager", "--color=never"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("+changed"), "{out:?}");
    assert!(!marker.exists(), "the repository's fsmonitor ran");
}
