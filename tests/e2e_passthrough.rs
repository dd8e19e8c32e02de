//! End to end: when pi's arguments ask for a one-shot run, or stdin or stdout is not a terminal,
//! `pokeshell --pi PI -- ARGS` behaves as `PI ARGS`: the same stdout, stderr and exit status. Each
//! case runs real pi alone and then pokeshell, in the same isolated environment, against the
//! scripted model, with stdin and stdout on a real terminal (a PTY, so that only the arguments
//! decide) unless the case redirects them; stderr is a pipe of its own so the two streams are
//! compared apart. That an ordinary launch still opens pokeshell's screen is checked in
//! e2e_host.rs (`pi_editor_and_footer_are_visible_in_the_pane` and the rest) and below.

mod support;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use support::pi::PiEnv;
use support::pty::Pty;
use support::shell::wait_ready;
use support::{Step, WAIT, model_server};

/// Where the child's stdin comes from.
#[derive(Clone, Copy)]
enum Input {
    Terminal,
    /// A pipe holding this text, then closed.
    Piped(&'static str),
}

/// Where the child's stdout goes.
#[derive(Clone, Copy)]
enum Output {
    Terminal,
    Pipe,
}

/// What one run left: its status and everything it wrote (stdout as the terminal received it).
#[derive(Debug, PartialEq)]
struct Outcome {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// A new PTY (master, slave), 40×120, neither inherited by the child beyond its stdio.
fn open_pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 40,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors into the locals; name and termios may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    for fd in [master, slave] {
        // SAFETY: fcntl on a descriptor this process owns.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors were just opened and belong to nobody else.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

fn read_all(mut from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        // A PTY master ends with EIO once the last slave is closed: what was read still counts.
        let mut buf = [0u8; 8192];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
        }
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

/// `cmd` in a session of its own whose controlling terminal is the PTY, as a shell would start it;
/// stdin and stdout on the PTY or redirected; stderr a pipe.
fn start(mut cmd: Command, input: Input, output: Output) -> (Child, Option<OwnedFd>) {
    let (master, slave) = open_pty();
    let slave_fd = slave.as_raw_fd();
    let on_pty = || Stdio::from(slave.try_clone().expect("dup the pty slave"));
    cmd.stdin(match input {
        Input::Terminal => on_pty(),
        Input::Piped(_) => Stdio::piped(),
    });
    cmd.stdout(match output {
        Output::Terminal => on_pty(),
        Output::Pipe => Stdio::piped(),
    });
    cmd.stderr(Stdio::piped());
    // SAFETY: setsid and ioctl are async-signal-safe; the slave is still open until the exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 || libc::ioctl(slave_fd, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn the command");
    drop(cmd);
    drop(slave);
    if let (Input::Piped(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes()).expect("write the child's stdin");
    }
    (child, Some(master))
}

/// Waits for the child (at most `timeout`, else it is killed and the test fails) and collects what
/// it wrote.
#[track_caller]
fn finish(mut child: Child, master: Option<OwnedFd>, timeout: Duration) -> Outcome {
    let terminal = master.map(|fd| read_all(File::from(fd)));
    let stdout = child.stdout.take().map(read_all);
    let stderr = read_all(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the command ran longer than {timeout:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    let collect = |rx: mpsc::Receiver<String>| {
        rx.recv_timeout(WAIT)
            .expect("the output ends once the command has exited")
    };
    let on_terminal = terminal.map(collect).unwrap_or_default();
    Outcome {
        status,
        // With stdout on the terminal, the terminal holds it; with stdout redirected, nothing should
        // reach the terminal at all, which the comparison checks too.
        stdout: match stdout {
            Some(rx) => format!("{}{on_terminal}", collect(rx)),
            None => on_terminal,
        },
        stderr: collect(stderr),
    }
}

fn pi_alone(env: &PiEnv, args: &[&str]) -> Command {
    let mut cmd = Command::new(env.pi());
    cmd.args(env.pi_args(args));
    isolate(env, &mut cmd);
    cmd
}

fn pokeshell(env: &PiEnv, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.arg("--pi").arg(env.pi()).arg("--").args(env.pi_args(args));
    isolate(env, &mut cmd);
    cmd
}

fn isolate(env: &PiEnv, cmd: &mut Command) {
    cmd.env_clear().envs(env.env_vars()).current_dir(env.work_dir());
}

/// Runs pi alone, then pokeshell, with `args`: both outcomes.
#[track_caller]
fn both(env: &PiEnv, args: &[&str], input: Input, output: Output) -> (Outcome, Outcome) {
    let run = |cmd| {
        let (child, master) = start(cmd, input, output);
        finish(child, master, Duration::from_secs(30))
    };
    (run(pi_alone(env, args)), run(pokeshell(env, args)))
}

#[track_caller]
fn assert_same(env: &PiEnv, args: &[&str], input: Input, output: Output) -> Outcome {
    let (alone, hosted) = both(env, args, input, output);
    assert_eq!(
        alone, hosted,
        "pokeshell -- {args:?} differs from pi alone\n=== pi alone ===\n{alone}\n=== pokeshell ===\n{hosted}"
    );
    alone
}

/// An environment whose model answers every request with `answer`.
fn answering(answer: &str) -> (support::ModelServer, PiEnv) {
    let server = model_server();
    server.set_default(Step::text(answer));
    let env = PiEnv::new(&server.base_url());
    (server, env)
}

#[test]
fn version_is_pi_s_own() {
    let (_server, env) = answering("unused");
    let out = assert_same(&env, &["--version"], Input::Terminal, Output::Terminal);
    assert!(out.status.success(), "{out}");
    assert_eq!(out.stdout.trim(), "1.6.0", "{out}");
}

#[test]
fn help_is_pi_s_own() {
    let (_server, env) = answering("unused");
    let out = assert_same(&env, &["--help"], Input::Terminal, Output::Terminal);
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("--list-models"), "{out}");
    assert!(!out.stdout.contains("pokeshell"), "{out}");
}

#[test]
fn print_mode_answers_on_stdout() {
    let (server, env) = answering("Hello from the scripted model.");
    let out = assert_same(&env, &["-p", "say hi"], Input::Terminal, Output::Terminal);
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("Hello from the scripted model."), "{out}");
    let prompts: Vec<_> = server
        .model_requests()
        .iter()
        .map(|r| r.last_user_text())
        .collect();
    assert_eq!(prompts, [Some("say hi".to_string()), Some("say hi".to_string())]);
}

/// Per-run values in pi's JSON events: the session id, timestamps, how long the reply took, and
/// the id the scripted model numbers its replies with.
fn without_run_ids(stdout: &str) -> Vec<serde_json::Value> {
    fn scrub(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    if matches!(key.as_str(), "id" | "timestamp" | "durationMs" | "responseId") {
                        *value = serde_json::Value::Null;
                    } else {
                        scrub(value);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(scrub),
            _ => {}
        }
    }
    stdout
        .lines()
        .map(|line| {
            let mut v: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}"));
            scrub(&mut v);
            v
        })
        .collect()
}

#[test]
fn json_mode_streams_the_same_events() {
    let (_server, env) = answering("Events, not a screen.");
    let (alone, hosted) = both(
        &env,
        &["--mode", "json", "-p", "say hi"],
        Input::Terminal,
        Output::Terminal,
    );
    assert_eq!(
        (alone.status, &alone.stderr),
        (hosted.status, &hosted.stderr),
        "\n=== pi alone ===\n{alone}\n=== pokeshell ===\n{hosted}"
    );
    assert!(alone.status.success(), "{alone}");
    let events = without_run_ids(&alone.stdout);
    assert!(
        events.iter().any(|e| e["type"] == "agent_end"),
        "pi alone ran to the end: {alone}"
    );
    let hosted_events = without_run_ids(&hosted.stdout);
    assert_eq!(events.len(), hosted_events.len(), "\n{alone}\n{hosted}");
    for (a, h) in events.iter().zip(&hosted_events) {
        assert_eq!(a, h, "the first event that differs");
    }
}

#[test]
fn list_models_is_pi_s_own() {
    let (_server, env) = answering("unused");
    let out = assert_same(&env, &["--list-models"], Input::Terminal, Output::Terminal);
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("mock-model"), "{out}");
}

#[test]
fn rejected_arguments_get_pi_s_message_and_status() {
    let (_server, env) = answering("unused");
    let out = assert_same(&env, &["--mode", "yaml"], Input::Terminal, Output::Terminal);
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(out.stderr.contains("yaml"), "{out}");
}

#[test]
fn redirected_stdout_gets_the_answer_alone() {
    let (_server, env) = answering("Straight into the pipe.");
    // No -p: pi alone answers and exits because stdout is not a terminal.
    let out = assert_same(&env, &["say hi"], Input::Terminal, Output::Pipe);
    assert!(out.status.success(), "{out}");
    assert_eq!(out.stdout.trim(), "Straight into the pipe.", "{out}");
}

#[test]
fn piped_stdin_is_the_prompt() {
    let (server, env) = answering("Read from stdin.");
    let out = assert_same(&env, &[], Input::Piped("say hi from a pipe\n"), Output::Terminal);
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("Read from stdin."), "{out}");
    assert!(
        server.model_requests().iter().all(|r| r
            .last_user_text()
            .is_some_and(|t| t.contains("say hi from a pipe"))),
        "both runs sent the piped text"
    );
}

