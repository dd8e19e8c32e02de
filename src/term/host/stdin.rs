//! The thread that reads the terminal: bytes go through the start gate to the loop; EOF or an
//! error (the terminal is gone) is reported once.

use std::time::{Duration, Instant};

use super::start_gate::StartGate;
use super::test_hook::LoopBlocker;

/// How often a holding gate looks whether the child is ready, when no key comes.
const GATE_POLL: Duration = Duration::from_millis(20);

/// Where the reader's results go.
pub struct Sinks<P, C, R> {
    /// Bytes for the loop; false when the loop is gone.
    pub pass: P,
    /// The terminal is gone.
    pub closed: C,
    /// Whether the child has taken its terminal (see [`StartGate`]).
    pub child_ready: R,
}

enum Read {
    Bytes(usize),
    Nothing,
    Closed,
}

/// Reads fd 0 into `buf`, waiting at most `wait` when given.
fn read_stdin(buf: &mut [u8], wait: Option<Duration>) -> Read {
    loop {
        if let Some(wait) = wait {
            let mut pfd = libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
            // SAFETY: one valid pollfd on the stack.
            match unsafe { libc::poll(&mut pfd, 1, ms) } {
                0 => return Read::Nothing,
                n if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {
                    return Read::Nothing;
                }
                _ => {}
            }
        }
        // SAFETY: reading into a buffer of the given length.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return if n <= 0 {
            Read::Closed
        } else {
            Read::Bytes(n as usize)
        };
    }
}

/// Starts the reader. `first` runs on the reader's thread before anything is read (it reads the
/// start-up probe's answers); the keys it returns go through the gate first.
pub fn spawn<F, P, C, R>(
    first: F,
    mut gate: StartGate,
    mut blocker: Option<LoopBlocker>,
    sinks: Sinks<P, C, R>,
) where
    F: FnOnce() -> Vec<u8> + Send + 'static,
    P: FnMut(Vec<u8>) -> bool + Send + 'static,
    C: FnOnce() + Send + 'static,
    R: Fn() -> bool + Send + 'static,
{
    let Sinks {
        mut pass,
        closed,
        child_ready,
    } = sinks;
    std::thread::spawn(move || {
        let mut leftover = first();
        // Keys typed during the probe are keys like any other, the test hook's included.
        if blocker.as_mut().is_some_and(|b| b.intercept(&leftover)) {
            leftover.clear();
        }
        let mut buf = vec![0u8; 16 * 1024];
        if let Some(bytes) = gate.offer(&leftover, Instant::now(), child_ready())
            && !pass(bytes)
        {
            return;
        }
        loop {
            let wait = gate.holding().then_some(GATE_POLL);
            let out = match read_stdin(&mut buf, wait) {
                Read::Closed => {
                    closed();
                    return;
                }
                Read::Nothing => gate.check(Instant::now(), child_ready()),
                Read::Bytes(n) => {
                    let bytes = &buf[..n];
                    if blocker.as_mut().is_some_and(|b| b.intercept(bytes)) {
                        continue;
                    }
                    gate.offer(bytes, Instant::now(), child_ready())
                }
            };
            if let Some(bytes) = out
                && !pass(bytes)
            {
                return;
            }
        }
    });
}
