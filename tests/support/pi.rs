//! Real pi for the tests: where it is, and an isolated environment per test: a private agent dir
//! whose models.json points at the scripted model (both files written by
//! `pokeshell::demo::pi_files`, provider `mock`), a session dir, a work dir without `.pi/`, a
//! private HOME, and a child environment built from an allow-list so that nothing inherited (TMUX,
//! KITTY_WINDOW_ID, TERM_PROGRAM, COLORTERM, SSH_*, PI_* ...) changes pi's behaviour.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use pokeshell::demo::model::ModelServer;
use pokeshell::demo::pi_files::{AgentFiles, MOCK};
use portable_pty::CommandBuilder;
use serde_json::Value;
use tempfile::TempDir;

use super::pty::Pty;

/// The pi executable: `$POKESHELL_TEST_PI`, else `<repo>/.cache/pi/bin/pi`. Panics with the fix when
/// neither exists.
#[track_caller]
pub fn pi_path() -> PathBuf {
    if let Some(path) = std::env::var_os("POKESHELL_TEST_PI") {
        let path = PathBuf::from(path);
        assert!(
            path.exists(),
            "POKESHELL_TEST_PI points at {}, which does not exist",
            path.display()
        );
        return path;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/pi/bin/pi");
    assert!(
        path.exists(),
        "pi is not installed for the tests (looked for {}). Run scripts/setup-pi.sh first, \
         or set POKESHELL_TEST_PI to a pi 1.6.0 executable.",
        path.display()
    );
    path
}

pub struct PiEnvBuilder {
    files: AgentFiles,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl PiEnvBuilder {
    /// Merged into the default settings (e.g. a `poke` block, or `{"retry":{"maxRetries":0}}`).
    pub fn settings(mut self, patch: Value) -> Self {
        self.files.merge_settings(&patch);
        self
    }

    /// Prices every scripted model at these US dollars per million tokens, so pi reports a cost.
    pub fn prices(mut self, input: f64, output: f64, cache_read: f64) -> Self {
        if let Some(providers) = self.files.models["providers"].as_object_mut() {
            for provider in providers.values_mut() {
                for model in provider["models"].as_array_mut().into_iter().flatten() {
                    model["cost"] = serde_json::json!({
                        "input": input, "output": output, "cacheRead": cache_read, "cacheWrite": 0
                    });
                }
            }
        }
        self
    }

    /// `--model PROVIDER/ID` for every run (e.g. `mock/mock-tiny` for compaction tests).
    pub fn model(self, model: &str) -> Self {
        self.args(["--model", model])
    }

    /// Extra pi arguments put before the per-run ones.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// An extra variable in the child's environment.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    pub fn build(self) -> PiEnv {
        let root = tempfile::Builder::new()
            .prefix("pokeshell-pi-")
            .tempdir()
            .expect("temp dir for pi");
        let dirs = ["agent", "sessions", "work", "home"].map(|d| root.path().join(d));
        for dir in &dirs {
            std::fs::create_dir_all(dir).expect("create pi test dir");
        }
        let [agent_dir, session_dir, work_dir, home_dir] = dirs;
        self.files
            .write(&agent_dir)
            .expect("write pi's settings.json and models.json");
        PiEnv {
            pi: pi_path(),
            agent_dir,
            session_dir,
            work_dir,
            home_dir,
            args: self.args,
            extra_env: self.env,
            _root: root,
        }
    }
}

/// One test's pi environment; the temp dirs go away with it.
pub struct PiEnv {
    pi: PathBuf,
    agent_dir: PathBuf,
    session_dir: PathBuf,
    work_dir: PathBuf,
    home_dir: PathBuf,
    args: Vec<String>,
    extra_env: Vec<(String, String)>,
    _root: TempDir,
}

/// Inherited variables pi may keep; everything else is dropped.
const KEPT_ENV: [&str; 5] = ["PATH", "TMPDIR", "USER", "LOGNAME", "SHELL"];

impl PiEnv {
    /// The default environment against a model at `base_url` (e.g. `ModelServer::base_url()`).
    pub fn new(base_url: &str) -> PiEnv {
        PiEnv::builder(base_url).build()
    }

    pub fn builder(base_url: &str) -> PiEnvBuilder {
        PiEnvBuilder {
            files: AgentFiles::new(&MOCK, base_url),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    pub fn pi(&self) -> &Path {
        &self.pi
    }

    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    pub fn session_dir(&self) -> &Path {
        &self.session_dir
    }

    pub fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    /// The settings as pi will read them now.
    pub fn settings(&self) -> Value {
        let text = std::fs::read_to_string(self.agent_dir.join("settings.json")).expect("read settings.json");
        serde_json::from_str(&text).expect("settings.json is JSON")
    }

    /// The complete environment of the child (nothing else is inherited).
    pub fn env_vars(&self) -> Vec<(String, String)> {
        let mut vars: Vec<(String, String)> = KEPT_ENV
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        let path = |p: &Path| p.to_string_lossy().into_owned();
        vars.extend([
            ("HOME".to_string(), path(&self.home_dir)),
            ("TERM".to_string(), "xterm-256color".to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
            ("PI_CODING_AGENT_DIR".to_string(), path(&self.agent_dir)),
            ("PI_OFFLINE".to_string(), "1".to_string()),
            ("PI_SKIP_VERSION_CHECK".to_string(), "1".to_string()),
            ("PI_TELEMETRY".to_string(), "0".to_string()),
        ]);
        vars.extend(self.extra_env.iter().cloned());
        vars
    }

    /// pi's arguments: `--session-dir`, the builder's extra arguments, then `args`.
    pub fn pi_args(&self, args: &[&str]) -> Vec<String> {
        let mut all = vec![
            "--session-dir".to_string(),
            self.session_dir.to_string_lossy().into_owned(),
        ];
        all.extend(self.args.iter().cloned());
        all.extend(args.iter().map(|a| a.to_string()));
        all
    }

    /// pi itself, for a PTY.
    pub fn pty_command(&self, args: &[&str]) -> CommandBuilder {
        let mut cmd = CommandBuilder::new(&self.pi);
        cmd.args(self.pi_args(args));
        self.apply(&mut cmd);
        cmd
    }

    /// The pokeshell binary hosting this pi (`pokeshell --pi PI [POKESHELL_ARGS] -- PI_ARGS`), for a
    /// PTY, with the same isolated environment.
    #[track_caller]
    pub fn pokeshell_command(&self, pokeshell_args: &[&str], pi_args: &[&str]) -> CommandBuilder {
        // Cargo names the binary for integration tests only; the fixture recorder (an example)
        // shares this module without it.
        let Some(exe) = option_env!("CARGO_BIN_EXE_pokeshell") else {
            panic!("pokeshell_command is for integration tests, where cargo builds the binary");
        };
        let mut cmd = CommandBuilder::new(exe);
        cmd.arg("--pi");
        cmd.arg(&self.pi);
        cmd.args(pokeshell_args);
        cmd.arg("--");
        cmd.args(self.pi_args(pi_args));
        self.apply(&mut cmd);
        cmd
    }

    /// Gives any command this environment (cleared and rebuilt) and the work dir as its cwd.
    pub fn apply(&self, cmd: &mut CommandBuilder) {
        cmd.env_clear();
        for (k, v) in self.env_vars() {
            cmd.env(k, v);
        }
        cmd.cwd(&self.work_dir);
    }

    /// pi without a terminal (print or json mode), stdin closed.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.pi);
        cmd.args(self.pi_args(args))
            .env_clear()
            .envs(self.env_vars())
            .current_dir(&self.work_dir);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs pi without a terminal and collects its output; kills it (and fails the test) when it
    /// runs longer than `timeout`.
    #[track_caller]
    pub fn run(&self, args: &[&str], timeout: Duration) -> RunOutput {
        let mut child = self.command(args).spawn().expect("spawn pi");
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let out = thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        });
        let err = thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for pi") {
                break Some(status);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            thread::sleep(Duration::from_millis(10));
        };
        let output = RunOutput {
            code: status.and_then(|s| s.code()),
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        };
        assert!(
            status.is_some(),
            "pi {args:?} ran longer than {timeout:?}; output so far:\n{output}"
        );
        output
    }
}

/// What a non-interactive pi run printed.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// None when killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl RunOutput {
    /// `--mode json` events: every stdout line that parses as a JSON object.
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(Value::is_object)
            .collect()
    }

    /// The `type` of every event, in order.
    pub fn event_types(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter_map(|e| e["type"].as_str().map(str::to_string))
            .collect()
    }
}