/// pokeshell replaced itself with pi: the process started as pokeshell is pi, so a signal reaches pi
/// alone and the status is pi's own.
#[test]
fn pi_takes_over_pokeshell_s_process_and_its_signals() {
    let server = model_server();
    server.set_default(Step::hang());
    let env = PiEnv::new(&server.base_url());
    let (mut statuses, mut executables) = (Vec::new(), Vec::new());
    for cmd in [pi_alone(&env, &["-p", "wait"]), pokeshell(&env, &["-p", "wait"])] {
        let (child, master) = start(cmd, Input::Terminal, Output::Terminal);
        let before = server.model_requests().len();
        server
            .wait_for_requests(before + 1, WAIT)
            .expect("pi's request reaches the model");
        // pi renames its process, so its executable tells what runs: node, not pokeshell.
        let exe = std::fs::read_link(format!("/proc/{}/exe", child.id())).expect("read the executable");
        assert_ne!(exe, std::path::Path::new(env!("CARGO_BIN_EXE_pokeshell")));
        executables.push(exe);
        // SAFETY: a signal to the child this test started and has not reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        statuses.push(finish(child, master, WAIT));
    }
    server.release_hangs();
    assert_eq!(executables[0], executables[1], "the same program runs");
    let [alone, hosted] = statuses.try_into().expect("two runs");
    assert_eq!(alone.status, hosted.status, "\n{alone}\n{hosted}");
    assert!(
        alone.status.signal().is_some() || alone.status.code() != Some(0),
        "SIGTERM ended pi: {alone}"
    );
}

/// Options that take a value keep it: `--name -p` names the session `-p`, and pi opens its screen
/// inside pokeshell's.
#[test]
fn an_option_value_that_looks_like_print_still_opens_the_screen() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let pty = Pty::spawn(env.pokeshell_command(&[], &["--name", "-p"]), 40, 120);
    wait_ready(&pty);
    pty.wait_for_text("Ctrl+] ? help", WAIT);
}
