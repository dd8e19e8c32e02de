//! Issue 34, medium 2: pi is never started in a directory other than the session's. Real pi 1.6.0
//! against the scripted model: the session's directory is removed while pi is mid-run, then pi is
//! killed. Before, pokeshell's relaunch started pi in `$HOME` (portable-pty silently replaces a
//! missing directory with it), pi asked "Session cwd does not exist → Continue in $HOME", and the
//! session sat there shown idle. Now pi is not started anywhere, and the user is told why and how to
//! go on: the footer and the side pane, `ls`, the ledger, a desktop notification; once the directory
//! is back, a poke starts pi there and the run carries on.

//!
//! Low 10: a session whose directory is a link pointed at another tree while no server ran is not
//! brought back there: pi is not started in the other tree, and the log and the next client say
//! why and how to go on.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{cli, start, wait_file};
use serde_json::{Value, json};
use support::matrix::{Matrix, side_flat, trailing_user_text};
use support::pty::ServerHome;
use support::{Step, WAIT, model_server};

const MARKER: &str = "quartz-harbour-17";
const CARRIED_ON: &str = "Carried on in the directory it belongs in.";
const LINKED: &str = "Hello from the tree the link led to.";
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

/// The children of process `parent`, with their working directory.
fn children_of(parent: i32) -> Vec<(i32, Option<PathBuf>)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .map(|pid| (pid, std::fs::read_link(format!("/proc/{pid}/cwd")).ok()))
        .collect()
}

#[test]
fn a_restore_never_starts_pi_where_its_directory_s_link_now_leads() {
    let home = ServerHome::new();
    let mut m = start(&home, model_server(), json!({}));
    let tmp = tempfile::tempdir().expect("a temp dir");
    let (a, b, link) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("link"),
    );
    for d in [&a, &b] {
        std::fs::create_dir(d).expect("a tree");
    }
    std::os::unix::fs::symlink(&a, &link).expect("the link");
    let (a, b) = (a.canonicalize().unwrap(), b.canonicalize().unwrap());
    let pi = m.env.pi().to_string_lossy().into_owned();
    // A session with a conversation in the link's tree: its first prompt answered.
    m.server.push(Step::text(LINKED));
    let link_text = link.to_string_lossy().into_owned();
    let mut args: Vec<String> = [
        "new", "-d", "--pi", &pi, "--name", "linked", "--dir", &link_text, "--",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    args.extend(m.env.pi_args(&[&format!("say hello, remember {MARKER}")]));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let made = cli(&m, &args);
    assert!(made.status.success(), "pokeshell new -d in the link: {made:?}");
    // Saved with where its directory led and pi's conversation.
    let list = m.ledger_path().with_file_name("sessions.json");
    let a_text = a.to_string_lossy().into_owned();
    wait_file(&list, "the linked session saved with its tree", WAIT, |text| {
        let doc: Value = serde_json::from_str(text).unwrap_or_default();
        doc["sessions"].as_array().is_some_and(|all| {
            all.iter().any(|s| {
                s["name"] == "linked"
                    && s["real_dir"] == a_text.as_str()
                    && s["mid_run"] == false
                    && s["session_file"].as_str().is_some_and(|f| Path::new(f).is_file())
            })
        })
    });
    // Only the linked session is left; the server is stopped (its list kept).
    let killed = cli(&m, &["kill", "work"]);
    assert!(killed.status.success(), "pokeshell kill work: {killed:?}");
    assert_eq!(m.pty.wait_exit(WAIT), 0, "the work session's client ends");
    home.end_server();
    assert!(home.server_pid().is_none(), "the server ended");

    // The link is pointed at the other tree while no server runs; a new server starts (for a
    // session that is not pi, in a third directory).
    std::fs::remove_file(&link).expect("remove the link");
    std::os::unix::fs::symlink(&b, &link).expect("the link, to b");
    let c = tmp.path().join("c");
    std::fs::create_dir(&c).expect("a third directory");
    let plain = cli(
        &m,
        &[
            "--command",
            "sleep 600",
            "new",
            "-d",
            "--name",
            "plain",
            "--dir",
            &c.to_string_lossy(),
        ],
    );
    assert!(
        plain.status.success(),
        "the new server's first session: {plain:?}"
    );
    let server = home.server_pid().expect("a new server");

    // pi is not started: not in the tree the link leads to now, not in the one it led to.
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        let kids = children_of(server);
        assert!(
            kids.iter()
                .all(|(_, cwd)| cwd.as_deref() != Some(b.as_path()) && cwd.as_deref() != Some(a.as_path())),
            "a pi was started for the linked session: {kids:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Why, and the way on: in the log, and told to the next client.
    let leads = format!("now leads to {}", b.display());
    let log = home.runtime_dir().join("pokeshell/server/log");
    let logged = wait_file(&log, "the reason in the server's log", WAIT, |t| {
        t.contains(&leads)
    });
    let line = logged.lines().find(|l| l.contains(&leads)).unwrap_or_default();
    assert!(
        line.contains("linked") && line.contains(&a_text) && line.contains("pi --session"),
        "the log names the session, its tree and the way on: {line}"
    );
    let listed = cli(&m, &["ls"]);
    let told = format!(
        "{}{}",
        String::from_utf8_lossy(&plain.stderr),
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(told.contains(&leads), "the next client is told: {told}");
    let rows = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(!rows.contains("linked"), "not brought back: {rows}");

    let _ = cli(&m, &["kill", "plain"]);
}
