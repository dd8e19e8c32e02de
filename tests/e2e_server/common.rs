//! Shared by the `e2e_server*` tests: pokeshell's server with real pi against the scripted model, in
//! a runtime dir the test owns (so that clients come and go while the server stays), more clients of
//! that server in PTYs of their own, and the command-line subcommands run against it.
// Each test file uses some of these.
#![allow(dead_code)]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use serde_json::Value;

use crate::support::matrix::{Matrix, side_flat};
use crate::support::pty::{Pty, ServerHome};
use crate::support::shell::footer;
use crate::support::{ModelServer, START_WAIT, WAIT};

/// The prefix key (Ctrl+]).
pub const PREFIX: u8 = 0x1d;

/// pokeshell (a client, which starts the server) hosting pi with `settings` over the defaults of
/// [`crate::support::matrix::fast_settings`]; the server lives in `home`'s runtime dir, the
/// ledger and the saved sessions in the matrix's state dir.
pub fn start(home: &ServerHome, server: ModelServer, settings: Value) -> Matrix {
    Matrix::builder()
        .settings(settings)
        .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
        .start(server)
}

/// Another pokeshell client (`args`, e.g. `["attach"]`) of the same server, in a terminal of
/// `rows`×`cols`, with the same environment as the first one.
pub fn client(m: &Matrix, args: &[&str], rows: u16, cols: u16) -> Pty {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(args);
    m.env.apply(&mut cmd);
    Pty::spawn(cmd, rows, cols)
}

/// `pokeshell ARGS` without a terminal, in the matrix's environment and work dir.
pub fn cli(m: &Matrix, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pokeshell"))
        .args(args)
        .env_clear()
        .envs(m.env.env_vars())
        .current_dir(m.env.work_dir())
        .stdin(Stdio::null())
        .output()
        .expect("run pokeshell")
}

/// `pokeshell ls`'s output; fails the test when it does not succeed.
#[track_caller]
pub fn ls(m: &Matrix) -> String {
    let out = cli(m, &["ls"]);
    assert!(out.status.success(), "pokeshell ls: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The row of `pokeshell ls` for the session labelled `label` (e.g. `1:work`).
pub fn ls_row(listing: &str, label: &str) -> Option<String> {
    listing
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label))
        .map(str::to_string)
}

/// One cell of `pokeshell ls`'s row for `label`, found under the header's `column` (e.g. `ATTACHED`).
pub fn ls_cell(listing: &str, label: &str, column: &str) -> Option<String> {
    let header = listing.lines().next()?;
    let start = header.find(column)?;
    let end = header[start + column.len()..]
        .find(|c: char| c.is_ascii_uppercase())
        .map(|i| start + column.len() + i);
    let row: Vec<char> = ls_row(listing, label)?.chars().collect();
    let end = end.unwrap_or(row.len()).min(row.len());
    Some(row.get(start..end)?.iter().collect::<String>().trim().to_string())
}

/// Polls `pokeshell ls` until `done` holds for its output; returns that output.
#[track_caller]
pub fn wait_ls(m: &Matrix, what: &str, mut done: impl FnMut(&str) -> bool) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let listing = ls(m);
        if done(&listing) {
            return listing;
        }
        assert!(
            Instant::now() < deadline,
            "`pokeshell ls` never showed {what}; it shows:\n{listing}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// pi is up in the session `pty` shows and its bridge is connected.
#[track_caller]
pub fn wait_ready(pty: &Pty) {
    pty.wait_until(
        "pi's footer, pokeshell's footer and a connected bridge",
        START_WAIT,
        |s| {
            s.contents().contains("mock-")
                && footer(s).contains("📌 p:")
                && side_flat(s).contains("bridge connected")
        },
    );
}

/// Presses prefix+d; the client must end with 0 and say that it detached.
#[track_caller]
pub fn detach(pty: &mut Pty) {
    pty.send([PREFIX, b'd']);
    let code = pty.wait_exit(WAIT);
    assert_eq!(code, 0, "a detached client ends well");
    pty.wait_for_text("detached from", WAIT);
}

/// Polls `file` until `done` holds for its text (a missing file reads as empty); returns the text.
#[track_caller]
pub fn wait_file(
    file: &std::path::Path,
    what: &str,
    timeout: Duration,
    mut done: impl FnMut(&str) -> bool,
) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if done(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} never held {what} within {timeout:?}; it holds:\n{text}",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The side pane's list of sessions, a line each as shown (`▸` marks the one on screen), in order.
pub fn session_list(s: &vt100::Screen) -> Vec<String> {
    crate::support::shell::side(s)
        .lines()
        .skip_while(|l| *l != "sessions")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// A `pokeshell.notifyCommand` that appends `<session>|<message>` to a file in `dir`: the command
/// and the file.
pub fn notify_script(dir: &std::path::Path) -> (String, std::path::PathBuf) {
    let notes = dir.join("notes.txt");
    let script = dir.join("record.sh");
    std::fs::write(
        &script,
        format!(
            "printf '%s|%s\\n' \"$POKESHELL_SESSION\" \"$1\" >> '{}'\n",
            notes.display()
        ),
    )
    .expect("write the notify script");
    (format!("sh '{}'", script.display()), notes)
}
