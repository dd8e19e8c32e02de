//! A client's terminal, opened by the server itself. A key typed in an attached terminal used to wake
//! the client, which read it and wrote it to the server's socket, and every frame woke the client
//! again to copy it from the socket to the terminal: two of the ten thread wakes between a key and
//! its echo. tmux's server reads and writes its clients' terminals itself; so does pokeshell's when
//! the client names its terminal in [`super::wire::Up::Open`] and the server can open it. The
//! client then only keeps the terminal's modes, its size and its signals; the socket carries
//! everything but keys and screen bytes.
//!
//! The server opens the terminal by its path, so that its own open file (non-blocking) leaves the
//! client's as it was. It reads and writes only while the terminal is the session's:
//! - paused while the client is stopped with pi (Ctrl+Z), when the shell owns the terminal;
//! - closed for good before the server tells the client it is detached, or that it ends or leaves
//!   for another machine, so that no key typed into the shell afterwards is taken.
//!
//! Every read and write holds the state's lock, so once [`Terminal::close`] returns nothing more
//! is read or written.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Mutex;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

/// Whether the server may use the terminal now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    Open,
    /// The client is stopped: the shell owns the terminal until the client runs again.
    Paused,
    /// For good: the client was told it leaves.
    Closed,
}

/// The path of the terminal open on `fd`, if it is one.
pub fn path_of(fd: std::os::fd::BorrowedFd<'_>) -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: ttyname_r writes at most the buffer's length, NUL included, into a live buffer.
    let r = unsafe { libc::ttyname_r(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return None;
    }
    let end = buf.iter().position(|b| *b == 0)?;
    String::from_utf8(buf[..end].to_vec()).ok()
}

#[derive(Debug)]
pub struct Terminal {
    fd: OwnedFd,
    state: Mutex<Use>,
    /// Told of every change of `state`.
    changed: Notify,
}

/// What a read of the terminal gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Typed {
    Bytes(usize),
    /// Nothing to read now.
    Nothing,
    /// Not the server's to read now.
    Paused,
    /// Closed, hung up or failed: the server reads it no more.
    Ended,
}

impl Terminal {
    /// Opens the terminal at `path` (a device under /dev that is a terminal).
    pub fn open(path: &str) -> io::Result<Terminal> {
        if !path.starts_with("/dev/") {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a device path"));
        }
        let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a valid C string; the descriptor returned is owned once below.
        let raw = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor from open, owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: isatty only looks at the descriptor.
        if unsafe { libc::isatty(fd.as_raw_fd()) } != 1 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a terminal"));
        }
        Ok(Terminal {
            fd,
            state: Mutex::new(Use::Open),
            changed: Notify::new(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Use> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set(&self, to: Use) {
        let mut state = self.state();
        // Closed is for good.
        if *state != Use::Closed {
            *state = to;
        }
        drop(state);
        self.changed.notify_waiters();
    }

    pub fn pause(&self) {
        self.set(Use::Paused);
    }

    pub fn resume(&self) {
        self.set(Use::Open);
    }

    /// After this returns, nothing is read from or written to the terminal again.
    pub fn close(&self) {
        self.set(Use::Closed);
    }

    pub fn is_closed(&self) -> bool {
        *self.state() == Use::Closed
    }

    /// Reads what was typed, without waiting.
    pub fn read(&self, buf: &mut [u8]) -> Typed {
        let state = self.state();
        match *state {
            Use::Paused => return Typed::Paused,
            Use::Closed => return Typed::Ended,
            Use::Open => {}
        }
        loop {
            // SAFETY: reading into a live buffer of its length, holding the state's lock.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                return Typed::Bytes(n as usize);
            }
            if n == 0 {
                return Typed::Ended;
            }
            match io::Error::last_os_error().kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Typed::Nothing,
                _ => return Typed::Ended,
            }
        }
    }

    /// Writes what it can of `bytes` without waiting. While the terminal is not the session's the
    /// bytes are dropped as if written: the session draws everything again when the client is back.
    pub fn write(&self, bytes: &[u8]) -> io::Result<usize> {
        let state = self.state();
        if *state != Use::Open {
            return Ok(bytes.len());
        }
        loop {
            // SAFETY: writing from a live slice of its length, holding the state's lock.
            let n = unsafe { libc::write(self.fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// A registration of the terminal with the current runtime, for `interest`: a descriptor of its
    /// own, since one runtime cannot register one descriptor twice.
    fn register(&self, interest: Interest) -> io::Result<AsyncFd<OwnedFd>> {
        // SAFETY: the registration owns its descriptor, open for as long as it lives.
        unsafe { AsyncFd::register_with_interest(self.fd.try_clone()?, interest) }.map_err(io::Error::from)
    }
}

/// The terminal's keys, read on the runtime this was made on.
pub struct Keys {
    fd: AsyncFd<OwnedFd>,
}

impl Keys {
    pub fn new(term: &Terminal) -> io::Result<Keys> {
        Ok(Keys {
            fd: term.register(Interest::READABLE)?,
        })
    }

    /// Waits for keys; `Paused` is not returned: it waits until the terminal is open or closed.
    pub async fn read(&mut self, term: &Terminal, buf: &mut [u8]) -> Typed {
        loop {
            let changed = term.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            match term.read(buf) {
                Typed::Nothing => {}
                Typed::Paused => {
                    changed.await;
                    continue;
                }
                done => return done,
            }
            tokio::select! {
                ready = self.fd.readable() => match ready {
                    Ok(mut guard) => guard.clear_ready(),
                    Err(_) => return Typed::Ended,
                },
                () = &mut changed => {}
            }
        }
    }
}

/// Writes screen bytes to the terminal, waiting for room (registered only while a write waits).
#[derive(Default)]
pub struct Writer {
    room: Option<AsyncFd<OwnedFd>>,
}

impl Writer {
    pub async fn write_all(&mut self, term: &Terminal, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            match term.write(bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.room.is_none() {
                        self.room = Some(term.register(Interest::WRITABLE)?);
                    }
                    let changed = term.changed.notified();
                    tokio::pin!(changed);
                    changed.as_mut().enable();
                    if let Some(room) = &self.room {
                        // A pause or a close drops what is left: woken for it too.
                        tokio::select! {
                            ready = room.writable() => ready?.clear_ready(),
                            () = &mut changed => {}
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
        self.room = None;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests;
