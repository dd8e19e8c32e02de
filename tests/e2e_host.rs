//! End to end: the pokeshell binary hosting real pi 1.6.0 against the scripted model, in a real PTY
//! whose screen is a vt100 parser.

mod support;

use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use support::pi::PiEnv;
use support::procs::{children_of, process_alive};
use support::pty::Pty;
use support::shell::{quit, submit, wait_ready};
use support::{Step, WAIT, model_server};

/// The width of pi's editor border: its longest run of `─` on one row.
fn rule_width(s: &vt100::Screen) -> usize {
    s.contents()
        .lines()
        .map(|l| {
            let (mut best, mut run) = (0, 0);
            for c in l.chars() {
                run = if c == '─' { run + 1 } else { 0 };
                best = best.max(run);
            }
            best
        })
        .max()
        .unwrap_or(0)
}

#[track_caller]
fn wait_rule_width(pty: &Pty, width: usize) {
    pty.wait_until(&format!("pi's editor border {width} wide"), WAIT, |s| {
        rule_width(s) == width
    });
}

fn pokeshell(env: &PiEnv, rows: u16, cols: u16) -> Pty {
    Pty::spawn(env.pokeshell_command(&[], &[]), rows, cols)
}

#[test]
fn pi_editor_and_footer_are_visible_in_the_pane() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    // Side pane (120 columns is wide enough) and pokeshell's footer.
    pty.wait_for_text("Ctrl+] ? help", WAIT);
    pty.wait_for_text("uptime", WAIT);
    // pi lays out for the pane, not the whole terminal: 120 - 32 columns.
    wait_rule_width(&pty, 88);
}

#[test]
fn typed_prompt_brings_the_scripted_answer() {
    let server = model_server();
    server.push(Step::text("The answer is forty-two."));
    let env = PiEnv::new(&server.base_url());
    let mut pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    submit(&mut pty, &server, "what is the answer");
    pty.wait_for_text("The answer is forty-two.", WAIT);
    assert_eq!(server.last_user_text().as_deref(), Some("what is the answer"));
}

#[test]
fn shift_enter_inserts_a_newline_in_pi_editor() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    pty.send("first line");
    pty.wait_for_text("first line", WAIT);
    // What a terminal in modifyOtherKeys mode sends for Shift+Enter (pi asked for that mode because
    // this host answers no kitty query).
    pty.send("\x1b[27;2;13~");
    pty.send("second line");
    pty.wait_until("two editor lines", WAIT, |s| {
        let text = s.contents();
        let first = text.lines().position(|l| l.contains("first line"));
        let second = text.lines().position(|l| l.contains("second line"));
        matches!((first, second), (Some(a), Some(b)) if b == a + 1)
    });
    assert!(server.model_requests().is_empty(), "Shift+Enter must not submit");
}

#[test]
fn host_resize_relays_pi() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    wait_rule_width(&pty, 88);
    pty.resize(30, 140);
    wait_rule_width(&pty, 108);
    // Below 100 columns the side pane hides itself and pi gets the whole width.
    pty.resize(30, 90);
    wait_rule_width(&pty, 90);
}

#[test]
fn prefix_s_toggles_the_side_pane_and_pi_relays() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    wait_rule_width(&pty, 88);
    pty.send("\x1ds");
    pty.wait_for_text_gone("uptime", WAIT);
    wait_rule_width(&pty, 120);
    pty.send("\x1ds");
    pty.wait_for_text("uptime", WAIT);
    wait_rule_width(&pty, 88);
}

#[test]
fn quit_command_ends_pokeshell_with_code_zero() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    let code = quit(&mut pty);
    assert_eq!(code, 0);
}

#[test]
fn hosted_command_exit_code_is_passed_through() {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["--command", "sh -c 'exit 7'"]);
    let mut pty = Pty::spawn(cmd, 24, 80);
    assert_eq!(pty.wait_exit(WAIT), 7);
}

