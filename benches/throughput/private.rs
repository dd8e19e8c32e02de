//! A pokeshell server of one run's own. Every pokeshell run gets a private runtime directory (where
//! the server listens) and state directory (where it saves its sessions), so runs never share a
//! server nor find another run's saved sessions, and both directories go away with the run.
//!
//! The bench makes itself the subreaper of its descendants ([`become_subreaper`]): the server, which
//! forks away from the client that started it, becomes the bench's child. Its CPU time can then be
//! read from its zombie after it exited, to the last tick, before the bench reaps it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::pty_run::{self, Running, Usage};

/// How long the server gets to end by itself after its last session ended.
const END_LIMIT: Duration = Duration::from_secs(15);
/// How much of the client's output a failure shows.
const TAIL_BYTES: usize = 2048;
/// How long what the server started gets to end after the server ended.
const LEFTOVER_LIMIT: Duration = Duration::from_secs(20);
/// How long it gets after SIGTERM before it is killed.
const TERM_LIMIT: Duration = Duration::from_secs(5);

/// Orphans below the bench (pokeshell's server, tmux's) become the bench's children.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes a plain integer and touches no memory.
    let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
    assert!(
        ok,
        "cannot become the subreaper: {}",
        std::io::Error::last_os_error()
    );
}

/// Reaps the bench's exited orphans (tmux's server) without waiting. Only between runs: it would
/// take a running pokeshell server's exit from [`Private::end`].
pub fn reap_strays() {
    let mut status = 0;
    // SAFETY: waitpid with WNOHANG writes only into `status`.
    while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
}

pub struct Private {
    runtime: tempfile::TempDir,
    /// Kept for its removal at the end.
    _state: tempfile::TempDir,
    env: Vec<(String, String)>,
    pid: Option<u32>,
    /// The end of what the client wrote to its terminal, for a failure's message.
    tail: Arc<Mutex<Vec<u8>>>,
    /// The server's own usage (not its children's: the hosted programs).
    pub usage: Usage,
}

impl Private {
    pub fn new() -> Private {
        // tempfile creates its directories 0700.
        let runtime = tempfile::Builder::new()
            .prefix("pkb-run")
            .tempdir()
            .expect("a private runtime directory");
        let state = tempfile::Builder::new()
            .prefix("pkb-state")
            .tempdir()
            .expect("a private state directory");
        let env = vec![
            ("XDG_RUNTIME_DIR".to_string(), path_str(runtime.path())),
            ("XDG_STATE_HOME".to_string(), path_str(state.path())),
        ];
        Private {
            runtime,
            _state: state,
            env,
            pid: None,
            tail: Arc::default(),
            usage: Usage::default(),
        }
    }

