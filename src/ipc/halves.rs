//! A descriptor between the server and a client (the client's socket, or its terminal when the
//! server holds it), split so that each side wakes for its own work and nothing else. tokio's own
//! streams wait for bytes to read and for room at once, so every message the other side read (each
//! freeing room: an edge) woke the thread for nothing: in a quiet session, one wake of two per key.
//! Here the reader waits only for bytes, and the writer asks for room only while a write waits for
//! it. Both halves are registered with the runtime that made them: a connection that moves to
//! another runtime drops them and makes new ones there.
//!
//! A descriptor is held as a `File`, whose reads and writes are plain `read(2)` and `write(2)`, for
//! a socket as for a terminal; a write to a socket whose reader is gone fails with `EPIPE` (Rust
//! ignores `SIGPIPE`).

use std::fs::File;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};

/// Registers `fd` with the current runtime for `interest` alone.
fn register<F: std::os::fd::AsRawFd>(fd: F, interest: Interest) -> io::Result<AsyncFd<F>> {
    // SAFETY: the registration owns the descriptor (a `File`, or an `Arc` of one): it stays open,
    // and the same, for as long as the registration lives.
    unsafe { AsyncFd::register_with_interest(fd, interest) }.map_err(io::Error::from)
}

/// `op` on `file`, again when interrupted.
fn retried(mut op: impl FnMut() -> io::Result<usize>) -> io::Result<usize> {
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            done => return done,
        }
    }
}

/// The reading side, for a client that reads the server's socket.
pub fn reader(stream: std::os::unix::net::UnixStream) -> io::Result<ReadHalf> {
    stream.set_nonblocking(true)?;
    ReadHalf::new(Arc::new(std::os::fd::OwnedFd::from(stream).into()))
}

pub struct ReadHalf {
    fd: AsyncFd<Arc<File>>,
}

impl ReadHalf {
    /// Reads `file` (non-blocking already) on this runtime.
    pub fn new(file: Arc<File>) -> io::Result<ReadHalf> {
        Ok(ReadHalf {
            fd: register(file, Interest::READABLE)?,
        })
    }

    /// Waits for bytes and reads what is there; 0 is the end.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.fd.readable().await?;
            // `Err`: nothing after all; readiness was cleared, wait again.
            if let Ok(read) = ready.try_io(|f| retried(|| f.get_ref().as_ref().read(buf))) {
                return read;
            }
        }
    }
}

impl AsyncRead for ReadHalf {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            if let Ok(read) = ready.try_io(|f| retried(|| f.get_ref().as_ref().read(unfilled))) {
                return Poll::Ready(read.map(|n| buf.advance(n)));
            }
        }
    }
}

pub struct WriteHalf {
    file: Arc<File>,
    /// A registration for room, made when a write would block and dropped once one went through.
    room: Option<AsyncFd<File>>,
}

impl WriteHalf {
    pub fn new(file: Arc<File>) -> WriteHalf {
        WriteHalf { file, room: None }
    }

    /// Writes what the descriptor takes now (`WouldBlock` when it takes nothing).
    pub fn try_write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = retried(|| self.file.as_ref().write(bytes))?;
        self.room = None;
        Ok(n)
    }

    /// Waits until the descriptor may take more, after a write that would block.
    pub async fn room(&mut self) -> io::Result<()> {
        if self.room.is_none() {
            // A descriptor of its own: one runtime cannot register one descriptor twice.
            self.room = Some(register(self.file.try_clone()?, Interest::WRITABLE)?);
        }
        if let Some(room) = &self.room {
            // Room was seen; if the next write still would block, wait for the next edge.
            room.writable().await?.clear_ready();
        }
        Ok(())
    }
}

/// Both halves of a non-blocking descriptor, on this runtime.
pub fn split(file: &Arc<File>) -> io::Result<(ReadHalf, WriteHalf)> {
    Ok((ReadHalf::new(file.clone())?, WriteHalf::new(file.clone())))
}

#[cfg(test)]
mod tests;