/// A session a client typed into ends: the server ends by itself. The client's socket was being
/// read on the session's thread when the session ended; lending it again to the ended session would
/// keep the server's main thread busy for ever (the benchmark found that).
#[test]
fn the_server_ends_by_itself_after_the_session_a_client_typed_into_ended() {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args([
        "--command",
        "sh -c 'echo ready; read a; echo \"got $a\"; read b; exit 5'",
    ]);
    let mut pty = Pty::spawn(cmd, 24, 80);
    pty.wait_for_text("ready", WAIT);
    pty.send("one\r");
    pty.wait_for_text("got one", WAIT);
    let server = pty.host_pid();
    assert_ne!(server, pty.pid() as i32, "the session runs in a server");
    pty.send("two\r");
    assert_eq!(pty.wait_exit(WAIT), 5);
    let deadline = Instant::now() + Duration::from_secs(10);
    while process_alive(server) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !process_alive(server),
        "the server still runs 10 s after its last session ended"
    );
}

#[test]
fn death_by_signal_gives_128_plus_n() {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["--command", "sh -c 'kill -KILL $$'"]);
    let mut pty = Pty::spawn(cmd, 24, 80);
    assert_eq!(pty.wait_exit(WAIT), 128 + 9);
}

#[test]
fn sigterm_to_pokeshell_detaches_and_sigterm_to_its_server_leaves_no_pi_behind() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    let host = pty.host_pid();
    assert_ne!(
        host,
        pty.pid() as i32,
        "pi runs in the server, not under the terminal's client"
    );
    let pi_pids = children_of(host as u32);
    assert!(!pi_pids.is_empty(), "pi should run as the server's child");
    pty.signal(libc::SIGTERM);
    let code = pty.wait_exit(WAIT);
    assert_eq!(code, 128 + libc::SIGTERM, "the client ends as a SIGTERM asks");
    assert!(
        pi_pids.iter().all(|p| process_alive(*p)),
        "pi goes on in the server after its client ended"
    );
    let home = pty.home().expect("the harness gave pokeshell a home");
    home.end_server();
    let deadline = Instant::now() + WAIT;
    while pi_pids.iter().any(|p| process_alive(*p)) || process_alive(host) {
        assert!(
            Instant::now() < deadline,
            "pi {pi_pids:?} or the server {host} still running after the server was told to end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn missing_pi_is_reported_with_install_advice_and_code_127() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pokeshell"))
        .env("PATH", "/nonexistent")
        .env_remove("POKESHELL_PI")
        .output()
        .expect("run pokeshell");
    assert_eq!(out.status.code(), Some(127));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot find pi"), "{err}");
    assert!(
        err.contains("npm install -g @earendil-works/pi-coding-agent"),
        "{err}"
    );
}

