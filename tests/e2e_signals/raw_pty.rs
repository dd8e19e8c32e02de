//! A terminal the test can take away: a PTY whose master has exactly one descriptor, read by a thread
//! that can be stopped, so that closing it hangs the terminal up as a closed terminal window (or
//! `tmux kill-server`) does. `support::pty::Pty` cannot do that: its reader blocks in `read` on a
//! second descriptor of the master.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;

struct Seen {
    parser: vt100::Parser,
    raw: Vec<u8>,
}

pub struct RawPty {
    master: Option<Arc<OwnedFd>>,
    child: Child,
    seen: Arc<(Mutex<Seen>, Condvar)>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

/// `cmd` as a std command with the same argv, environment (replaced, not inherited) and cwd.
fn std_command(cmd: &CommandBuilder) -> Command {
    let argv = cmd.get_argv();
    let mut out = Command::new(&argv[0]);
    out.args(&argv[1..]).env_clear();
    out.envs(cmd.iter_full_env_as_str());
    if let Some(cwd) = cmd.get_cwd() {
        out.current_dir(cwd);
    }
    out
}

impl RawPty {
    /// Starts `cmd` in a new session on a fresh PTY of `rows`×`cols`. With `controlling`, the PTY
    /// becomes its controlling terminal (its loss then brings SIGHUP); without, only reads and writes
    /// notice it.
    pub fn spawn(cmd: &CommandBuilder, rows: u16, cols: u16, controlling: bool) -> RawPty {
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes two descriptors into the locals; the name and termios are unused.
        let ok = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            ) == 0
        };
        assert!(ok, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned by nobody else.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        // SAFETY: fcntl on our own descriptor: the child must not inherit the master.
        unsafe { libc::fcntl(master.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
        let mut command = std_command(cmd);
        let io = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup the pty slave"));
        command.stdin(io(&slave)).stdout(io(&slave)).stderr(io(&slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                if controlling && libc::ioctl(0, libc::TIOCSCTTY as _, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("spawn the command in the pty");
        drop(slave);
        let master = Arc::new(master);
        let seen = Arc::new((
            Mutex::new(Seen {
                parser: vt100::Parser::new(
                    std::num::NonZeroU16::new(rows).expect("rows"),
                    std::num::NonZeroU16::new(cols).expect("cols"),
                    0,
                ),
                raw: Vec::new(),
            }),
            Condvar::new(),
        ));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (master, seen, stop) = (Arc::clone(&master), Arc::clone(&seen), Arc::clone(&stop));
            std::thread::spawn(move || read_until_stopped(&master, &seen, &stop))
        };
        RawPty {
            master: Some(master),
            child,
            seen,
            stop,
            reader: Some(reader),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&self, bytes: &[u8]) {
        let fd = self
            .master
            .as_ref()
            .expect("the terminal is still there")
            .as_raw_fd();
        // SAFETY: writing from a live slice to our master descriptor.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        assert_eq!(n, bytes.len() as isize, "write to the pty");
    }

    /// Waits until `done` holds for the screen and everything written so far; panics with the
    /// screen on timeout.
    #[track_caller]
    pub fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        mut done: impl FnMut(&vt100::Screen, &[u8]) -> bool,
    ) {
        let deadline = Instant::now() + timeout;
        let (lock, changed) = &*self.seen;
        let mut seen = lock.lock().unwrap_or_else(|p| p.into_inner());
        while !done(seen.parser.screen(), &seen.raw) {
            let now = Instant::now();
            if now >= deadline {
                panic!(
                    "timed out after {timeout:?} waiting for {what}; screen:\n{}",
                    seen.parser.screen().contents()
                );
            }
            seen = match changed.wait_timeout(seen, deadline - now) {
                Ok((guard, _)) => guard,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Closes the terminal: the reader stops and the master's only descriptor is closed.
    pub fn hang_up(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the pty reader ends");
        }
        self.master = None;
    }

    /// The exit code (128+N for death by signal N) if it exits within `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the child") {
                return Some(
                    status
                        .code()
                        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
                );
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn read_until_stopped(master: &OwnedFd, seen: &(Mutex<Seen>, Condvar), stop: &AtomicBool) {
    let mut buf = [0u8; 16 * 1024];
    while !stop.load(Ordering::SeqCst) {
        let mut pfd = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd on the stack; a short timeout so that `stop` is seen.
        if unsafe { libc::poll(&mut pfd, 1, 50) } <= 0 {
            continue;
        }
        // SAFETY: reading into a local buffer of the given length.
        let n = unsafe { libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            // EIO: every slave descriptor is closed; keep the master open until told.
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        let mut s = seen.0.lock().unwrap_or_else(|p| p.into_inner());
        s.parser.process(&buf[..n as usize]);
        s.raw.extend_from_slice(&buf[..n as usize]);
        drop(s);
        seen.1.notify_all();
    }
}

impl Drop for RawPty {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let pid = self.child.id() as libc::pid_t;
            // SAFETY: signals to the process group our child leads (it called setsid).
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = self.child.wait();
        }
        self.hang_up();
    }
}
