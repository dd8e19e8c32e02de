//! End-to-end harness: a command in a real PTY, its output fed into a vt100 screen by a reader
//! thread. The harness plays a plain terminal that answers no queries (pi copes without
//! the answers). Every wait is bounded by a deadline; a failed wait panics with the screen. The child's
//! whole process group is killed on drop.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// How much raw output is kept for `raw_output()`.
const RAW_CAP: usize = 16 * 1024 * 1024;
/// How long a child gets to exit on SIGTERM before the group is killed.
const TERM_GRACE: Duration = Duration::from_secs(3);

struct Screen {
    parser: vt100::Parser,
    raw: Vec<u8>,
    eof: bool,
}

struct Shared {
    screen: Mutex<Screen>,
    changed: Condvar,
    /// The terminal stops reading while this is true (a terminal emulator that hangs, a stalled
    /// SSH connection): what the child writes piles up in the PTY until it blocks.
    stalled: Mutex<bool>,
    unstalled: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Screen> {
        self.screen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A child process in a PTY with an emulated screen.
pub struct Pty {
    label: String,
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn MasterPty + Send>,
    /// Kept until the child is gone: dropping portable-pty's writer sends `\n^D`. Shared with the
    /// reader thread when the terminal answers queries.
    writer: Arc<Mutex<Option<Box<dyn Write + Send>>>>,
    shared: Arc<Shared>,
    exit_code: Option<i32>,
    /// Set once a failure message carried the screen, so that drop does not print it again.
    dumped: AtomicBool,
    /// The private runtime and state directories this child was given (a pokeshell's server lives
    /// there), unless the test chose its own.
    home: Option<ServerHome>,
}

/// A test's own place for pokeshell's server (runtime dir) and saved sessions (state dir), so that
/// tests running side by side each talk to a server of their own. Dropping it ends that server.
pub struct ServerHome {
    dir: tempfile::TempDir,
}

impl ServerHome {
    pub fn new() -> ServerHome {
        let dir = tempfile::tempdir().expect("a temp dir for the server");
        for sub in ["run", "state"] {
            std::fs::create_dir(dir.path().join(sub)).expect("a server dir");
        }
        let run = dir.path().join("run");
        std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .expect("chmod the runtime dir");
        ServerHome { dir }
    }

    pub fn runtime_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("run")
    }

    pub fn state_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("state")
    }

    /// Points `cmd` at this home.
    pub fn apply(&self, cmd: &mut CommandBuilder) {
        cmd.env("XDG_RUNTIME_DIR", self.runtime_dir());
        cmd.env("XDG_STATE_HOME", self.state_dir());
    }

    /// The server's pid, while one runs here.
    pub fn server_pid(&self) -> Option<i32> {
        let path = self.runtime_dir().join("pokeshell/server/pid");
        let pid: i32 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
        // SAFETY: signal 0 only checks that the process exists.
        (unsafe { libc::kill(pid, 0) } == 0).then_some(pid)
    }

    /// Runs `pokeshell ARGS` (e.g. `ls`, `kill 1`) against the server of this home.
    #[track_caller]
    pub fn pokeshell(&self, args: &[&str]) -> std::process::Output {
        let Some(exe) = option_env!("CARGO_BIN_EXE_pokeshell") else {
            panic!("ServerHome::pokeshell is for integration tests, where cargo builds the binary");
        };
        std::process::Command::new(exe)
            .args(args)
            .env("XDG_RUNTIME_DIR", self.runtime_dir())
            .env("XDG_STATE_HOME", self.state_dir())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run pokeshell")
    }

