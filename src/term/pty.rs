//! The child process in a pseudo-terminal: spawn, output pump, input writer, exit status, resize.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use anyhow::{Context, Result, anyhow};
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::term::screen::Mirror;

mod handover;
mod io;
mod reader;
use handover::Handover;
use reader::{FULL_READ, Parse, spawn_reader};

/// Environment variables that make pi believe it runs in a terminal with image support, inside tmux
/// or screen, or inside another multiplexer; inside pokeshell none of that is true.
pub const SCRUBBED_ENV: &[&str] = &[
    "KITTY_WINDOW_ID",
    "KITTY_PID",
    "KITTY_LISTEN_ON",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "GHOSTTY_RESOURCES_DIR",
    "GHOSTTY_BIN_DIR",
    "WEZTERM_PANE",
    "WEZTERM_EXECUTABLE",
    "WEZTERM_UNIX_SOCKET",
    "ITERM_SESSION_ID",
    "ITERM_PROFILE",
    "LC_TERMINAL",
    "LC_TERMINAL_VERSION",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "ZELLIJ_PANE_ID",
    "TERMINAL_EMULATOR",
    "VTE_VERSION",
    "KONSOLE_VERSION",
];

/// Secrets of pokeshell's own that reach it through the environment of the shell that started it:
/// the hosted program (pi, its bash tool, the model that reads its output) never gets them.
pub const SECRET_ENV: &[&str] = &["POKESHELL_NTFY_TOKEN"];

/// What to run: a program with its arguments, the directory and extra environment.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub label: String,
    /// The child's working directory; `None`: pokeshell's own.
    pub cwd: Option<PathBuf>,
    /// Where `cwd` must lead (links followed), when known: it is not started where it leads elsewhere.
    pub cwd_real: Option<PathBuf>,
    /// The whole environment the child starts from (the client's, in the server); `None`:
    /// pokeshell's own.
    pub base_env: Option<Vec<(String, String)>>,
}

impl CommandSpec {
    /// A command line given as one string runs through `/bin/sh -c 'exec …'`, so quoting works as
    /// users expect and the shell does not stay around as an extra process.
    pub fn shell(line: &str) -> Self {
        Self {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), format!("exec {line}")],
            env: Vec::new(),
            label: line.to_string(),
            cwd: None,
            cwd_real: None,
            base_env: None,
        }
    }
}

