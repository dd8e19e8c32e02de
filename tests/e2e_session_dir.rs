//! Issue 34, medium 2: pi is never started in a directory other than the session's. Real pi 1.6.0
//! against the scripted model: the session's directory is removed while pi is mid-run, then pi is
//! killed. Before, pokeshell's relaunch started pi in `$HOME` (portable-pty silently replaces a
//! missing directory with it), pi asked "Session cwd does not exist → Continue in $HOME", and the
//! session sat there shown idle. Now pi is not started anywhere, and the user is told why and how to
//! go on: the footer and the side pane, `ls`, the ledger, a desktop notification; once the directory
//! is back, a poke starts pi there and the run carries on.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::matrix::{Matrix, side_flat, trailing_user_text};
use support::{Step, model_server};

const MARKER: &str = "quartz-harbour-17";
const CARRIED_ON: &str = "Carried on in the directory it belongs in.";
/// The prefix key (Ctrl+]).
const PREFIX: u8 = 0x1d;

/// Generous: under load, pi takes seconds to start again.
const RESTART_WAIT: Duration = Duration::from_secs(60);

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The processes pi runs as: the children of the pokeshell server, with their working directory.
fn pis(m: &Matrix) -> Vec<(i32, Option<PathBuf>)> {
    let host = m.pty.host_pid();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(host))
        .map(|pid| (pid, std::fs::read_link(format!("/proc/{pid}/cwd")).ok()))
        .collect()
}

fn session_state(m: &Matrix) -> String {
    let out = m.pty.home().expect("a server home").pokeshell(&["ls", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    doc["sessions"][0]["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn home_of(m: &Matrix) -> String {
    m.env
        .env_vars()
        .into_iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| v)
        .unwrap_or_default()
}

#[test]
fn a_relaunch_never_starts_pi_outside_its_directory_and_says_how_to_go_on() {
    let server = model_server();
    server.push(Step::bash("sleep 47"));
    server.push(Step::text(CARRIED_ON));
    let mut m = Matrix::builder().start(server);
    let dir: PathBuf = m.env.work_dir().to_path_buf();
    m.submit(&format!("run the long sleep, remember {MARKER}"));
    m.wait_footer("⏳ bash");
    let old: Vec<i32> = pis(&m).into_iter().map(|(pid, _)| pid).collect();
    assert_eq!(old.len(), 1, "one pi runs: {old:?}");

    // The directory goes away under the agent, then pi dies mid-run.
    std::fs::remove_dir_all(&dir).expect("remove the session's directory");
    // SAFETY: a signal to pi, found as the only child of this test's own server.
    unsafe { libc::kill(old[0], libc::SIGKILL) };

    // The user is told where they look: the side pane and the footer name the directory.
    let shown = dir.to_string_lossy().into_owned();
    m.pty.wait_until(
        "the reason pi was not started again, on the screen",
        RESTART_WAIT,
        |s| {
            let side = side_flat(s);
            side.contains("not started") && s.contents().contains("gone")
        },
    );
    let screen = m.pty.screen_text();
    assert!(
        screen.contains(&shown[shown.len().saturating_sub(20)..]),
        "the directory is named: {screen}"
    );
    // And pi is not running anywhere: not in $HOME, not elsewhere.
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let now = pis(&m);
        let home = home_of(&m);
        assert!(
            now.iter()
                .all(|(_, cwd)| cwd.as_deref() != Some(Path::new(&home))),
            "pi was started in $HOME: {now:?}"
        );
        // What the killed pi left running (its tool) may still be ending, in the deleted directory,
        // or be a zombie whose directory can no longer be read; nothing can have started since,
        // anywhere else.
        let left = format!("{} (deleted)", dir.display());
        assert!(
            now.iter()
                .all(|(_, cwd)| cwd.as_deref().is_none_or(|c| c == Path::new(&left))),
            "a pi runs: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let state = session_state(&m);
    assert!(
        state.contains("gave up") && state.contains("gone"),
        "ls says why: {state:?}"
    );
    let ledger = m.wait_record("RST-D2", "declined", "gone");
    assert!(
        ledger["reason"].as_str().unwrap_or_default().contains("poke"),
        "the ledger says how to go on: {ledger}"
    );
    let raw = String::from_utf8_lossy(&m.pty.raw_output()).into_owned();
    assert!(
        raw.contains("\x1b]9;pokeshell: pi was killed by signal 9 pi was not started again because"),
        "a desktop notification: {:?}",
        raw.split("\x1b]9;")
            .skip(1)
            .map(|n| n.split('\x07').next().unwrap_or_default())
            .collect::<Vec<_>>()
    );

    // The way on: the directory comes back and a poke starts pi there; the run carries on.
    std::fs::create_dir_all(&dir).expect("bring the directory back");
    m.pty.send([PREFIX, b'p']);
    let reqs = m
        .server
        .wait_until("the resume after the poke", RESTART_WAIT, |reqs| {
            reqs.iter()
                .filter_map(trailing_user_text)
                .any(|t| t.contains("restart"))
        })
        .unwrap_or_else(|e| m.pty.fail(&e.to_string()));
    let texts = reqs.last().map(|r| r.user_texts().join("\n")).unwrap_or_default();
    assert!(texts.contains(MARKER), "the same conversation: {texts}");
    m.wait_text(CARRIED_ON);
    let now = pis(&m);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!(
        now[0].1.as_deref(),
        Some(dir.as_path()),
        "pi runs in its directory"
    );
}
