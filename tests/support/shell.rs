//! Driving the pokeshell binary hosting real pi: readiness, prompts, and reading its chrome (the
//! footer line and the side pane) off the outer screen.

use std::time::{Duration, Instant};

use super::pi::PiEnv;
use super::pty::Pty;
use super::{START_WAIT, WAIT};
use pokeshell::demo::model::ModelServer;

/// pokeshell at `rows`×`cols` hosting pi in `env`, with `args` for pokeshell itself.
pub fn spawn(env: &PiEnv, args: &[&str], rows: u16, cols: u16) -> Pty {
    Pty::spawn(env.pokeshell_command(args, &[]), rows, cols)
}

/// The last screen row: pokeshell's footer.
pub fn footer(s: &vt100::Screen) -> String {
    let (rows, cols) = s.size();
    s.rows(0, cols.get())
        .nth(rows.get() as usize - 1)
        .unwrap_or_default()
}

/// The side pane's text: every row right of its border (`│`), joined with newlines.
pub fn side(s: &vt100::Screen) -> String {
    s.contents()
        .lines()
        .filter_map(|l| l.rfind('│').map(|i| l[i + '│'.len_utf8()..].trim().to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// pi is up inside pokeshell and its bridge has connected.
#[track_caller]
pub fn wait_ready(pty: &Pty) {
    pty.wait_until(
        "pi's footer, pokeshell's footer and a connected bridge",
        START_WAIT,
        |s| {
            let text = s.contents();
            text.contains("mock-model")
                && footer(s).contains("📌 p:")
                && side(s).contains("connected")
                && !side(s).contains("not connected")
        },
    );
}

/// Types `/quit` and presses Enter until pokeshell exits (pi may still be starting, when Enter is
/// ignored, or show its command menu first); returns the exit code.
#[track_caller]
pub fn quit(pty: &mut Pty) -> i32 {
    pty.send("/quit");
    pty.wait_for_text("/quit", WAIT);
    let deadline = Instant::now() + WAIT;
    loop {
        pty.send("\r");
        if let Some(code) = pty.try_wait_exit(Duration::from_millis(500)) {
            return code;
        }
        if Instant::now() >= deadline {
            pty.fail("pokeshell did not exit after /quit");
        }
    }
}

/// Types `prompt` and presses Enter until the model has the request (pi ignores Enter while it is
/// still starting up).
#[track_caller]
pub fn submit(pty: &mut Pty, server: &ModelServer, prompt: &str) {
    let before = server.model_requests().len();
    pty.send(prompt);
    let shown: String = prompt.chars().take(20).collect();
    pty.wait_for_text(&shown, WAIT);
    let deadline = Instant::now() + WAIT;
    loop {
        pty.send("\r");
        if server
            .wait_for_requests(before + 1, Duration::from_millis(300))
            .is_ok()
        {
            return;
        }
        if Instant::now() >= deadline {
            pty.fail(&format!("pi never sent {prompt:?} to the model"));
        }
    }
}
