//! A client's socket (or its terminal, when the server writes the screen there itself:
//! `super::terminal`) as the session it follows writes to it. A frame is written by the session's
//! own thread when nothing else is on its way there: one thread hop less between pi's echo and
//! the terminal (the connection's writer task, on the server's main thread, would otherwise have to
//! wake for every frame). Everything else goes through the writer as before: the server's messages,
//! frames while the writer still has something to write, and the end of a frame the socket took
//! only in part.
//!
//! The rules that keep the byte stream whole:
//! - every message handed to the writer is counted in `busy` before it is sent, and uncounted once
//!   written or dropped; the session writes itself only while `busy` is zero;
//! - the session writes holding `gate`; the writer takes and lets go of `gate` before each write, so
//!   it never writes while the session is half-way through one;
//! - the unwritten end of a frame (`tail`) is written by the writer before anything else;
//! - a follow has a number: the session may write only while its number is the connection's, so
//!   after a switch or a detach nothing of the old session reaches the socket.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex, OnceLock};

use super::terminal::Terminal;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What became of a frame the session tried to write itself.
#[derive(Debug, PartialEq, Eq)]
pub enum Direct {
    /// All of it is on the socket.
    Written,
    /// Not written: it goes through the writer (something else is on its way, or this follow is over).
    Queue,
    /// Part of it is on the socket; the rest was left for the writer, which must be woken.
    Tail,
    /// The socket is closed.
    Gone,
}

#[derive(Debug)]
pub struct Outbox {
    /// The connection's socket (a duplicate: the connection may close its own first).
    fd: OwnedFd,
    /// Held while bytes are written by the session; the unwritten end of its last frame.
    gate: Mutex<Option<Vec<u8>>>,
    busy: AtomicUsize,
    follow: AtomicU64,
    /// The client's terminal, when the server writes the screen there itself; set before the
    /// client follows any session, so that the screen's bytes never change way mid-stream.
    terminal: OnceLock<Arc<Terminal>>,
}

impl Outbox {
    /// For the socket `fd` (already non-blocking, as tokio keeps it).
    pub fn new(fd: BorrowedFd<'_>) -> std::io::Result<Self> {
        Ok(Self {
            fd: fd.try_clone_to_owned()?,
            gate: Mutex::new(None),
            busy: AtomicUsize::new(0),
            follow: AtomicU64::new(0),
            terminal: OnceLock::new(),
        })
    }

    fn gate(&self) -> std::sync::MutexGuard<'_, Option<Vec<u8>>> {
        self.gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// From now on the screen's bytes go to `terminal`, raw, rather than framed on the socket.
    pub fn set_terminal(&self, terminal: Arc<Terminal>) {
        let _ = self.terminal.set(terminal);
    }

    /// The client's terminal, when the screen goes there.
    pub fn terminal(&self) -> Option<&Arc<Terminal>> {
        self.terminal.get()
    }

    /// A new follow begins (or the last one ended): its number. Waits for a write under way.
    pub fn next_follow(&self) -> u64 {
        let _gate = self.gate();
        self.follow.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// One more message is on its way to the writer.
    pub fn counted(&self) {
        self.busy.fetch_add(1, Ordering::AcqRel);
    }

    /// The writer is done with one message.
    pub fn uncounted(&self) {
        let _ = self
            .busy
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// Writes the screen's bytes from the session's thread if nothing is before them: raw to the
    /// client's terminal, or as a frame on the socket (made only then: bytes that go through the
    /// writer are framed there).
    pub fn try_write(&self, follow: u64, screen: &[u8]) -> Direct {
        let mut tail = self.gate();
        if self.follow.load(Ordering::Acquire) != follow
            || self.busy.load(Ordering::Acquire) != 0
            || tail.is_some()
        {
            return Direct::Queue;
        }
        let terminal = self.terminal.get();
        let framed;
        let bytes = match terminal {
            Some(_) => screen,
            None => {
                framed = pokeshell_core::wire::encode_output(screen);
                &framed[..]
            }
        };
        let mut done = 0;
        while done < bytes.len() {
            let rest = &bytes[done..];
            let written = match terminal {
                Some(t) => t.write(rest),
                None => send(&self.fd, rest),
            };
            match written {
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && done == 0 => return Direct::Queue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    *tail = Some(rest.to_vec());
                    self.counted();
                    return Direct::Tail;
                }
                Err(_) => return Direct::Gone,
            }
        }
        Direct::Written
    }

    /// For the writer, before it writes anything: waits for a write of the session's under way, and
    /// takes the end of what the session left, to be written first (to the terminal, when the
    /// screen goes there).
    pub fn before_write(&self) -> Option<Vec<u8>> {
        self.gate().take()
    }
}

/// One non-blocking send on the socket.
fn send(fd: &OwnedFd, bytes: &[u8]) -> std::io::Result<usize> {
    // SAFETY: sending from a live slice of its own length on a descriptor the outbox owns.
    let n = unsafe {
        libc::send(
            fd.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests;
