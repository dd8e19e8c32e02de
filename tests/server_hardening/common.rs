//! A runtime and state directory of the test's own, a stand-in pi, and `pokeshell` run in them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::WAIT;
use crate::support::pty::ServerHome;

pub struct Home {
    pub server: ServerHome,
    pub work: PathBuf,
    pub pi: PathBuf,
}

/// A pi that answers `--version` and otherwise waits, reading nothing.
const FAKE_PI: &str = "#!/bin/sh\ncase \"$1\" in --version) echo 1.6.0; exit 0;; esac\nexec sleep 600\n";

impl Home {
    pub fn new() -> Home {
        let server = ServerHome::new();
        let work = server.state_dir().parent().unwrap().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let pi = work.join("fake-pi");
        std::fs::write(&pi, FAKE_PI).unwrap();
        std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        Home { server, work, pi }
    }

    pub fn state(&self) -> PathBuf {
        self.server.state_dir().join("pokeshell")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pokeshell"));
        cmd.args(args)
            .env("XDG_RUNTIME_DIR", self.server.runtime_dir())
            .env("XDG_STATE_HOME", self.server.state_dir())
            .env_remove("POKESHELL_PI")
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    pub fn pokeshell(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run pokeshell")
    }

    /// `pokeshell new -d --name NAME --pi <fake>` in the work dir.
    pub fn new_detached(&self, name: &str) -> Output {
        let pi = self.pi.to_string_lossy().into_owned();
        self.pokeshell(&["new", "-d", "--name", name, "--pi", &pi])
    }

    /// A session named `name` whose program reads nothing: its terminal in raw mode (so that its
    /// input is not dropped by the line discipline as a full line would be) and never read.
    pub fn deaf_session(&self, name: &str) {
        self.deaf_session_with(name, &[]);
    }

    /// A session whose program reads nothing, in a server started with `env` (when it is the
    /// first session).
    pub fn deaf_session_with(&self, name: &str, env: &[(&str, &str)]) {
        let deaf = self.work.join("deaf-pi");
        std::fs::write(
            &deaf,
            "#!/bin/sh\ncase \"$1\" in --version) echo 1.6.0; exit 0;; esac\nstty raw -echo\nexec sleep 600\n",
        )
        .unwrap();
        std::fs::set_permissions(&deaf, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let out = self
            .command(&["new", "-d", "--name", name, "--pi", &deaf.to_string_lossy()])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        self.wait_listed(name);
    }

    /// A connection to the server that said hello and asked to attach to `name`, naming
    /// `terminal` as its own when given.
    pub fn open_attached(&self, name: &str, terminal: Option<&str>) -> std::os::unix::net::UnixStream {
        use pokeshell_core::wire::{self, Target, Up};
        use std::io::Write;
        let dir = self.server.runtime_dir().join("pokeshell/server");
        let mut stream = pokeshell::ipc::socket::connect_in(&dir).expect("connect");
        let token = pokeshell::ipc::socket::read_token_in(&dir).expect("token");
        let hello = Up::Hello {
            token,
            protocol: wire::PROTOCOL,
        };
        let open = Up::Open {
            target: Target::Attach {
                name: Some(name.into()),
            },
            cols: 80,
            rows: 24,
            caps: Vec::new(),
            caps_follow: false,
            env: Vec::new(),
            watch: false,
            terminal: terminal.map(str::to_owned),
        };
        stream.write_all(&wire::encode_up(&hello)).expect("hello");
        stream.write_all(&wire::encode_up(&open)).expect("open");
        stream
    }

    /// The server's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.server.runtime_dir().join("pokeshell/server/log")).unwrap_or_default()
    }

    /// The lists moved aside, by path.
    pub fn bad_lists(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.state()) else {
            return Vec::new();
        };
        let mut bad: Vec<String> = entries
            .flatten()
            .map(|e| e.path().display().to_string())
            .filter(|p| p.contains("sessions.json.bad-"))
            .collect();
        bad.sort();
        bad
    }

    /// Polls `pokeshell ls` until it lists `name`.
    #[track_caller]
    pub fn wait_listed(&self, name: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let out = self.pokeshell(&["ls"]);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            if text.lines().any(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|c| c.ends_with(&format!(":{name}")))
            }) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "`pokeshell ls` never listed {name}:\n{text}{out:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The saved list's path, its directory created as the server would (private).
/// A saved list of `count` idle sessions of the stand-in pi, named s1…sN, in the work dir.
pub fn save_idle_sessions(home: &Home, count: u32) {
    let sessions: Vec<serde_json::Value> = (1..=count)
        .map(|n| {
            serde_json::json!({
                "number": n, "name": format!("s{n}"), "dir": home.work.to_string_lossy(),
                "args": ["--pi", home.pi.to_string_lossy(), "--"], "mid_run": false
            })
        })
        .collect();
    let list = serde_json::json!({"version": 1, "sessions": sessions});
    std::fs::write(saved_list(home), serde_json::to_vec(&list).unwrap()).unwrap();
}

pub fn saved_list(home: &Home) -> PathBuf {
    let dir = home.state();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    dir.join("sessions.json")
}

pub fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// The server's resident memory now, and its peak, in KiB (`/proc/PID/status`).
pub fn rss_kib(pid: i32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |k: &str| {
        status
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
