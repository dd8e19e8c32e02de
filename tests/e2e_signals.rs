//! End to end: SIGTERM, SIGHUP and the loss of the terminal end pokeshell's client, give the
//! terminal back and leave pi working in the server, even when the client's event loop is stuck.
//! The test hook `POKESHELL_TEST_BLOCK_LOOP_ON=7` makes the client's loop block for good when the
//! byte 7 is read alone (it first sets the window title, so the test knows); the watchdog must then
//! do the loop's job. Ending a session for good (`pokeshell kill`) ends a child that ignores the
//! polite signals after its grace.

#[path = "e2e_signals/raw_pty.rs"]
mod raw_pty;
mod support;

use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use raw_pty::RawPty;
use support::pi::PiEnv;
use support::procs::{children_of, process_alive};
use support::pty::Pty;
use support::shell::{footer, side, wait_ready};
use support::{START_WAIT, WAIT, model_server};

/// The hook's byte, and the title the blocked loop sets.
const BLOCK: u8 = 7;
const BLOCKED_TITLE: &[u8] = b"pokeshell test hook: the loop is blocked";
/// The watchdog's 8 s, the child's 2 s to end, and room for a loaded machine.
const SHUTDOWN: Duration = Duration::from_secs(40);

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[track_caller]
fn assert_all_gone(pids: &[i32], what: &str) {
    let deadline = Instant::now() + WAIT;
    while pids.iter().any(|p| process_alive(*p)) {
        assert!(
            Instant::now() < deadline,
            "{what} still running after pokeshell exited: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// pi goes on in the server after its client ended.
#[track_caller]
fn assert_all_alive(pids: &[i32], what: &str) {
    assert!(!pids.is_empty(), "no {what} to check");
    assert!(
        pids.iter().all(|p| process_alive(*p)),
        "{what} ended with its client: {pids:?}"
    );
}

/// pokeshell hosting real pi, with the hook armed.
fn pi_command(env: &PiEnv) -> CommandBuilder {
    let mut cmd = env.pokeshell_command(&[], &[]);
    cmd.env("POKESHELL_TEST_BLOCK_LOOP_ON", BLOCK.to_string());
    cmd
}

/// Types the hook's byte and waits until the loop says it is blocked.
#[track_caller]
fn block_the_loop(pty: &mut Pty) {
    pty.send([BLOCK]);
    let deadline = Instant::now() + WAIT;
    loop {
        let raw = pty.raw_output();
        if contains(&raw, BLOCKED_TITLE) {
            return;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if !pty.wait_for_output(raw.len(), left) {
            pty.fail("the test hook never blocked the loop");
        }
    }
}

/// Everything pokeshell turned on is off again on the outer terminal.
#[track_caller]
fn assert_terminal_restored(pty: &Pty) {
    let raw = pty.raw_output();
    let start = raw
        .windows(8)
        .rposition(|w| w == b"\x1b[?1049h")
        .expect("pokeshell entered the alternate screen");
    let tail = &raw[start..];
    for (seq, what) in [
        (&b"\x1b[?1049l"[..], "alternate screen left"),
        (b"\x1b[?25h", "cursor shown"),
        (b"\x1b[?2004l", "bracketed paste off"),
    ] {
        assert!(contains(tail, seq), "{what}: {:?}", String::from_utf8_lossy(tail));
    }
    pty.with_screen(|s| {
        assert!(
            !s.alternate_screen(),
            "the outer terminal is back on its main screen"
        );
        assert!(!s.hide_cursor());
    });
    let lflag = pty.local_flags().expect("termios of the outer terminal");
    assert!(
        lflag & libc::ICANON != 0 && lflag & libc::ECHO != 0 && lflag & libc::ISIG != 0,
        "raw mode is off again"
    );
}

#[test]
fn sigterm_gives_the_terminal_back_while_the_loop_is_blocked_and_pi_goes_on() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn(pi_command(&env), 40, 120);
    wait_ready(&pty);
    let pi = children_of(pty.host_pid() as u32);
    assert!(!pi.is_empty(), "pi runs as the server's child");
    block_the_loop(&mut pty);
    pty.signal(libc::SIGTERM);
    let Some(code) = pty.try_wait_exit(SHUTDOWN) else {
        pty.fail("pokeshell ignored SIGTERM while its loop was blocked");
    };
    assert_eq!(
        code,
        128 + libc::SIGTERM,
        "the watchdog ends the client as SIGTERM would"
    );
    assert_terminal_restored(&pty);
    assert_all_alive(&pi, "pi");
    let listed = pty.home().expect("a home").pokeshell(&["ls"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("1:"), "the session is still listed: {text}");
}

#[test]
fn a_child_that_ignores_the_signal_is_killed_after_its_grace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pidfile = dir.path().join("child.pid");
    let line = format!(
        "sh -c 'trap \"\" TERM HUP; echo $$ > {}; echo child up; exec sleep 120'",
        pidfile.display()
    );
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["--command", &line]);
    let mut pty = Pty::spawn(cmd, 24, 80);
    pty.wait_for_text("child up", WAIT);
    let child: i32 = std::fs::read_to_string(&pidfile)
        .expect("child pid")
        .trim()
        .parse()
        .expect("a pid");
    let out = pty.home().expect("a home").pokeshell(&["kill", "1"]);
    assert!(out.status.success(), "pokeshell kill: {out:?}");
    let Some(code) = pty.try_wait_exit(SHUTDOWN) else {
        pty.fail("the session did not end after `pokeshell kill`");
    };
    assert_eq!(
        code,
        128 + libc::SIGKILL,
        "killed after its grace, and its client says so"
    );
    assert_all_gone(&[child], "the child that ignores SIGTERM and SIGHUP");
    assert_terminal_restored(&pty);
}

/// The terminal window closes (or `tmux kill-server`): the kernel hangs the terminal up, which sends
/// SIGHUP and makes every read fail. The client ends; pi goes on in the server.
#[test]
fn closing_the_terminal_detaches_while_the_loop_is_blocked_and_pi_goes_on() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let home = support::pty::ServerHome::new();
    let mut cmd = pi_command(&env);
    home.apply(&mut cmd);
    let mut term = RawPty::spawn(&cmd, 40, 120, true);
    term.wait_until("pi ready inside pokeshell", START_WAIT, |s, _| {
        s.contents().contains("mock-model")
            && footer(s).contains("📌 p:")
            && side(s).contains("connected")
            && !side(s).contains("not connected")
    });
    let host = home.server_pid().expect("a server runs");
    assert_ne!(
        host,
        term.pid() as i32,
        "pi runs in the server, not under the client"
    );
    let pi = children_of(host as u32);
    assert!(!pi.is_empty(), "pi runs as the server's child");
    term.send(&[BLOCK]);
    term.wait_until("the loop blocked", WAIT, |_, raw| contains(raw, BLOCKED_TITLE));
    term.hang_up();
    let code = term.wait_exit(SHUTDOWN);
    assert_eq!(
        code,
        Some(128 + libc::SIGHUP),
        "the client ends as a hangup would"
    );
    assert_all_alive(&pi, "pi");
    home.end_server();
    assert_all_gone(&pi, "pi, once its server ended");
}

/// Without a controlling terminal no SIGHUP comes: the failed read alone must be enough.
#[test]
fn a_lost_terminal_without_sighup_still_ends_the_client() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pidfile = dir.path().join("child.pid");
    let line = format!(
        "sh -c 'echo $$ > {}; echo child up; exec sleep 120'",
        pidfile.display()
    );
    let home = support::pty::ServerHome::new();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["--command", &line]);
    cmd.env("POKESHELL_TEST_BLOCK_LOOP_ON", BLOCK.to_string());
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    home.apply(&mut cmd);
    let mut term = RawPty::spawn(&cmd, 24, 80, false);
    term.wait_until("the child up", WAIT, |s, _| s.contents().contains("child up"));
    let child: i32 = std::fs::read_to_string(&pidfile)
        .expect("child pid")
        .trim()
        .parse()
        .expect("a pid");
    term.send(&[BLOCK]);
    term.wait_until("the loop blocked", WAIT, |_, raw| contains(raw, BLOCKED_TITLE));
    term.hang_up();
    let code = term.wait_exit(SHUTDOWN);
    assert_eq!(
        code,
        Some(128 + libc::SIGHUP),
        "a lost terminal ends the client as a hangup would"
    );
    assert_all_alive(&[child], "the hosted command");
    home.end_server();
    assert_all_gone(&[child], "the hosted command, once its server ended");
}