#[test]
fn a_panic_of_the_server_restores_the_terminal_and_stops_the_child() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pidfile = dir.path().join("child.pid");
    let line = format!(
        "sh -c 'echo $$ > {}; printf \"\\033[?1000h\\033[>1u child up\\n\"; exec sleep 60'",
        pidfile.display()
    );
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["--command", &line]);
    cmd.env("POKESHELL_TEST_PANIC", "1");
    let mut pty = Pty::spawn(cmd, 24, 80);
    let code = pty.wait_exit(WAIT);
    // The session runs in the server, which panics; its client restores the terminal and says so.
    assert_eq!(code, 1, "the client of a server that panicked ends with 1");
    pty.wait_for_text("the pokeshell server went away", WAIT);
    let raw = pty.raw_output();
    // Everything after pokeshell last entered the alternate screen.
    let start = raw
        .windows(8)
        .rposition(|w| w == b"\x1b[?1049h")
        .expect("pokeshell entered the alternate screen");
    let tail = &raw[start..];
    let has = |seq: &[u8]| tail.windows(seq.len()).any(|w| w == seq);
    for (seq, what) in [
        (&b"\x1b[?1049l"[..], "alternate screen left"),
        (b"\x1b[?25h", "cursor shown"),
        (b"\x1b[?2004l", "bracketed paste off"),
        (b"\x1b[?1000l", "mouse reporting off"),
    ] {
        assert!(has(seq), "{what}: {:?}", String::from_utf8_lossy(tail));
    }
    pty.with_screen(|s| {
        assert!(
            !s.alternate_screen(),
            "the outer terminal is back on its main screen"
        );
        assert!(!s.hide_cursor());
        assert!(!s.bracketed_paste());
    });
    let lflag = pty.local_flags().expect("termios of the outer terminal");
    assert!(
        lflag & libc::ICANON != 0 && lflag & libc::ECHO != 0,
        "raw mode is off again"
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("child pid")
        .trim()
        .parse()
        .expect("a pid");
    let deadline = Instant::now() + WAIT;
    while process_alive(pid) {
        assert!(
            Instant::now() < deadline,
            "the child {pid} still runs after pokeshell's panic"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Without a terminal there is nothing to draw in: the program runs directly (see also
/// e2e_passthrough.rs for pi), with its own output and status and not one escape sequence.
#[test]
fn without_a_terminal_the_program_runs_directly_instead_of_garbling_anything() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pokeshell"))
        .args(["--command", "sh -c 'echo straight through; exit 3'"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run pokeshell");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "straight through\n");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// pi's Ctrl+Z stops its TUI and sends itself SIGTSTP, which the kernel discards inside pokeshell;
/// pokeshell suspends in its place and continues pi afterwards. In this harness pokeshell's own
/// SIGTSTP is discarded the same way (nothing does job control here), so the whole cycle runs at once:
/// the terminal is handed back, taken again, and pi redraws and answers.
#[test]
fn ctrl_z_suspends_with_pi_and_both_come_back() {
    let server = model_server();
    server.push(Step::text("back from the background"));
    let env = PiEnv::new(&server.base_url());
    let mut pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    let entered = |raw: &[u8]| raw.windows(8).filter(|w| *w == b"\x1b[?1049h").count();
    let before = entered(&pty.raw_output());
    pty.send("\x1a");
    let deadline = Instant::now() + WAIT;
    loop {
        let raw = pty.raw_output();
        if entered(&raw) > before {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if !pty.wait_for_output(raw.len(), left) {
            pty.fail("pokeshell never handed the terminal back and took it again");
        }
    }
    let raw = pty.raw_output();
    let last_enter = raw.windows(8).rposition(|w| w == b"\x1b[?1049h").unwrap_or(0);
    assert!(
        raw[..last_enter].windows(8).any(|w| w == b"\x1b[?1049l"),
        "the alternate screen was left before it was entered again"
    );
    wait_ready(&pty);
    submit(&mut pty, &server, "are you there");
    pty.wait_for_text("back from the background", WAIT);
}

#[test]
fn a_bracketed_paste_reaches_pi_whole_and_the_model_gets_it_verbatim() {
    let server = model_server();
    server.push(Step::text("pasted fine"));
    let env = PiEnv::new(&server.base_url());
    let mut pty = pokeshell(&env, 40, 120);
    wait_ready(&pty);
    // A Ctrl+] inside the paste is text, not pokeshell's prefix.
    pty.send("\x1b[200~first line\nsecond \x1d line\x1b[201~");
    let deadline = Instant::now() + WAIT;
    loop {
        pty.send("\r");
        if server.wait_for_requests(1, Duration::from_millis(300)).is_ok() {
            break;
        }
        if Instant::now() >= deadline {
            pty.fail("pi never sent the pasted prompt");
        }
    }
    // pi drops control characters from pastes itself; the two spaces show that pokeshell did not take
    // the Ctrl+] for its prefix (which would have eaten the space after it as a command key).
    assert_eq!(
        server.last_user_text().as_deref(),
        Some("first line\nsecond  line")
    );
    pty.wait_for_text("pasted fine", WAIT);
}

/// pi, not the `pi --version` check pokeshell also runs: its command line has no `--version`.
fn is_pi_session(pid: i32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| !c.split(|b| *b == 0).any(|arg| arg == b"--version"))
}

#[test]
fn pi_starts_while_the_terminal_probe_still_waits_and_gets_its_answers_after() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut cmd = env.pokeshell_command(&[], &[]);
    // Far longer than any wait below: the probe is still waiting whenever pi is seen running.
    cmd.env("POKESHELL_PROBE_TIMEOUT_MS", "600000");
    let mut pty = Pty::spawn(cmd, 40, 120);
    let deadline = Instant::now() + WAIT;
    while !children_of(pty.host_pid() as u32).into_iter().any(is_pi_session) {
        if Instant::now() >= deadline {
            pty.fail("pi was not started while the terminal probe waited for its answer");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The terminal answers the probe only now (DA1 ends it); pi's held queries are answered then.
    pty.send(b"\x1b[?62;22c");
    wait_ready(&pty);
}
