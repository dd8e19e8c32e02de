//! Shutdown that does not depend on the event loop.
//!
//! SIGTERM and SIGHUP are caught by a handler that only writes the signal's number into a pipe; one
//! thread reads that pipe, passes each signal on to the loop, and arms a deadline. The loss of the
//! terminal (stdin at EOF or EIO) arms it too. The loop normally ends the child and finishes well
//! before the deadline; if it has not (it is blocked, or far too slow), the watchdog puts the terminal
//! back without any lock the stuck loop may hold, ends the child itself (the same signal to its
//! process group, SIGKILL after a grace), ends what the child left running, and exits with 128+N
//! (N = the signal; SIGHUP's 1 for a lost terminal), as if pokeshell had been killed by it.

use std::os::fd::IntoRawFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Longer than the loop's own grace (SIGKILL to the child 5 s after the signal), so that a loop
/// that works always finishes first and pokeshell exits with the child's code.
pub const GRACE: Duration = Duration::from_secs(8);
/// How long the child gets between the watchdog's signal and SIGKILL.
const CHILD_GRACE: Duration = Duration::from_secs(2);
/// What the child left running gets this long after SIGTERM.
const ORPHAN_GRACE: Duration = Duration::from_secs(1);

/// Bytes on the pipe besides signal numbers.
const TERMINAL_LOST: u8 = 0xfe;
const FINISHED: u8 = 0xff;

/// Why the watchdog was armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    Signal(i32),
    TerminalLost,
}

impl Cause {
    /// The signal the child gets, and 128 + it is the exit code.
    pub fn signal(self) -> i32 {
        match self {
            Cause::Signal(sig) => sig,
            Cause::TerminalLost => libc::SIGHUP,
        }
    }
}

/// The watchdog's state, without threads or clocks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    armed: Option<(Instant, Cause)>,
    finished: bool,
}

impl Watch {
    /// The first cause sets the deadline; later ones do not move it.
    pub fn arm(&mut self, cause: Cause, now: Instant) {
        if !self.finished && self.armed.is_none() {
            self.armed = Some((now + GRACE, cause));
        }
    }

    /// The loop has finished: nothing is left to watch.
    pub fn finish(&mut self) {
        self.finished = true;
        self.armed = None;
    }

    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The cause whose deadline has passed.
    pub fn due(&self, now: Instant) -> Option<Cause> {
        self.armed.filter(|(at, _)| *at <= now).map(|(_, c)| c)
    }

    /// How long to wait for the next byte: `None` for as long as it takes.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        self.armed.map(|(at, _)| at.saturating_duration_since(now))
    }
}

/// The write end of the pipe, for the signal handler (-1 before it exists).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe calls here: errno is saved around one write(2) to a non-blocking pipe.
    // SAFETY: errno's location is thread-local and valid; write(2) is async-signal-safe and the
    // byte is a local.
    unsafe {
        let errno = errno_location();
        let saved = *errno;
        let fd = PIPE_WRITE.load(Ordering::Relaxed);
        if fd >= 0 {
            let byte = sig as u8;
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
        *errno = saved;
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno; no preconditions.
    unsafe { libc::__errno_location() }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
unsafe fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno; no preconditions.
    unsafe { libc::__error() }
}

fn send(byte: u8) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: writing one byte from a local to our own pipe.
        unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    }
}

/// A handle for the threads that report to the watchdog.
#[derive(Debug, Clone, Copy)]
pub struct Watchdog(());