impl std::fmt::Display for RunOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Waits for pi's first frame in `pty`: the footer naming a mock model. Typing before it would go
/// through the terminal's line discipline, which pi has not switched off yet.
#[track_caller]
pub fn wait_for_tui(pty: &Pty, timeout: Duration) {
    pty.wait_until("pi's footer with the mock model", timeout, |screen| {
        screen
            .contents()
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.contains("mock-"))
    });
}

/// Types `prompt` into pi's editor and submits it; returns once the model server has the request.
/// pi draws its editor before it accepts submissions ("Startup is still in progress" keeps the
/// text), so Enter is repeated until the request arrives; Enter on an empty editor does nothing.
#[track_caller]
pub fn submit_prompt(pty: &mut Pty, server: &ModelServer, prompt: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    wait_for_tui(pty, timeout);
    let before = server.model_requests().len();
    pty.send(prompt);
    let typed: String = prompt.chars().take(20).collect();
    pty.wait_for_text(&typed, deadline.saturating_duration_since(Instant::now()));
    loop {
        pty.send("\r");
        let step = Duration::from_millis(300).min(deadline.saturating_duration_since(Instant::now()));
        if server.wait_for_requests(before + 1, step).is_ok() {
            return;
        }
        if Instant::now() >= deadline {
            pty.fail(&format!("pi never sent the prompt {prompt:?} to the model"));
        }
    }
}