    /// Ends the server running here (SIGTERM, then SIGKILL after a grace), if one does.
    pub fn end_server(&self) {
        let Some(pid) = self.server_pid() else {
            return;
        };
        // SAFETY: signals to the server's pid, read from its own pid file.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(8);
        while Instant::now() < deadline && crate::support::procs::process_alive(pid) {
            thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

impl Default for ServerHome {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for ServerHome {
    fn drop(&mut self) {
        self.end_server();
    }
}

fn nonzero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n.max(1)).expect("max(1) is non-zero")
}

impl Pty {
    /// Spawns `cmd` in a PTY of `rows`×`cols` (sized before the child starts). This terminal answers
    /// no queries.
    pub fn spawn(cmd: CommandBuilder, rows: u16, cols: u16) -> Pty {
        Self::spawn_answering(cmd, rows, cols, |_| Vec::new())
    }

    /// Like [`Pty::spawn`], for a terminal that answers: `answer` sees every chunk the child writes
    /// and returns the bytes to type back (e.g. a DA1 reply when the chunk holds `ESC [ c`).
    pub fn spawn_answering(
        cmd: CommandBuilder,
        rows: u16,
        cols: u16,
        answer: impl Fn(&[u8]) -> Vec<u8> + Send + 'static,
    ) -> Pty {
        let mut cmd = cmd;
        // A runtime dir the test chose is kept; one merely inherited from the test's own
        // environment would have tests share one server.
        let inherited = std::env::var_os("XDG_RUNTIME_DIR");
        let chosen = cmd
            .get_env("XDG_RUNTIME_DIR")
            .is_some_and(|v| Some(v) != inherited.as_deref());
        let pokeshell = cmd
            .get_argv()
            .first()
            .and_then(|a| std::path::Path::new(a).file_name())
            .is_some_and(|n| n == "pokeshell");
        let home = (pokeshell && !chosen).then(|| {
            let home = ServerHome::new();
            cmd.env("XDG_RUNTIME_DIR", home.runtime_dir());
            let inherited = std::env::var_os("XDG_STATE_HOME");
            if cmd
                .get_env("XDG_STATE_HOME")
                .is_none_or(|v| Some(v) == inherited.as_deref())
            {
                cmd.env("XDG_STATE_HOME", home.state_dir());
            }
            home
        });
        let label = cmd
            .get_argv()
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let child = pair
            .slave
            .spawn_command(cmd)
            .unwrap_or_else(|e| panic!("spawn {label}: {e}"));
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(Some(pair.master.take_writer().expect("pty writer"))));
        let answer_writer = Arc::clone(&writer);
        let shared = Arc::new(Shared {
            screen: Mutex::new(Screen {
                parser: vt100::Parser::new(nonzero(rows), nonzero(cols), 0),
                raw: Vec::new(),
                eof: false,
            }),
            changed: Condvar::new(),
            stalled: Mutex::new(false),
            unstalled: Condvar::new(),
        });
        let feed = Arc::clone(&shared);
        thread::Builder::new()
            .name("pty-reader".into())
            .spawn(move || {
                let mut buf = [0u8; 16 * 1024];
                loop {
                    let mut stalled = feed.stalled.lock().unwrap_or_else(|p| p.into_inner());
                    while *stalled {
                        stalled = feed.unstalled.wait(stalled).unwrap_or_else(|p| p.into_inner());
                    }
                    drop(stalled);
                    let n = match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let reply = answer(&buf[..n]);
                    if !reply.is_empty()
                        && let Some(w) = answer_writer.lock().unwrap_or_else(|p| p.into_inner()).as_mut()
                    {
                        let _ = w.write_all(&reply).and_then(|()| w.flush());
                    }
                    let mut screen = feed.lock();
                    screen.parser.process(&buf[..n]);
                    if screen.raw.len() + n <= RAW_CAP {
                        screen.raw.extend_from_slice(&buf[..n]);
                    }
                    drop(screen);
                    feed.changed.notify_all();
                }
                feed.lock().eof = true;
                feed.changed.notify_all();
            })
            .expect("spawn the pty reader thread");
        Pty {
            label,
            child,
            master: pair.master,
            writer,
            shared,
            exit_code: None,
            dumped: AtomicBool::new(false),
            home,
        }
    }

    /// The process pi runs under: the pokeshell server of this child's home while one runs there,
    /// else the child itself.
    pub fn host_pid(&self) -> i32 {
        self.home
            .as_ref()
            .and_then(ServerHome::server_pid)
            .unwrap_or(self.pid() as i32)
    }

    /// Where this child's pokeshell server lives (set by the harness unless the test chose).
    pub fn home(&self) -> Option<&ServerHome> {
        self.home.as_ref()
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("the child has a pid")
    }

    /// The screen's text, rows joined by newlines.
    pub fn screen_text(&self) -> String {
        self.shared.lock().parser.screen().contents()
    }

    /// Runs `f` on the current screen.
    pub fn with_screen<R>(&self, f: impl FnOnce(&vt100::Screen) -> R) -> R {
        f(self.shared.lock().parser.screen())
    }

    /// Everything the child wrote so far (up to 16 MiB).
    pub fn raw_output(&self) -> Vec<u8> {
        self.shared.lock().raw.clone()
    }

    /// Waits until the child has written more than `seen` bytes in all; false when `timeout`
    /// passes first (or the output ended).
    pub fn wait_for_output(&self, seen: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut screen = self.shared.lock();
        loop {
            if screen.raw.len() > seen {
                return true;
            }
            let now = Instant::now();
            if screen.eof || now >= deadline {
                return false;
            }
            screen = match self.shared.changed.wait_timeout(screen, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Waits until `done` holds for the screen; false when `timeout` passes first.
    pub fn try_wait_until(&self, timeout: Duration, mut done: impl FnMut(&vt100::Screen) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let mut screen = self.shared.lock();
        loop {
            if done(screen.parser.screen()) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            screen = match self.shared.changed.wait_timeout(screen, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Waits until `done` holds; on timeout the test fails with `what` and the screen.
    #[track_caller]
    pub fn wait_until(&self, what: &str, timeout: Duration, done: impl FnMut(&vt100::Screen) -> bool) {
        if !self.try_wait_until(timeout, done) {
            self.fail(&format!("timed out after {timeout:?} waiting for {what}"));
        }
    }

    /// Waits until `text` is on the screen.
    #[track_caller]
    pub fn wait_for_text(&self, text: &str, timeout: Duration) {
        self.wait_until(&format!("{text:?} on screen"), timeout, |s| {
            s.contents().contains(text)
        });
    }

    /// Waits until `text` is no longer on the screen.
    #[track_caller]
    pub fn wait_for_text_gone(&self, text: &str, timeout: Duration) {
        self.wait_until(&format!("{text:?} to leave the screen"), timeout, |s| {
            !s.contents().contains(text)
        });
    }

    /// Writes bytes to the child's terminal, as typed.
    #[track_caller]
    pub fn send(&mut self, bytes: impl AsRef<[u8]>) {
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let writer = guard
            .as_mut()
            .expect("the pty writer is open while the child runs");
        writer.write_all(bytes.as_ref()).expect("write to the pty");
        writer.flush().expect("flush the pty");
    }

    /// Resizes the terminal (the screen model first, so the child's redraw lands on the new size).
    #[track_caller]
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.shared
            .lock()
            .parser
            .screen_mut()
            .set_size(nonzero(rows), nonzero(cols));
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize the pty");
    }

    /// The terminal's local mode flags (`c_lflag`), e.g. to see whether raw mode is off again.
    pub fn local_flags(&self) -> Option<libc::tcflag_t> {
        let fd = self.master.as_raw_fd()?;
        // SAFETY: tcgetattr writes only into the zeroed struct it is given.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            (libc::tcgetattr(fd, &mut t) == 0).then_some(t.c_lflag)
        }
    }

    /// The terminal stops reading (`true`) or reads again. A read already waiting takes one more
    /// chunk first.
    pub fn stall(&self, stalled: bool) {
        *self.shared.stalled.lock().unwrap_or_else(|p| p.into_inner()) = stalled;
        self.shared.unstalled.notify_all();
    }

    /// The path of the terminal the child runs in (the PTY's slave).
    pub fn tty_name(&self) -> Option<std::path::PathBuf> {
        self.master.tty_name()
    }

    /// Sends a signal to the child process (not its group).
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) with a pid we spawned and a plain signal number has no memory effects.
        unsafe { libc::kill(self.pid() as libc::pid_t, signal) };
    }

    /// The exit code if the child has exited (128+N for death by signal N).
    pub fn try_exit_code(&mut self) -> Option<i32> {
        if self.exit_code.is_none() {
            self.exit_code = self.poll_exit();
        }
        self.exit_code
    }

    fn poll_exit(&mut self) -> Option<i32> {
        let child: &mut dyn Child = self.child.as_mut();
        if let Some(std_child) = child.downcast_mut::<std::process::Child>() {
            let status = std_child.try_wait().ok()??;
            return Some(
                status
                    .code()
                    .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
            );
        }
        let status = self.child.try_wait().ok()??;
        Some(status.exit_code() as i32)
    }

    /// Waits up to `timeout` for the child to exit; `None` if it is still running.
    pub fn try_wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        let code = loop {
            if let Some(code) = self.try_exit_code() {
                break code;
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        };
        // The last bytes may still be in flight; a grandchild holding the terminal keeps it open,
        // so this wait is short and not an error.
        let drain = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_secs(1));
        let _ = self.try_wait_eof(drain);
        Some(code)
    }

    /// Waits for the child to exit and for its output to drain; returns the exit code. On timeout
    /// the test fails with the screen.
    #[track_caller]
    pub fn wait_exit(&mut self, timeout: Duration) -> i32 {
        match self.try_wait_exit(timeout) {
            Some(code) => code,
            None => self.fail(&format!("{} did not exit within {timeout:?}", self.label)),
        }
    }

    fn try_wait_eof(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut screen = self.shared.lock();
        while !screen.eof {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            screen = match self.shared.changed.wait_timeout(screen, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }

    /// Fails the test with `message` and the screen.
    #[track_caller]
    pub fn fail(&self, message: &str) -> ! {
        self.dumped.store(true, Ordering::Relaxed);
        panic!("{message}\n{}", self.dump());
    }

    /// The screen with a frame and the command, for failure messages.
    pub fn dump(&self) -> String {
        let screen = self.shared.lock();
        let (rows, cols) = screen.parser.screen().size();
        let (crow, ccol) = screen.parser.screen().cursor_position();
        let mut out = format!(
            "--- screen of `{}` ({rows}x{cols}, cursor {crow},{ccol}) ---\n",
            self.label
        );
        for (i, line) in screen.parser.screen().rows(0, cols.get()).enumerate() {
            out.push_str(&format!("{i:>3}|{line}\n"));
        }
        out.push_str("--- end of screen ---");
        out
    }

    /// Kills the child's process group: SIGTERM first (pi then stops what it started), SIGKILL
    /// after a grace period.
    fn kill_group(&mut self) {
        if self.try_exit_code().is_some() {
            return;
        }
        let pgid = self.pid() as libc::pid_t;
        // SAFETY: signals to the process group our child leads (portable-pty calls setsid).
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        let deadline = Instant::now() + TERM_GRACE;
        while self.try_exit_code().is_none() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: as above; also reaps stragglers of the group after the leader exited.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if thread::panicking() && !self.dumped.load(Ordering::Relaxed) {
            eprintln!("{}", self.dump());
        }
        self.kill_group();
        self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}
