//! Asks the host terminal once, at start-up, what it supports (kitty keyboard, colours, DA1).

use std::io::Write;
use std::time::{Duration, Instant};

use crate::term::screen::HostCaps;

/// Long enough for a terminal across a slow SSH link, short enough not to be noticed when the host
/// answers nothing.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(300);

/// Writes the probe's queries to the host; false when the terminal cannot be written.
pub fn send() -> bool {
    let mut out = std::io::stdout().lock();
    out.write_all(&HostCaps::probe_query())
        .and_then(|()| out.flush())
        .is_ok()
}

/// What the host answered to [`send`], as it came (with any keys typed meanwhile).
pub fn read_raw_answers(timeout: Duration) -> Vec<u8> {
    let deadline = Instant::now() + timeout;
    let mut got = Vec::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let wait = i32::try_from((deadline - now).as_millis()).unwrap_or(i32::MAX);
        let mut fds = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd on the stack.
        let ready = unsafe { libc::poll(&mut fds, 1, wait) };
        if ready <= 0 {
            if ready < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        let mut buf = [0u8; 4096];
        // SAFETY: reading into a local buffer of the given length.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        got.extend_from_slice(&buf[..n as usize]);
        if HostCaps::parse_probe(&got).complete {
            break;
        }
    }
    got
}
