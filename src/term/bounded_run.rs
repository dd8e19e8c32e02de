//! Runs a child process pokeshell asks something of (`pi --version`, `node --version`, npm) with
//! everything it may cost bounded: its output is capped, it has a deadline, and when it overstays
//! (or leaves something behind holding its output open) its whole process group is killed.
//!
//! One thread does it all with non-blocking pipes and `poll(2)`: no reader thread can be left
//! blocked on a pipe that a grandchild outside the group keeps open.

use std::fmt;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The output kept of a question like `--version`: far more than any honest answer.
pub const VERSION_CAP: usize = 64 * 1024;
/// How long output may stay open after the process itself exited: what it started in the
/// background (a `yes &`, a daemon) is not part of the answer.
pub const LINGER: Duration = Duration::from_millis(500);

/// What a run may cost.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From the start to the end of its output.
    pub deadline: Duration,
    /// Bytes kept of stdout and stderr together; one more ends the run.
    pub cap: usize,
    /// After the process exited, how long its output may stay open.
    pub linger: Duration,
}

impl Limits {
    /// For a question answered in a line or two.
    pub fn question(deadline: Duration) -> Limits {
        Limits {
            deadline,
            cap: VERSION_CAP,
            linger: LINGER,
        }
    }
}

#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why a run gave no answer. Each is said in words the user can act on.
#[derive(Debug)]
pub enum RunError {
    Start(std::io::Error),
    /// Still running at the deadline: its group was killed.
    Deadline(Duration),
    /// It printed more than the cap: its group was killed. `stdout`: what it printed there until
    /// then, for a caller that can use the first part.
    TooMuch {
        cap: usize,
        stdout: Vec<u8>,
    },
    /// It exited, but something it started kept its output open past the linger time: that group
    /// was killed.
    KeptOpen(Duration),
    Io(std::io::Error),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Start(e) => write!(f, "it could not be started: {e}"),
            RunError::Deadline(d) => write!(
                f,
                "it did not finish within {} s and was stopped",
                d.as_secs_f32()
            ),
            RunError::TooMuch { cap, .. } => {
                write!(f, "it printed more than {} KiB and was stopped", cap / 1024)
            }
            RunError::KeptOpen(d) => write!(
                f,
                "it exited, but something it started kept writing or held its output open for \
                 over {} ms; that was stopped",
                d.as_millis()
            ),
            RunError::Io(e) => write!(f, "reading it failed: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// Runs `cmd` (stdin closed, stdout and stderr captured) within `limits`, in a process group of
/// its own.
pub fn run(cmd: &mut Command, limits: Limits) -> Result<Output, RunError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group: a kill reaches whatever it started, and the terminal's Ctrl+C does not
        // reach it.
        .process_group(0);
    let mut child = retry_busy(|| cmd.spawn()).map_err(RunError::Start)?;
    let result = collect(&mut child, limits);
    if result.is_err() {
        kill_group(&child);
    }
    // Reaped in every case: no zombie stays behind, whatever happened.
    let status = match child.try_wait() {
        Ok(Some(s)) => Ok(s),
        _ => child.wait(),
    };
    let (stdout, stderr) = result?;
    Ok(Output {
        status: status.map_err(RunError::Io)?,
        stdout,
        stderr,
    })
}

/// One captured pipe: its text so far, and whether it reached its end.
struct Pipe<R> {
    pipe: Option<R>,
    text: Vec<u8>,
}

impl<R: Read + AsRawFd> Pipe<R> {
    fn new(pipe: Option<R>) -> std::io::Result<Pipe<R>> {
        if let Some(p) = &pipe {
            set_nonblocking(p.as_raw_fd())?;
        }
        Ok(Pipe {
            pipe,
            text: Vec::new(),
        })
    }

    /// Reads what is there without blocking; false: more than `room` more bytes came (`room` is
    /// what is left of the cap after what both pipes hold already).
    fn drain(&mut self, room: usize) -> std::io::Result<bool> {
        let Some(p) = &mut self.pipe else {
            return Ok(true);
        };
        let mut buf = [0u8; 8192];
        let mut taken = 0;
        loop {
            match p.read(&mut buf) {
                Ok(0) => {
                    self.pipe = None;
                    return Ok(true);
                }
                Ok(n) => {
                    if taken + n > room {
                        return Ok(false);
                    }
                    taken += n;
                    self.text.extend_from_slice(&buf[..n]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

fn collect(child: &mut Child, limits: Limits) -> Result<(Vec<u8>, Vec<u8>), RunError> {
    let start = Instant::now();
    let deadline = start + limits.deadline;
    let mut out = Pipe::new(child.stdout.take()).map_err(RunError::Io)?;
    let mut err = Pipe::new(child.stderr.take()).map_err(RunError::Io)?;
    let mut exited_at: Option<Instant> = None;
    loop {
        let room = limits.cap.saturating_sub(out.text.len() + err.text.len());
        let too_much = |out: Pipe<_>| RunError::TooMuch {
            cap: limits.cap,
            stdout: out.text,
        };
        if !out.drain(room).map_err(RunError::Io)? {
            return Err(too_much(out));
        }
        let room = limits.cap.saturating_sub(out.text.len() + err.text.len());
        if !err.drain(room).map_err(RunError::Io)? {
            return Err(too_much(out));
        }
        if exited_at.is_none() && child.try_wait().map_err(RunError::Io)?.is_some() {
            exited_at = Some(Instant::now());
        }
        let now = Instant::now();
        match exited_at {
            Some(_) if out.pipe.is_none() && err.pipe.is_none() => return Ok((out.text, err.text)),
            Some(at) if now >= at + limits.linger => return Err(RunError::KeptOpen(limits.linger)),
            _ => {}
        }
        if now >= deadline {
            return Err(RunError::Deadline(limits.deadline));
        }
        // Wakes for output; every 20 ms at the latest to see whether the process exited.
        let wait = (deadline - now).min(Duration::from_millis(20));
        let fds: Vec<i32> = [
            out.pipe.as_ref().map(AsRawFd::as_raw_fd),
            err.pipe.as_ref().map(AsRawFd::as_raw_fd),
        ]
        .into_iter()
        .flatten()
        .collect();
        poll_readable(&fds, wait);
    }
}

fn set_nonblocking(fd: i32) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor this process owns (a child's pipe end), with plain flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags == -1 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn poll_readable(fds: &[i32], wait: Duration) {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX).max(1);
    if polls.is_empty() {
        std::thread::sleep(wait);
        return;
    }
    // SAFETY: poll on a vector of pollfd this function owns, with its true length. An error (EINTR)
    // only ends this wait early; the caller looks again.
    unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
}

fn kill_group(child: &Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads. Its id
        // cannot have gone to another process: either the child is not reaped yet, or it was and
        // members of its group still hold the pipe, and a group's id is not given out while the
        // group has members.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

/// Retries a spawn that failed with "text file busy": a script written a moment ago can still be open
/// for writing in a child another thread forked and has not yet exec'ed.
pub(crate) fn retry_busy<T>(mut f: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut tries = 0;
    loop {
        match f() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests;
