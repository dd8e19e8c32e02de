//! Restarts of real pi 1.6.0 inside pokeshell, against the scripted model: pi killed mid-run is
//! relaunched on the same session and the model's next request carries the earlier conversation and
//! pokeshell's resume; pi's event loop frozen mid-run (a test extension blocks it) is noticed,
//! ended, relaunched and resumed; pokeshell itself stopped for longer than `unresponsiveSeconds`
//! restarts nothing. The bridge's heartbeat is shortened to 1 s so that a 4 s limit is safe.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::matrix::{Matrix, side_flat, trailing_user_text};
use support::{RecordedRequest, Step, model_server, secs};

/// Generous: under load, pi takes seconds to start again.
const RESTART_WAIT: Duration = Duration::from_secs(60);
const MARKER: &str = "zebra-lighthouse-42";
const RESUME: &str = "pokeshell had to restart pi";

fn matrix(extension: Option<&str>) -> Matrix {
    let server = model_server();
    server.push(Step::bash("sleep 47"));
    server.push(Step::text("Picked the work up again after the restart."));
    let mut b = Matrix::builder()
        .settings(json!({"poke": {"unresponsiveSeconds": 4}}))
        .env("POKESHELL_HEARTBEAT_MS", "1000");
    if let Some(source) = extension {
        b = b.extension(source);
    }
    b.start(server)
}

fn stat(pid: i32) -> Option<(i32, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some((ppid, String::from_utf8_lossy(&cmdline).replace('\0', " ")))
}

/// pi's node process: the child of the pokeshell server it runs in.
fn pi_pid(m: &Matrix) -> i32 {
    let shell = m.pty.host_pid();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .find(|pid| stat(*pid).is_some_and(|(ppid, _)| ppid == shell))
        .unwrap_or_else(|| m.pty.fail("pi is not running under pokeshell"))
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Starts a run that stays in a long tool call; returns pi's pid.
fn mid_run(m: &mut Matrix) -> i32 {
    m.submit(&format!("run the long sleep, remember {MARKER}"));
    m.wait_footer("⏳ bash");
    pi_pid(m)
}

/// Waits for the request that carries pokeshell's resume after the restart.
fn resumed(m: &Matrix) -> RecordedRequest {
    let reqs = m
        .server
        .wait_until("the resume after the restart", RESTART_WAIT, |reqs| {
            reqs.iter()
                .filter_map(trailing_user_text)
                .any(|t| t.contains(RESUME))
        })
        .unwrap_or_else(|e| m.pty.fail(&e.to_string()));
    reqs.into_iter()
        .find(|r| trailing_user_text(r).is_some_and(|t| t.contains(RESUME)))
        .unwrap_or_else(|| m.pty.fail("no resume request"))
}

fn check_resumed_on_the_same_session(m: &Matrix, old_pid: i32, request: &RecordedRequest) {
    let texts = request.user_texts().join("\n");
    assert!(
        texts.contains(MARKER),
        "the relaunched pi carries the earlier conversation: {texts}"
    );
    assert_ne!(pi_pid(m), old_pid, "a new pi runs");
    m.wait_text("Picked the work up again after the restart.");
    m.wait_side("restarted: pi");
}

#[test]
fn rst_d1_pi_killed_mid_run_is_relaunched_on_its_session_and_resumed() {
    let mut m = matrix(None);
    let pid = mid_run(&mut m);
    let t0 = Instant::now();
    // SAFETY: a signal to pi, which this test found under its own child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let request = resumed(&m);
    eprintln!("kill → resumed request: {} ms", t0.elapsed().as_millis());
    check_resumed_on_the_same_session(&m, pid, &request);
    m.wait_record("RST-D1", "action", "killed by signal 9");
    m.wait_record("RST-R1", "action", "sent the resume after pi's restart");
    let deadline = Instant::now() + secs(15);
    while std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| std::fs::read_to_string(e.path().join("cmdline")).is_ok_and(|c| c.contains("sleep 47")))
    {
        assert!(Instant::now() < deadline, "the killed pi's tool was left running");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(m.pty.try_exit_code().is_none(), "pokeshell keeps running");
}

/// Blocks pi's event loop for ten minutes once the marker file appears (and removes it, so the
/// relaunched pi runs normally).
fn freezer(marker: &str) -> String {
    format!(
        r#"
import {{ existsSync, unlinkSync }} from "node:fs";

export default function (_pi: any) {{
	const timer = setInterval(() => {{
		if (existsSync({marker:?})) {{
			unlinkSync({marker:?});
			Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600000);
		}}
	}}, 50);
	timer.unref();
}}
"#
    )
}