    /// The environment every pokeshell command of this run gets.
    pub fn env(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    pub fn command(&self, bin: &Path) -> std::process::Command {
        let mut cmd = std::process::Command::new(bin);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    fn server_dir(&self) -> PathBuf {
        self.runtime.path().join("pokeshell/server")
    }

    /// The server's pid, once its pid file was seen.
    pub fn pid(&mut self) -> Option<u32> {
        if self.pid.is_none() {
            self.pid = std::fs::read_to_string(self.server_dir().join("pid"))
                .ok()
                .and_then(|s| s.trim().parse().ok());
        }
        self.pid
    }

    /// Samples the server's CPU time and peak memory, while it runs.
    pub fn sample(&mut self) {
        if let Some(pid) = self.pid() {
            self.usage.sample(pid);
        }
    }

    /// After the run's last session ended: waits for the server to exit, reaps it and checks that
    /// nothing of the run is left. A server that does not end is sent SIGTERM, and the bench fails.
    pub fn end(mut self) -> Usage {
        let Some(pid) = self.pid() else {
            let log = std::fs::read_to_string(self.server_dir().join("log")).unwrap_or_default();
            let tail = self.tail.lock().map(|t| String::from_utf8_lossy(&t).into_owned());
            panic!(
                "the pokeshell server of {} never wrote its pid; its log: {log:?}; the client's last output: {tail:?}",
                self.dir_label()
            );
        };
        let deadline = Instant::now() + END_LIMIT;
        let ended_by_itself = loop {
            // A zombie keeps its CPU times; VmHWM went with its memory, sampled while it lived.
            self.usage.sample(pid);
            if !alive(pid) {
                break true;
            }
            if Instant::now() > deadline {
                break false;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        reap(pid);
        if !ended_by_itself {
            // SAFETY: kill(2) only sends a signal, to our own child.
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
            let deadline = Instant::now() + TERM_LIMIT;
            while alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let killed = alive(pid);
            if killed {
                // SAFETY: as above.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            reap(pid);
            self.kill_leftovers();
            panic!(
                "the pokeshell server (pid {pid}) did not exit within {} s after its last session ended; \
                 it was sent SIGTERM{}",
                END_LIMIT.as_secs(),
                if killed { " and then SIGKILL" } else { "" }
            );
        }
        let files: Vec<_> = ["socket", "token", "pid"]
            .into_iter()
            .filter(|f| self.server_dir().join(f).exists())
            .collect();
        assert!(
            files.is_empty(),
            "the server left {files:?} in {}",
            self.dir_label()
        );
        let late = self.leftovers();
        if !late.is_empty() {
            // Something the server started outlived it; give it a moment to end by itself.
            eprintln!("note: still running after the pokeshell server ended: {late:?}");
            let deadline = Instant::now() + LEFTOVER_LIMIT;
            while !self.leftovers().is_empty() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let left = self.kill_leftovers();
        assert!(
            left.is_empty(),
            "processes of the run were left behind {} s after the server ended (killed now): {left:?}",
            LEFTOVER_LIMIT.as_secs()
        );
        self.usage
    }

    fn dir_label(&self) -> String {
        self.runtime.path().display().to_string()
    }

    /// Kills every process still running with this run's runtime directory; returns their pids and
    /// command lines.
    fn kill_leftovers(&self) -> Vec<(u32, String)> {
        let found = self.leftovers();
        for (pid, _) in &found {
            // SAFETY: kill(2) only sends a signal.
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        }
        found
    }

    /// Every process still running with this run's runtime directory: pids and command lines.
    fn leftovers(&self) -> Vec<(u32, String)> {
        let needle = format!("XDG_RUNTIME_DIR={}\0", path_str(self.runtime.path()));
        let mut found = Vec::new();
        for pid in pty_run::all_pids() {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            if environ.windows(needle.len()).any(|w| w == needle.as_bytes()) && alive(pid) {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                    .unwrap_or_default();
                found.push((pid, cmdline));
            }
        }
        found
    }
}

/// Starts pokeshell `args` in a PTY of its own (see [`pty_run::spawn`]) with a server of its own.
pub fn spawn(bin: &str, args: &[&str], mut watch: impl FnMut(&[u8]) + Send + 'static) -> (Running, Private) {
    let private = Private::new();
    let tail = private.tail.clone();
    let running = pty_run::spawn(bin, args, &private.env(), move |chunk| {
        if let Ok(mut t) = tail.lock() {
            t.extend_from_slice(chunk);
            let extra = t.len().saturating_sub(TAIL_BYTES);
            t.drain(..extra);
        }
        watch(chunk);
    });
    (running, private)
}

/// Waits for the client to exit, then for its server; the usage is the client's and the server's
/// together (not the hosted program's).
pub fn finish(
    running: Running,
    mut private: Private,
    start: Instant,
    limit: Duration,
) -> (Duration, Usage, u64) {
    let (wall, client, bytes) = running.finish(start, limit, |_| private.sample());
    let server = private.end();
    (wall, client.plus(server), bytes)
}

fn path_str(p: &Path) -> String {
    p.to_str().expect("utf-8 temp path").to_string()
}

/// Running (not a zombie, not gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let after = s.get(s.rfind(')')? + 2..)?;
            after.chars().next()
        })
        .is_some_and(|state| state != 'Z' && state != 'X')
}

fn reap(pid: u32) {
    let mut status = 0;
    // SAFETY: waitpid on our own child with WNOHANG writes only into `status`.
    unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
}