/// Whether `pid` catches `sig` (its `SigCgt` in /proc).
fn catches(pid: u32, sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (sig - 1)) != 0)
}

/// Ctrl+\ is a key for pi in raw mode, but a SIGQUIT for whoever has a terminal in cooked mode: for
/// pokeshell before it switched its terminal to raw mode, and for pi before it switched its own. A
/// user (or a random-input test) typing from the first instant must kill neither; what was typed
/// meanwhile reaches pi once its screen is up.
#[test]
fn ctrl_backslash_typed_while_pokeshell_and_pi_start_kills_neither() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn(env.pokeshell_command(&[], &[]), 40, 120);
    let pid = pty.pid();
    // From its first line pokeshell catches SIGQUIT until its terminal is raw; in the first
    // milliseconds, while the program loads, a Ctrl+\ ends it as it ends any program. Typing starts
    // in that window when this test sees it, else as soon as pokeshell has taken the terminal.
    let deadline = Instant::now() + WAIT;
    while !catches(pid, libc::SIGQUIT) && !contains(&pty.raw_output(), b"\x1b[?1049h") {
        if let Some(code) = pty.try_exit_code() {
            pty.fail(&format!("pokeshell exited with {code} while starting"));
        }
        if Instant::now() >= deadline {
            pty.fail("pokeshell never started");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let ready = |s: &vt100::Screen| {
        s.contents().contains("mock-model")
            && footer(s).contains("📌 p:")
            && side(s).contains("connected")
            && !side(s).contains("not connected")
    };
    let mut sent = 0;
    let deadline = Instant::now() + START_WAIT;
    while !pty.with_screen(ready) {
        if let Some(code) = pty.try_exit_code() {
            pty.fail(&format!(
                "pokeshell exited with {code} after {sent} Ctrl+\\ typed while starting"
            ));
        }
        if Instant::now() >= deadline {
            pty.fail("pi never got ready");
        }
        pty.send(b"\x1cearly ");
        sent += 1;
        // About a key every few milliseconds, like a fast typist.
        std::thread::sleep(Duration::from_millis(3));
    }
    assert!(sent > 10, "typed through the start-up: {sent}");
    let pi = children_of(pty.host_pid() as u32);
    assert!(pi.iter().all(|p| process_alive(*p)) && !pi.is_empty(), "pi lives");
    pty.wait_for_text("early early", WAIT);
    let out = pty.home().expect("a home").pokeshell(&["kill", "1"]);
    assert!(out.status.success(), "pokeshell kill: {out:?}");
    assert_eq!(pty.wait_exit(WAIT), 0, "pi ends normally, on SIGTERM");
}
