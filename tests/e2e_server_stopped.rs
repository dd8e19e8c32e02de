//! A terminal that stops reading while its session floods, on real pi 1.6.0 against the scripted
//! model, while pi streams a long answer (the pane scrolls with every frame).
//!
//! The server reads and writes an attached terminal itself (`pokeshell::ipc::terminal`), so a
//! client stopped with SIGSTOP does not stop its terminal: the flood keeps moving there. A terminal
//! that stops reading (here the test's own terminal stalls, as a hung terminal emulator or SSH
//! connection would) falls behind the server's bound for one client (lowered for the test through
//! `POKESHELL_TEST_CLIENT_BOUND`, so the flood need not last minutes); the server drops it, says so
//! in `pokeshell ls` at once, and goes on with the other terminal. Reading again, the dropped
//! terminal is given back, saying why it was detached and how to come back; `pokeshell attach`
//! shows the live session again.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::time::Duration;

use common::{client, detach, ls_cell, wait_ls, wait_ready};
use serde_json::json;
use support::matrix::{COLS, Matrix, ROWS};
use support::pty::ServerHome;
use support::{Step, WAIT, model_server};

const FINAL: &str = "The flood is over: every line was streamed.";
/// The bound for one client in this test: above what a reading client has queued between two reads,
/// below what a few seconds of the flood queue for a stopped one once its terminal is full.
const BOUND: &str = "16384";
/// How long the whole answer may take to stream, on a loaded machine.
const STREAM_LIMIT: Duration = Duration::from_secs(120);

#[test]
fn a_terminal_that_stops_reading_falls_behind_a_flood_is_dropped_and_says_why_when_it_reads_again() {
    let home = ServerHome::new();
    let server = model_server();
    // About forty seconds of long numbered lines, 90 characters every 20 ms: the pane scrolls all
    // along.
    let mut answer: String = (1..=2000)
        .map(|i| {
            format!("streamed line {i:>5} of the flood, long enough to fill most of the pane's width.\n")
        })
        .collect();
    answer.push_str(FINAL);
    server.push(Step::text_chunked(answer, 90, 20));
    let mut m = Matrix::builder()
        .settings(json!({}))
        .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
        .env("POKESHELL_TEST_CLIENT_BOUND", BOUND)
        .start(server);
    let mut stopped = client(&m, &["attach"], ROWS, COLS);
    wait_ready(&stopped);
    wait_ls(&m, "two terminals attached", |l| {
        ls_cell(l, "1:work", "ATTACHED").as_deref() == Some("2")
    });

    m.submit("print a great many lines");
    m.wait_text("streamed line");
    // The client stopped, its terminal still shows the flood: the server writes it.
    stopped.signal(libc::SIGSTOP);
    let seen = stopped.screen_text();
    stopped.wait_until("the flood moving on the stopped client's terminal", WAIT, |s| {
        s.contents() != seen
    });
    stopped.signal(libc::SIGCONT);
    stopped.stall(true);
    let listing = wait_ls(&m, "the stopped terminal dropped", |l| {
        ls_cell(l, "1:work", "ATTACHED").as_deref() == Some("1")
    });
    assert!(
        ls_cell(&listing, "1:work", "STATE").as_deref() == Some("working"),
        "the session goes on with its run: {listing}"
    );
    // The terminal that reads is still live: the flood keeps moving on it.
    let seen = m.pty.screen_text();
    m.pty
        .wait_until("the flood moving on the reading terminal", WAIT, |s| {
            s.contents() != seen
        });

    stopped.stall(false);
    let code = stopped.wait_exit(WAIT);
    assert_eq!(code, 0, "a terminal the server dropped ends like a detach");
    stopped.wait_for_text("stopped reading", WAIT);
    let said = stopped.screen_text();
    assert!(
        said.contains("fell 16 KiB behind") && said.contains("`pokeshell attach` to come back"),
        "the terminal says why it left and how to come back:\n{}",
        stopped.dump()
    );
    assert_eq!(
        said.matches("pokeshell attach").count(),
        1,
        "the way back is said once:\n{}",
        stopped.dump()
    );
    let flags = stopped.local_flags().expect("the terminal's flags");
    assert!(
        flags & libc::ICANON != 0 && flags & libc::ECHO != 0,
        "the terminal is given back cooked: {flags:#o}"
    );

    // The run finishes for the terminal that kept reading, and the server counts it alone.
    m.pty.wait_for_text(FINAL, STREAM_LIMIT);
    let listing = wait_ls(&m, "the run over", |l| {
        ls_cell(l, "1:work", "STATE").as_deref() == Some("idle")
    });
    assert_eq!(
        ls_cell(&listing, "1:work", "ATTACHED").as_deref(),
        Some("1"),
        "only the reading terminal is attached: {listing}"
    );
    assert_eq!(m.chat().len(), 1, "the run was the one prompt's");

    // Coming back shows the live session, whole.
    let mut back = client(&m, &["attach"], ROWS, COLS);
    wait_ready(&back);
    back.wait_for_text(FINAL, WAIT);
    wait_ls(&m, "the returning terminal counted", |l| {
        ls_cell(l, "1:work", "ATTACHED").as_deref() == Some("2")
    });
    detach(&mut back);
    detach(&mut m.pty);
}