#[test]
fn rst_f1_a_frozen_pi_mid_run_is_restarted_and_resumed() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let marker = dir.path().join("freeze-now");
    let source = freezer(&marker.to_string_lossy());
    let mut m = matrix(Some(&source));
    let pid = mid_run(&mut m);
    std::fs::write(&marker, b"").expect("write the marker");
    let t0 = Instant::now();
    let request = resumed(&m);
    eprintln!("freeze → resumed request: {} ms", t0.elapsed().as_millis());
    check_resumed_on_the_same_session(&m, pid, &request);
    m.wait_record("RST-F1", "action", "pi stopped responding");
    assert!(!alive(pid), "the frozen pi was ended");
    assert!(!marker.exists(), "the extension saw the marker");
}

#[test]
fn pokeshell_stopped_longer_than_the_limit_restarts_nothing() {
    let mut m = matrix(None);
    let pid = mid_run(&mut m);
    let shell = m.pty.host_pid();
    // SAFETY: stopping and continuing the pokeshell server of the test's own home.
    unsafe { libc::kill(shell, libc::SIGSTOP) };
    std::thread::sleep(secs(8));
    // SAFETY: as above.
    unsafe { libc::kill(shell, libc::SIGCONT) };
    // Long enough for a wrong decision to show: the limit, the grace and a start of pi.
    std::thread::sleep(secs(10));
    assert!(alive(pid), "pi was not restarted");
    assert_eq!(pi_pid(&m), pid);
    let restarts: Vec<_> = m.ledger().into_iter().filter(|r| r["rule"] == "RST-F1").collect();
    assert!(restarts.is_empty(), "{restarts:?}");
    m.pty.with_screen(|s| {
        let side = side_flat(s);
        assert!(!side.contains("restarted"), "{side}");
    });
    m.wait_footer("⏳ bash");
}

/// A tracer that seizes a process and never collects it, as a debugger that holds it would: once
/// killed, the process stays a zombie its own parent cannot reap until the tracer goes.
struct Tracer(i32);

impl Tracer {
    fn seize(pid: i32) -> Tracer {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into the array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "a pipe");
        // SAFETY: the child only makes system calls (ptrace, write, pause, _exit) before it ends,
        // which is all a fork of a threaded process may do.
        let tracer = unsafe { libc::fork() };
        assert!(tracer >= 0, "fork");
        if tracer == 0 {
            // SAFETY: as above.
            unsafe {
                let ok = libc::ptrace(libc::PTRACE_SEIZE, pid, 0, 0) == 0;
                libc::write(fds[1], [u8::from(ok)].as_ptr().cast(), 1);
                loop {
                    libc::pause();
                }
            }
        }
        let mut ok = [0u8];
        // SAFETY: reads one byte into a local buffer; closes our ends.
        unsafe {
            libc::read(fds[0], ok.as_mut_ptr().cast(), 1);
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        let t = Tracer(tracer);
        assert_eq!(ok[0], 1, "the tracer could not seize pi");
        t
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        // SAFETY: ends and reaps the tracer this test forked.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
            libc::waitpid(self.0, std::ptr::null_mut(), 0);
        }
    }
}

fn zombie_or_gone(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rfind(')').is_some_and(|i| s[i + 2..].starts_with('Z'))
    })
}

#[test]
fn rst_k1_a_frozen_pi_held_by_a_tracer_is_left_behind_and_a_new_pi_starts() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let marker = dir.path().join("freeze-now");
    let source = freezer(&marker.to_string_lossy());
    let mut m = matrix(Some(&source));
    let pid = mid_run(&mut m);
    let tracer = Tracer::seize(pid);
    std::fs::write(&marker, b"").expect("write the marker");
    let request = resumed(&m);
    assert!(zombie_or_gone(pid), "the old pi was killed");
    assert!(
        std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "and, held by the tracer, it is not reaped: the new pi started without it"
    );
    let texts = request.user_texts().join("\n");
    assert!(
        texts.contains(MARKER),
        "the new pi carries the conversation: {texts}"
    );
    m.wait_record("RST-K1", "action", "not reaped");
    m.wait_record("RST-R1", "action", "sent the resume after pi's restart");
    m.wait_text("Picked the work up again after the restart.");
    // The tracer lets go: the old pi is reaped in the background.
    drop(tracer);
    let deadline = Instant::now() + secs(15);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "the old pi was never reaped");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(m.pty.try_exit_code().is_none(), "pokeshell keeps running");
}