/// The pids of the live children, for the panic hook, signal forwarding and the reaper. One in a
/// terminal's own pokeshell; one per session in the server.
static LIVE_CHILDREN: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<i32>> {
    LIVE_CHILDREN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Every child that has not been reaped yet.
pub fn live_children() -> Vec<i32> {
    live().clone()
}

/// The first live child, if any.
pub fn live_child_pid() -> Option<i32> {
    live().first().copied()
}

/// Sends a signal to every live child's whole process group (each is a session leader).
pub fn signal_child(sig: i32) {
    for pid in live_children() {
        signal_group(pid, sig);
    }
}

/// Sends a signal to one child's process group.
pub fn signal_group(pid: i32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    unsafe {
        libc::kill(-pid, sig);
    }
}

/// Events from the PTY threads to the event loop.
#[derive(Debug)]
pub enum PtyEvent {
    /// New output was parsed into the mirror (coalesced: one event until the loop takes it).
    Output,
    /// The output went quiet and the loop, which asked for quiet spells, may read it itself now
    /// ([`ChildPty::take_quiet_spell`]).
    Quiet,
    /// The child's side of the PTY closed: all its output has been parsed.
    Closed,
    /// The child stopped itself (pi's Ctrl+Z): pokeshell should suspend too, and continue it after.
    Stopped,
    /// The child exited.
    Exited(ChildExit),
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChildExit {
    /// The shell-style exit code: the child's own, or 128+N for death by signal N.
    pub code: i32,
    /// The signal that killed it, if one did (a child may also exit with a code above 128 itself).
    pub signal: Option<i32>,
}

mod dir;
#[cfg(test)]
pub use dir::LinkedTrees;
pub use dir::{DirUnusable, dir_usable, resolve, why_unusable};

/// Where the PTY threads report, shared by every child spawned in the same pane.
type Events = Arc<dyn Fn(PtyEvent) + Send + Sync>;

pub struct ChildPty {
    pid: i32,
    master: Box<dyn MasterPty + Send>,
    input: io::Input,
    _child: Box<dyn Child + Send + Sync>,
    /// Set when the child is given up on: its waiter reaps it but reports nothing.
    abandoned: Arc<AtomicBool>,
    /// What a relaunch needs: the command (and, in `parse`, the pane's mirror, the output flag and
    /// the event sink).
    spec: CommandSpec,
    /// Who reads the output, and the loop's means to: parsing, and its wait on the descriptor
    /// while it has a quiet spell.
    handover: Arc<Handover>,
    parse: Arc<Parse>,
    fd: io::Master,
    quiet: Option<tokio::io::unix::AsyncFd<io::Master>>,
}

impl ChildPty {
    /// Spawns the child at the given size, with output parsed into `mirror` and events sent to
    /// `events` (any callback: a channel sender in production, a recorder in tests).
    pub fn spawn(
        spec: &CommandSpec,
        rows: u16,
        cols: u16,
        mirror: Arc<Mutex<Mirror>>,
        pending: Arc<AtomicBool>,
        events: impl Fn(PtyEvent) + Send + Sync + 'static,
    ) -> Result<Self> {
        let queued = Arc::new(AtomicUsize::new(0));
        let events: Events = Arc::new(events);
        Self::spawn_shared(spec, (rows, cols), (mirror, pending, events), queued, false)
    }

    /// `quiet`: whether the loop takes quiet spells from the start (a relaunch keeps the loop's
    /// wish).
    fn spawn_shared(
        spec: &CommandSpec,
        (rows, cols): (u16, u16),
        (mirror, pending, events): (Arc<Mutex<Mirror>>, Arc<AtomicBool>, Events),
        queued: Arc<AtomicUsize>,
        quiet: bool,
    ) -> Result<Self> {
        if let Some(dir) = &spec.cwd {
            dir_usable(dir, spec.cwd_real.as_deref())?;
        }
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: rows.max(1),
                cols: cols.max(1),
                pixel_width: 0,
                pixel_height: 0,
            })
            .context("cannot open a pseudo-terminal")?;
        let mut cmd = CommandBuilder::new(&spec.program);
        cmd.args(&spec.args);
        match &spec.cwd {
            Some(dir) => cmd.cwd(dir),
            None => {
                if let Ok(cwd) = std::env::current_dir() {
                    cmd.cwd(cwd);
                }
            }
        }
        if let Some(base) = &spec.base_env {
            cmd.env_clear();
            for (k, v) in base {
                cmd.env(k, v);
            }
        }
        for var in SCRUBBED_ENV.iter().chain(SECRET_ENV) {
            cmd.env_remove(var);
        }
        cmd.env("TERM", "xterm-256color");
        cmd.env("POKESHELL", "1");
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        let child = pair
            .slave
            .spawn_command(cmd)
            .with_context(|| format!("cannot start {}", spec.program.display()))?;
        // The reader only sees EOF once no slave handle is left open on our side.
        drop(pair.slave);
        let pid = child
            .process_id()
            .and_then(|p| i32::try_from(p).ok())
            .ok_or_else(|| anyhow!("the child has no process id"))?;
        live().push(pid);

        let fd = pair
            .master
            .as_raw_fd()
            .ok_or_else(|| anyhow!("the pseudo-terminal has no descriptor"))?;
        let master = io::master(fd).context("cannot use the pseudo-terminal")?;
        let input = io::Input::spawn(master.clone(), queued);
        let waiter_events = events.clone();
        let parse = Arc::new(Parse {
            mirror,
            replies: input.clone(),
            pending,
            events,
        });
        let handover = Arc::new(Handover::new(quiet));
        spawn_reader(master.clone(), parse.clone(), handover.clone());
        let abandoned = Arc::new(AtomicBool::new(false));
        spawn_waiter(pid, abandoned.clone(), move |e| waiter_events(e));
        Ok(Self {
            pid,
            master: pair.master,
            input,
            _child: child,
            abandoned,
            spec: spec.clone(),
            handover,
            parse,
            fd: master,
            quiet: None,
        })
    }

    /// Starts the command again with `args`, in a new PTY of the same size, reporting to the same
    /// mirror and sink; the old child must have exited. Returns the new pid.
    pub fn respawn(&mut self, args: Vec<String>) -> Result<i32> {
        let size = self
            .master
            .get_size()
            .context("cannot read the pseudo-terminal's size")?;
        let mut spec = self.spec.clone();
        spec.args = args;
        let next = Self::spawn_shared(
            &spec,
            (size.rows, size.cols),
            (
                self.parse.mirror.clone(),
                self.parse.pending.clone(),
                self.parse.events.clone(),
            ),
            // The same gauge: the server's connections watch this one.
            self.input.queued(),
            self.handover.wanted(),
        )?;
        *self = next;
        Ok(self.pid)
    }

    /// Gives up on the child: it was killed but is not reaped (a tracer holds it, or it is stuck in
    /// the kernel). Its waiter goes on waiting in the background and reaps it whenever it can, but
    /// no exit of it is reported: the next child's is the one that counts.
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The directory the child is started in (`None`: pokeshell's own).
    pub fn cwd(&self) -> Option<&std::path::Path> {
        self.spec.cwd.as_deref()
    }

    /// The loop asks for quiet spells (it runs, on a runtime), or for no more: then the reading
    /// goes back to the reader thread now.
    pub fn want_quiet_spells(&mut self, on: bool) {
        if !on {
            self.quiet = None;
        }
        self.handover.want(on);
    }

    /// The reader lent a quiet spell ([`PtyEvent::Quiet`]): from now on the loop waits on the
    /// descriptor itself. Where nothing can wait on it (no runtime), the reading goes back.
    pub fn take_quiet_spell(&mut self) {
        if !self.handover.lent() || self.quiet.is_some() {
            return;
        }
        let fd = tokio::runtime::Handle::try_current().ok().and_then(|_| {
            let (fd, interest) = (self.fd.clone(), tokio::io::Interest::READABLE);
            // SAFETY: the descriptor is owned by the `Arc` the registration holds a clone of: it
            // stays open, and the same, for as long as the registration lives.
            unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, interest) }.ok()
        });
        match fd {
            Some(fd) => self.quiet = Some(fd),
            None => self.handover.give_back(Vec::new()),
        }
    }

    /// Output read during a quiet spell; never ready outside one.
    pub async fn quiet_output(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(fd) = &self.quiet else {
            return std::future::pending().await;
        };
        loop {
            let mut ready = fd.readable().await?;
            if let Ok(read) = ready.try_io(|fd| io::read_now(fd.get_ref(), buf)) {
                return read;
            }
        }
    }

    /// Takes what [`Self::quiet_output`] read: a small read is parsed here (`true`: the mirror
    /// changed); a big one (a flood starting), the end or an error ends the quiet spell, and the
    /// reader thread takes the reading back with the read, which is parsed before anything after it.
    pub fn took_quiet_output(&mut self, read: std::io::Result<usize>, buf: &[u8]) -> bool {
        let n = match read {
            Ok(n) if n > 0 && n < FULL_READ => {
                if self.parse.parse(&buf[..n]) {
                    return true;
                }
                0
            }
            Ok(n) => n.min(buf.len()),
            Err(_) => 0,
        };
        self.quiet = None;
        self.handover.give_back(buf[..n].to_vec());
        false
    }

    /// Writes bytes to the child's input, straight from the caller's thread when the PTY takes
    /// them at once. Never blocks the caller.
    pub fn write(&self, bytes: Vec<u8>) {
        self.input.write(bytes);
    }

    /// Bytes queued for the child's input and not yet written (across relaunches): what a child
    /// that reads nothing leaves waiting. The server stops reading its clients while it is high.
    pub fn input_queued(&self) -> Arc<AtomicUsize> {
        self.input.queued()
    }

    pub fn resize(&self, rows: u16, cols: u16) -> Result<()> {
        self.master
            .resize(PtySize {
                rows: rows.max(1),
                cols: cols.max(1),
                pixel_width: 0,
                pixel_height: 0,
            })
            .context("cannot resize the pseudo-terminal")
    }
}

