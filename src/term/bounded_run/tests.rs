use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::*;

/// A shell script in `dir`, executable.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn alive(pid: i32) -> bool {
    // A zombie is gone for our purpose: it holds no pipe and runs nothing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| !s[i + 2..].starts_with('Z')))
        .unwrap_or(false)
}

/// The pid a script wrote to `file` (`echo $! > file`), once it is there.
fn pid_in(file: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "{} never held a pid", file.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `program` on another thread and gives the answer, or fails the test when it does not come
/// within `within` (the old reader waited for the pipe's end forever).
fn run_within(program: PathBuf, limits: Limits, within: Duration) -> Result<Output, RunError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run(Command::new(&program).arg("--version"), limits));
    });
    rx.recv_timeout(within)
        .unwrap_or_else(|_| panic!("the run did not return within {within:?}"))
}

#[test]
fn a_plain_answer_is_read_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let pi = script(tmp.path(), "pi", "echo 1.6.0; echo oops >&2; exit 3");
    let out = run_within(
        pi,
        Limits::question(Duration::from_secs(10)),
        Duration::from_secs(20),
    )
    .unwrap();
    assert_eq!(out.stdout, b"1.6.0\n");
    assert_eq!(out.stderr, b"oops\n");
    assert_eq!(out.status.code(), Some(3));
}

/// Issue 21, item 1: a `--version` that leaves `yes` writing into the pipe grew the server by
/// hundreds of MB a second. The run ends at the cap, and `yes` is killed with its group.
#[test]
fn a_child_left_writing_is_cut_off_at_the_cap_and_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let pidfile = tmp.path().join("yes.pid");
    let pi = script(
        tmp.path(),
        "pi",
        &format!("echo 1.6.0; yes & echo $! > '{}'", pidfile.display()),
    );
    let err = run_within(
        pi,
        Limits::question(Duration::from_secs(10)),
        Duration::from_secs(5),
    )
    .unwrap_err();
    assert!(
        matches!(err, RunError::TooMuch { cap: VERSION_CAP, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("more than 64 KiB"), "{err}");
    let yes = pid_in(&pidfile);
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(yes) {
        assert!(Instant::now() < deadline, "`yes` ({yes}) still runs");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Issue 21, item 1: a `--version` that exits but leaves a child holding the pipe open without
/// writing hung the read forever. The run ends shortly after the exit, and the child is killed.
#[test]
fn a_child_holding_the_pipe_open_silently_is_killed_after_the_linger() {
    let tmp = tempfile::tempdir().unwrap();
    let pidfile = tmp.path().join("sleep.pid");
    let pi = script(
        tmp.path(),
        "pi",
        &format!("echo 1.6.0; sleep 60 & echo $! > '{}'", pidfile.display()),
    );
    let started = Instant::now();
    let err = run_within(
        pi,
        Limits::question(Duration::from_secs(30)),
        Duration::from_secs(5),
    )
    .unwrap_err();
    assert!(matches!(err, RunError::KeptOpen(_)), "{err:?}");
    assert!(err.to_string().contains("held its output open"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the deadline (30 s) was not what ended it"
    );
    let sleeper = pid_in(&pidfile);
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(sleeper) {
        assert!(Instant::now() < deadline, "the sleeper ({sleeper}) still runs");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// At the deadline the whole group goes: the program and what it started.
#[test]
fn a_hanging_program_and_its_children_are_killed_at_the_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let pidfile = tmp.path().join("bg.pid");
    let pi = script(
        tmp.path(),
        "pi",
        &format!("sleep 60 & echo $! > '{}'; exec sleep 60", pidfile.display()),
    );
    let err = run_within(
        pi,
        Limits::question(Duration::from_millis(300)),
        Duration::from_secs(5),
    )
    .unwrap_err();
    assert!(matches!(err, RunError::Deadline(_)), "{err:?}");
    assert!(err.to_string().contains("did not finish within 0.3 s"), "{err}");
    let bg = pid_in(&pidfile);
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(bg) {
        assert!(
            Instant::now() < deadline,
            "the background child ({bg}) still runs"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_missing_program_is_a_start_error() {
    let err = run(
        &mut Command::new("/nonexistent/pi"),
        Limits::question(Duration::from_secs(1)),
    )
    .unwrap_err();
    assert!(matches!(err, RunError::Start(_)), "{err:?}");
    assert!(err.to_string().contains("could not be started"), "{err}");
}

/// Issue 34, low 8: the room left was compared with everything read so far plus the new read, so
/// what was read counted twice and output was refused at about half the cap (a 2.3 MB listing as
/// "more than 4 MiB"). Three quarters of the cap is read whole; one byte over is refused.
#[test]
fn output_up_to_the_cap_is_read_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = 64 * 1024;
    let limits = |cap| Limits {
        deadline: Duration::from_secs(10),
        cap,
        linger: Duration::from_secs(2),
    };
    let pi = script(tmp.path(), "pi", &format!("head -c {} /dev/zero", cap * 3 / 4));
    let out = run_within(pi.clone(), limits(cap), Duration::from_secs(20)).unwrap();
    assert_eq!(out.stdout.len(), cap * 3 / 4);
    let pi = script(tmp.path(), "pi2", &format!("head -c {} /dev/zero", cap + 1));
    let err = run_within(pi, limits(cap), Duration::from_secs(20)).unwrap_err();
    assert!(matches!(err, RunError::TooMuch { .. }), "{err:?}");
}
