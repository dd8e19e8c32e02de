//! The stall matrix, last row: pi's node process is killed with SIGKILL while a tool runs. pokeshell
//! ends the tool pi left running and relaunches pi on its session (RST-D1; tests/e2e_restart.rs
//! follows the resume). Killed again while idle, pi is not relaunched: pokeshell says so, restores
//! the terminal, exits non-zero, and leaves nothing running.

mod support;

use std::time::{Duration, Instant};

use support::matrix::Matrix;
use support::{Step, WAIT, model_server};

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The parent pid of `pid` and the command line, from /proc.
fn stat(pid: i32) -> Option<(i32, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    Some((ppid, cmdline))
}

/// Every process descending from `root`.
fn descendants(root: i32) -> Vec<(i32, String)> {
    let all: Vec<(i32, i32, String)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter_map(|pid| stat(pid).map(|(ppid, cmd)| (pid, ppid, cmd)))
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, ppid, cmd) in &all {
            if *ppid == parent {
                out.push((*pid, cmd.clone()));
                frontier.push(*pid);
            }
        }
    }
    out
}

/// pi's node process: pokeshell's child (the launcher execs node, which renames itself "pi").
fn pi_node(m: &Matrix) -> i32 {
    let shell = m.pty.host_pid();
    descendants(shell)
        .iter()
        .find(|(pid, _)| stat(*pid).is_some_and(|(ppid, _)| ppid == shell))
        .map(|(pid, _)| *pid)
        .unwrap_or_else(|| m.pty.fail("pi is not running under pokeshell"))
}

#[test]
fn sigkill_to_pi_mid_run_or_idle_relaunches_it_and_sigterm_to_an_idle_one_ends_pokeshell_with_nothing_left_running()
 {
    let server = model_server();
    server.push(Step::bash("sleep 47"));
    server.push(Step::text("Back after the restart."));
    let mut m = Matrix::builder().start(server);
    m.submit("run the long sleep");
    m.wait_footer("⏳ bash");
    let node = pi_node(&m);
    let deadline = Instant::now() + WAIT;
    let sleeper = loop {
        let tree = descendants(node);
        if let Some((pid, _)) = tree.iter().find(|(_, cmd)| cmd.contains("sleep 47")) {
            break *pid;
        }
        if Instant::now() >= deadline {
            m.pty.fail(&format!("no running tool under pi: {tree:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: a signal to a process this test found under its own child.
    unsafe { libc::kill(node, libc::SIGKILL) };
    m.wait_record("RST-D1", "action", "pi was killed by signal 9");
    m.wait_text("Back after the restart.");
    assert!(m.pty.try_exit_code().is_none(), "pokeshell keeps running");
    let deadline = Instant::now() + WAIT;
    while alive(sleeper) || alive(node) {
        if Instant::now() >= deadline {
            m.pty.fail(&format!(
                "left running after pi was relaunched: pi {node} alive={}, tool {sleeper} alive={}",
                alive(node),
                alive(sleeper)
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }

    // Idle now: a pi killed outright comes back on its session (nothing to resume, so the model
    // hears nothing); one asked to end (SIGTERM) ends pokeshell as before.
    m.wait_side("● idle");
    let requests = m.chat().len();
    let node = pi_node(&m);
    // SAFETY: as above.
    unsafe { libc::kill(node, libc::SIGKILL) };
    let deadline = Instant::now() + WAIT;
    while m.records("RST-D1", "action").len() < 2 {
        if Instant::now() >= deadline {
            m.pty.fail("no second RST-D1 record after the idle pi was killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (old, shell) = (node, m.pty.host_pid());
    let deadline = Instant::now() + WAIT;
    let node = loop {
        let child = descendants(shell)
            .into_iter()
            .find(|(pid, _)| stat(*pid).is_some_and(|(ppid, _)| ppid == shell));
        match child {
            Some((pid, _)) if pid != old => break pid,
            _ if Instant::now() >= deadline => m.pty.fail("pi did not come back"),
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    m.wait_side("● idle");
    assert!(m.pty.try_exit_code().is_none(), "pokeshell keeps running");
    m.assert_model_quiet(Duration::from_secs(2));
    assert_eq!(m.chat().len(), requests, "nothing was resumed");
    // SAFETY: as above.
    unsafe { libc::kill(node, libc::SIGTERM) };
    let code = m.pty.wait_exit(WAIT);
    assert!(
        code == 0 || code == 128 + 15,
        "pokeshell passes pi's end on: {code}"
    );
    m.pty.with_screen(|s| {
        assert!(!s.alternate_screen(), "the alternate screen was left");
        assert!(!s.hide_cursor(), "the cursor is visible again");
    });
    assert!(!alive(node), "pi is gone");
}