impl Drop for ChildPty {
    /// A replaced or ended child's reader reads on its own to the end, so its output is closed.
    fn drop(&mut self) {
        self.quiet = None;
        self.handover.close();
    }
}

fn spawn_waiter(pid: i32, abandoned: Arc<AtomicBool>, events: impl Fn(PtyEvent) + Send + 'static) {
    thread::spawn(move || {
        let exit = wait_for_exit(pid, &events);
        live().retain(|p| *p != pid);
        if !abandoned.load(Ordering::Acquire) {
            events(PtyEvent::Exited(exit));
        }
    });
}

/// Reaps the child and turns its status into a shell-style exit code; reports stops on the way.
fn wait_for_exit(pid: i32, events: &impl Fn(PtyEvent)) -> ChildExit {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes only into `status`, a valid local.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
        if r == pid {
            if libc::WIFEXITED(status) {
                return ChildExit {
                    code: libc::WEXITSTATUS(status),
                    signal: None,
                };
            }
            if libc::WIFSIGNALED(status) {
                let signal = libc::WTERMSIG(status);
                return ChildExit {
                    code: 128 + signal,
                    signal: Some(signal),
                };
            }
            if libc::WIFSTOPPED(status) {
                events(PtyEvent::Stopped);
            }
            continue;
        }
        if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return ChildExit {
            code: 1,
            signal: None,
        };
    }
}

#[cfg(test)]
mod tests;
