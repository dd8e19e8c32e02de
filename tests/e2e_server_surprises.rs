//! Issue 21, item 8, on real pi 1.6.0 against the scripted model: the server is killed mid-run and
//! pi's session file is deleted before the next server comes. The next server relaunches pi (a fresh
//! conversation), says so, and does not send "carry on" into the empty conversation.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{client, wait_file};
use serde_json::{Value, json};
use support::matrix::{COLS, Matrix, ROWS};
use support::pty::ServerHome;
use support::{Step, WAIT, model_server};

const RESTART_WAIT: Duration = Duration::from_secs(60);
const RESUME: &str = "pokeshell had to restart pi";

fn sessions_file(m: &Matrix) -> PathBuf {
    m.ledger_path().with_file_name("sessions.json")
}

#[test]
fn a_run_whose_session_file_is_gone_is_said_and_not_resumed() {
    let home = ServerHome::new();
    let server = model_server();
    server.push(Step::bash("sleep 40"));
    let mut m = Matrix::builder()
        .settings(json!({}))
        .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
        .start(server);
    m.submit("run the long sleep");
    m.wait_footer("⏳ bash");
    let text = wait_file(&sessions_file(&m), "the run under way", WAIT, |text| {
        serde_json::from_str::<Value>(text).is_ok_and(|v| {
            v["sessions"][0]["mid_run"] == true && v["sessions"][0]["session_file"].is_string()
        })
    });
    let list: Value = serde_json::from_str(&text).expect("JSON");
    let file = PathBuf::from(list["sessions"][0]["session_file"].as_str().expect("a file"));
    let pid = home.server_pid().expect("a server runs");
    let pis = support::procs::children_of(pid as u32);
    assert!(!pis.is_empty(), "the server runs pi");
    // SAFETY: SIGKILL to the server of this test's own runtime dir.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let code = m.pty.wait_exit(WAIT);
    assert_eq!(code, 1, "the client lost its server");
    // The old pi ends once its terminal is gone, and may write its session file on the way out: the
    // file is deleted only after, or a half file would be what the next server finds.
    let deadline = Instant::now() + WAIT;
    while pis.iter().any(|p| running(*p)) {
        assert!(Instant::now() < deadline, "the old pi did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_file(&file).expect("delete pi's session file");
    let requests_before = m.server.requests().len();

    m.pty = client(&m, &["attach"], ROWS, COLS);
    m.pty.wait_until("pi back in the new client", RESTART_WAIT, |s| {
        s.contents().contains("mock-")
    });
    let log = home.runtime_dir().join("pokeshell/server/log");
    let deadline = Instant::now() + WAIT;
    loop {
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        if said.contains(&format!("{} is gone", file.display())) && said.contains("not resumed") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server's log never said it:\n{said}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    m.assert_model_quiet(Duration::from_secs(6));
    let resumed: Vec<String> = m
        .trailing_user_texts()
        .into_iter()
        .filter(|t| t.contains(RESUME))
        .collect();
    assert!(
        resumed.is_empty(),
        "told to carry on into an empty conversation: {resumed:?}"
    );
    assert_eq!(
        m.server.requests().len(),
        requests_before,
        "the model heard nothing after the restart"
    );
    let restarts: Vec<Value> = m.ledger().into_iter().filter(|r| r["rule"] == "RST-S1").collect();
    assert!(restarts.is_empty(), "no resume recorded: {restarts:?}");
}

/// The process runs (a zombie does not: it only waits to be reaped).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rfind(')').map(|i| stat[i + 2..].starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}
