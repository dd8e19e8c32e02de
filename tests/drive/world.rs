//! Shared by the `drive*` tests: one pokeshell server of the test's own, real pi against the scripted
//! model, and the commands run against that server as a script (or an agent's bash tool) runs them.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::pi::{PiEnv, pi_path};
use crate::support::pty::ServerHome;
use crate::support::{ModelServer, model_server};

/// pi sessions starting side by side on a loaded 2-core machine take their time.
pub const SLOW: Duration = Duration::from_secs(90);

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_pokeshell")
}

pub struct World {
    pub home: ServerHome,
    pub model: ModelServer,
    pub env: PiEnv,
}

impl World {
    /// A model server, pi's files and a server home; `settings` merged into pi's settings.json.
    pub fn new(settings: Value) -> World {
        let home = ServerHome::new();
        let model = model_server();
        let env = Self::pi_env(&home, &model, settings);
        World { home, model, env }
    }

    /// pi's files for this server and model (another agent dir each time).
    pub fn pi_env(home: &ServerHome, model: &ModelServer, settings: Value) -> PiEnv {
        PiEnv::builder(&model.base_url())
            .settings(settings)
            .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
            .env("XDG_STATE_HOME", &home.state_dir().to_string_lossy())
            // So that a `pokeshell new` run by an agent finds the same pi.
            .env("POKESHELL_PI", &pi_path().to_string_lossy())
            .build()
    }

    /// `pokeshell ARGS` in `dir` (the work dir when `None`), with `input` on standard input.
    pub fn run_in(&self, dir: Option<&Path>, args: &[&str], input: Option<&[u8]>) -> Output {
        self.run_env(&self.env, dir, args, input)
    }

    /// [`World::run_in`] with the environment of `env`.
    pub fn run_env(&self, env: &PiEnv, dir: Option<&Path>, args: &[&str], input: Option<&[u8]>) -> Output {
        let mut cmd = Command::new(exe());
        cmd.args(args)
            .env_clear()
            .envs(env.env_vars())
            .current_dir(dir.unwrap_or(env.work_dir()))
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("run pokeshell");
        if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
            let _ = stdin.write_all(bytes);
        }
        child.wait_with_output().expect("pokeshell's output")
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.run_in(None, args, None)
    }

    /// `pokeshell new -d` of a pi session named `name` in `dir` with pi's `pi_args`.
    pub fn new_session(&self, dir: Option<&Path>, name: &str, pi_args: &[&str]) -> Output {
        self.new_session_env(&self.env, dir, name, pi_args)
    }

    /// [`World::new_session`] with the environment (and agent dir) of `env`.
    pub fn new_session_env(&self, env: &PiEnv, dir: Option<&Path>, name: &str, pi_args: &[&str]) -> Output {
        let pi = pi_path().to_string_lossy().into_owned();
        let sessions = env.session_dir().to_string_lossy().into_owned();
        let mut args = vec![
            "new",
            "-d",
            "--name",
            name,
            "--pi",
            &pi,
            "--",
            "--session-dir",
            &sessions,
        ];
        args.extend(pi_args);
        self.run_env(env, dir, &args, None)
    }

    /// `pokeshell ARGS` left running, its lines collected as they come.
    pub fn spawn(&self, args: &[&str]) -> Running {
        let mut child = Command::new(exe())
            .args(args)
            .env_clear()
            .envs(self.env.env_vars())
            .current_dir(self.env.work_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn pokeshell");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().expect("piped stdout");
        let kept = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                kept.lock().expect("the lines").push(line);
            }
        });
        // Its complaints, in the lines too (marked), so that a failure shows them.
        let err = child.stderr.take().expect("piped stderr");
        let kept = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                kept.lock().expect("the lines").push(format!("stderr: {line}"));
            }
        });
        Running { child, lines }
    }

    /// The ledger's records, oldest first.
    pub fn ledger(&self) -> Vec<Value> {
        let path = self.home.state_dir().join("pokeshell/interventions.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The reasons of the ledger's records of `rule`.
    pub fn records(&self, rule: &str) -> Vec<String> {
        self.ledger()
            .iter()
            .filter(|r| r["rule"] == rule)
            .filter_map(|r| r["reason"].as_str().map(str::to_string))
            .collect()
    }
}

/// A command left running.
pub struct Running {
    pub child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Running {
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("the lines").clone()
    }

    /// Waits until a line satisfies `found`; returns it.
    #[track_caller]
    pub fn wait_line(&self, what: &str, timeout: Duration, found: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(l) = self.lines().into_iter().find(|l| found(l)) {
                return l;
            }
            assert!(
                Instant::now() < deadline,
                "no line with {what} within {timeout:?}; the lines: {:#?}",
                self.lines()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the command's end; its exit status.
    #[track_caller]
    pub fn wait_exit(&mut self, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("the command's status") {
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "the command did not end within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn said(out: &Output) -> String {
    format!("{}{}", stdout(out), String::from_utf8_lossy(&out.stderr))
}

/// A git repository `<tmp>/app` with one commit on `main`.
pub fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let repo = tmp.path().join("app");
    std::fs::create_dir(&repo).expect("the repository's dir");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.invalid"])
            .args(args)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "app\n").expect("a file");
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "first"]);
    (tmp, repo)
}

/// The wall clock in Unix ms (the clock `events` stamps its lines with).
pub fn unix_ms() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.map(|d| d.as_millis() as u64).unwrap_or_default()
}

/// The CPU time process `pid` has used so far (user and system), from /proc.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process's stat");
    // The fields after the command's name (which may hold spaces) in its parentheses.
    let rest = &stat[stat.rfind(')').expect("the command's name") + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // Linux reports them in USER_HZ, 100 a second on every architecture it runs on.
    Duration::from_millis(ticks * 10)
}