impl Watchdog {
    /// Catches SIGTERM and SIGHUP from now on (each is given to `forward` on the watchdog's thread)
    /// and starts that thread. For one run per process: a second call replaces the first.
    pub fn start(forward: impl Fn(i32) + Send + 'static) -> Result<Self> {
        let (reader, writer) = std::io::pipe().context("cannot create the watchdog's pipe")?;
        let (read_fd, write_fd) = (reader.into_raw_fd(), writer.into_raw_fd());
        // A full pipe must not block a signal handler; the bytes are never more than a handful.
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let flags = libc::fcntl(write_fd, libc::F_GETFL);
            libc::fcntl(write_fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        PIPE_WRITE.store(write_fd, Ordering::SeqCst);
        std::thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || watch(read_fd, forward))
            .context("cannot start the watchdog thread")?;
        for sig in [libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: a zeroed sigaction with a handler that only writes to a pipe, installed for
            // two plain signal numbers.
            let ok = unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                libc::sigaction(sig, &act, std::ptr::null_mut()) == 0
            };
            if !ok {
                return Err(std::io::Error::last_os_error()).context("cannot catch SIGTERM and SIGHUP");
            }
        }
        Ok(Self(()))
    }

    /// stdin hit EOF or an error: the terminal is gone.
    pub fn terminal_lost(&self) {
        send(TERMINAL_LOST);
    }

    /// The loop has finished; what is left of the shutdown is bounded.
    pub fn finished(&self) {
        send(FINISHED);
    }
}

fn watch(fd: i32, forward: impl Fn(i32)) {
    let mut state = Watch::default();
    loop {
        let now = Instant::now();
        if let Some(cause) = state.due(now) {
            take_over(cause);
        }
        let timeout = state
            .wait(now)
            .map_or(-1, |d| i32::try_from(d.as_millis() + 1).unwrap_or(i32::MAX));
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd on the stack.
        if unsafe { libc::poll(&mut pfd, 1, timeout) } <= 0 {
            continue;
        }
        let mut byte = 0u8;
        // SAFETY: reading one byte into a local.
        if unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) } != 1 {
            continue;
        }
        match byte {
            FINISHED => state.finish(),
            TERMINAL_LOST => state.arm(Cause::TerminalLost, Instant::now()),
            sig => {
                let sig = i32::from(sig);
                forward(sig);
                state.arm(Cause::Signal(sig), Instant::now());
            }
        }
        if state.finished() {
            return;
        }
    }
}

/// The loop did not finish in time: restore the terminal, end the child and what it left, exit.
fn take_over(cause: Cause) -> ! {
    // The terminal first: the user gets it back while the child is being ended.
    super::restore_from_any_thread();
    let sig = cause.signal();
    crate::term::pty::signal_child(sig);
    if !child_gone_within(CHILD_GRACE) {
        crate::term::pty::signal_child(libc::SIGKILL);
        child_gone_within(CHILD_GRACE);
    }
    crate::term::reaper::end_orphans(ORPHAN_GRACE);
    // SAFETY: _exit ends the process at once; nothing buffered by the stuck loop is flushed.
    unsafe { libc::_exit(128 + sig) }
}

/// Whether the child has been reaped (by the PTY's waiter thread) within `limit`.
fn child_gone_within(limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while crate::term::pty::live_child_pid().is_some() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_cause_sets_the_deadline_and_later_ones_do_not_move_it() {
        let t0 = Instant::now();
        let mut w = Watch::default();
        assert_eq!(w.wait(t0), None, "unarmed: wait for as long as it takes");
        w.arm(Cause::Signal(libc::SIGTERM), t0);
        w.arm(Cause::TerminalLost, t0 + Duration::from_secs(3));
        assert_eq!(w.wait(t0), Some(GRACE));
        assert_eq!(w.due(t0 + GRACE - Duration::from_millis(1)), None);
        assert_eq!(w.due(t0 + GRACE), Some(Cause::Signal(libc::SIGTERM)));
    }

    #[test]
    fn a_finished_loop_disarms_it_for_good() {
        let t0 = Instant::now();
        let mut w = Watch::default();
        w.arm(Cause::TerminalLost, t0);
        w.finish();
        assert_eq!(w.due(t0 + GRACE * 2), None);
        w.arm(Cause::Signal(libc::SIGHUP), t0);
        assert_eq!(w.due(t0 + GRACE * 2), None);
        assert!(w.finished());
    }

    #[test]
    fn a_lost_terminal_ends_like_a_hangup() {
        assert_eq!(Cause::TerminalLost.signal(), libc::SIGHUP);
        assert_eq!(Cause::Signal(libc::SIGTERM).signal(), libc::SIGTERM);
    }
}
