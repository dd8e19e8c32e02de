//! End to end: when pi's arguments ask for a one-shot run, or stdin or stdout is not a terminal,
//! `pokeshell --pi PI -- ARGS` behaves as `PI ARGS`: the same stdout, stderr and exit status. Each
//! case runs real pi alone and then pokeshell, in the same isolated environment, against the
//! scripted model, with stdin and stdout on a real terminal (a PTY, so that only the arguments
//! decide) unless the case redirects them; stderr is a pipe of its own so the two streams are
//! compared apart. That an ordinary launch still opens pokeshell's screen is checked in
//! e2e_host.rs (`pi_editor_and_footer_are_visible_in_the_pane` and the rest) and below.

mod support;
mod e2e_passthrough {
    pub mod terminal;
}

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

use e2e_passthrough::terminal::{Input, Outcome, Output, finish, start};
use support::pi::PiEnv;
use support::pty::Pty;
use support::shell::wait_ready;
use support::{Step, WAIT, model_server};

/// pi with exactly these arguments (`env.pi_args` adds the test's session dir).
fn pi_alone(env: &PiEnv, args: &[String]) -> Command {
    let mut cmd = Command::new(env.pi());
    cmd.args(args);
    isolate(env, &mut cmd);
    cmd
}

fn pokeshell(env: &PiEnv, args: &[String]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.arg("--pi").arg(env.pi()).arg("--").args(args);
    isolate(env, &mut cmd);
    cmd
}

fn isolate(env: &PiEnv, cmd: &mut Command) {
    cmd.env_clear().envs(env.env_vars()).current_dir(env.work_dir());
}

/// Runs pi alone, then pokeshell, with `args`: both outcomes.
#[track_caller]
fn both(env: &PiEnv, args: &[String], input: Input, output: Output) -> (Outcome, Outcome) {
    let run = |cmd| {
        let (child, master) = start(cmd, input, output);
        finish(child, master, Duration::from_secs(30))
    };
    (run(pi_alone(env, args)), run(pokeshell(env, args)))
}

#[track_caller]
fn assert_same(env: &PiEnv, args: &[String], input: Input, output: Output) -> Outcome {
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
    let out = assert_same(
        &env,
        &env.pi_args(&["--version"]),
        Input::Terminal,
        Output::Terminal,
    );
    assert!(out.status.success(), "{out}");
    assert_eq!(out.stdout.trim(), "1.6.0", "{out}");
}

#[test]
fn help_is_pi_s_own() {
    let (_server, env) = answering("unused");
    let out = assert_same(&env, &env.pi_args(&["--help"]), Input::Terminal, Output::Terminal);
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("--list-models"), "{out}");
    assert!(!out.stdout.contains("pokeshell"), "{out}");
}

#[test]
fn print_mode_answers_on_stdout() {
    let (server, env) = answering("Hello from the scripted model.");
    let out = assert_same(
        &env,
        &env.pi_args(&["-p", "say hi"]),
        Input::Terminal,
        Output::Terminal,
    );
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("Hello from the scripted model."), "{out}");
    let prompts: Vec<_> = server
        .model_requests()
        .iter()
        .map(|r| r.last_user_text())
        .collect();
    assert_eq!(prompts, [Some("say hi".to_string()), Some("say hi".to_string())]);
}

/// Per-run values in pi's JSON events: the session id, timestamps, how long the reply took, the id
/// the scripted model numbers its replies with, and the running usage inside a streamed message
/// (whether the usage chunk is read before or after the first text chunk depends on how the stream's
/// packets arrive, in pi alone too).
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
            if v["type"] == "message_update"
                && let Some(map) = v.as_object_mut()
            {
                map.remove("usage");
            }
            v
        })
        .collect()
}

#[test]
fn json_mode_streams_the_same_events() {
    let (_server, env) = answering("Events, not a screen.");
    let (alone, hosted) = both(
        &env,
        &env.pi_args(&["--mode", "json", "-p", "say hi"]),
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
    let out = assert_same(
        &env,
        &env.pi_args(&["--list-models"]),
        Input::Terminal,
        Output::Terminal,
    );
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("mock-model"), "{out}");
}

#[test]
fn export_writes_the_same_file_and_says_so() {
    let (_server, env) = answering("Worth keeping.");
    let first = env.run(&["-p", "remember this"], Duration::from_secs(30));
    assert_eq!(first.code, Some(0), "{first}");
    let session = std::fs::read_dir(env.session_dir())
        .expect("the session dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("pi saved its session");
    let session = session.to_string_lossy().into_owned();
    let html = env.work_dir().join("session.html");
    let html = html.to_string_lossy().into_owned();
    let out = assert_same(
        &env,
        &env.pi_args(&["--export", &session, &html]),
        Input::Terminal,
        Output::Terminal,
    );
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("session.html"), "{out}");
    let page = std::fs::read_to_string(&html).expect("the exported page");
    assert!(
        page.contains("<html"),
        "an HTML page: {}",
        &page[..page.len().min(200)]
    );
}

/// A command as the first argument reaches pi first, where pokeshell's own `-e` would have hidden it.
#[test]
fn a_pi_command_runs_as_pi_runs_it() {
    let (_server, env) = answering("unused");
    // Without the session dir in front: pi looks for its commands in the first argument only.
    let out = assert_same(&env, &["list".to_string()], Input::Terminal, Output::Terminal);
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("No packages installed"), "{out}");
}

#[test]
fn rejected_arguments_get_pi_s_message_and_status() {
    let (_server, env) = answering("unused");
    let out = assert_same(
        &env,
        &env.pi_args(&["--mode", "yaml"]),
        Input::Terminal,
        Output::Terminal,
    );
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(out.stderr.contains("yaml"), "{out}");
}

#[test]
fn redirected_stdout_gets_the_answer_alone() {
    let (_server, env) = answering("Straight into the pipe.");
    // No -p: pi alone answers and exits because stdout is not a terminal.
    let out = assert_same(&env, &env.pi_args(&["say hi"]), Input::Terminal, Output::Pipe);
    assert!(out.status.success(), "{out}");
    assert_eq!(out.stdout.trim(), "Straight into the pipe.", "{out}");
}

#[test]
fn piped_stdin_is_the_prompt() {
    let (server, env) = answering("Read from stdin.");
    let out = assert_same(
        &env,
        &env.pi_args(&[]),
        Input::Piped("say hi from a pipe\n"),
        Output::Terminal,
    );
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
    let args = env.pi_args(&["-p", "wait"]);
    for cmd in [pi_alone(&env, &args), pokeshell(&env, &args)] {
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
