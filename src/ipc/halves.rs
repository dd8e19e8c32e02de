//! A socket between a client and the server, split so that each side wakes for what it waits on
//! and nothing else. tokio's own stream waits for the socket to be readable and to have room at
//! once, so every message the other side read (each freeing room: an edge) woke the thread for
//! nothing: the server's main thread once per frame a client read (in a quiet session, one wake of
//! two per key), and the client's once per key the server read. Here the reader waits only for
//! bytes to read, and the writer asks for room only while a write is waiting for it.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// Registers `stream` with the runtime for `interest` alone.
fn register<S: AsRawFd>(stream: S, interest: Interest) -> io::Result<AsyncFd<S>> {
    // SAFETY: the registration owns the stream (a socket, or an `Arc` of one): its descriptor stays
    // open, and the same, for as long as the registration lives.
    unsafe { AsyncFd::register_with_interest(stream, interest) }.map_err(io::Error::from)
}

/// Splits a connection into a reader and a writer, both non-blocking.
pub fn split(stream: UnixStream) -> io::Result<(ReadHalf, WriteHalf)> {
    let stream = Arc::new(stream);
    stream.set_nonblocking(true)?;
    let reader = ReadHalf::of(stream.clone())?;
    Ok((reader, WriteHalf { stream, room: None }))
}

/// The reading side alone, for a client whose writes go out from its own thread.
pub fn reader(stream: UnixStream) -> io::Result<ReadHalf> {
    split(stream).map(|(reader, _)| reader)
}

pub struct ReadHalf {
    fd: AsyncFd<Arc<UnixStream>>,
}

impl ReadHalf {
    /// Reads `stream` (non-blocking already) in this runtime.
    pub fn of(stream: Arc<UnixStream>) -> io::Result<ReadHalf> {
        Ok(ReadHalf {
            fd: register(stream, Interest::READABLE)?,
        })
    }

    /// Lets go of this runtime's registration, for another runtime to read the socket.
    pub fn into_stream(self) -> Arc<UnixStream> {
        self.fd.into_inner()
    }
}

impl AsyncRead for ReadHalf {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match ready.try_io(|s| s.get_ref().as_ref().read(unfilled)) {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // Nothing to read after all: readiness was cleared, wait again.
                Err(_) => {}
            }
        }
    }
}

pub struct WriteHalf {
    stream: Arc<UnixStream>,
    /// A registration for room, made when a write would block and dropped once it went through.
    room: Option<AsyncFd<UnixStream>>,
}

impl AsyncWrite for WriteHalf {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            match self.stream.as_ref().write(bytes) {
                Ok(n) => {
                    self.room = None;
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.room.is_none() {
                        // A descriptor of its own: one runtime cannot register one descriptor twice.
                        self.room = Some(register(self.stream.try_clone()?, Interest::WRITABLE)?);
                    }
                    let Some(room) = &self.room else { continue };
                    let mut ready = ready!(room.poll_write_ready(cx))?;
                    // Room was seen; if the next write still would block, wait for the next edge.
                    ready.clear_ready();
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.stream.shutdown(std::net::Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// The events every epoll instance of this process watches descriptor `fd` for (from
    /// `/proc/self/fdinfo`): the kernel's own record of what the runtime registered.
    fn watched_for(fd: i32) -> Vec<u32> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc/self/fd")
            .expect("/proc/self/fd")
            .flatten()
        {
            let is_epoll =
                std::fs::read_link(entry.path()).is_ok_and(|l| l.to_string_lossy().contains("eventpoll"));
            let info = std::fs::read_to_string(format!(
                "/proc/self/fdinfo/{}",
                entry.file_name().to_string_lossy()
            ));
            let (true, Ok(info)) = (is_epoll, info) else {
                continue;
            };
            for line in info.lines() {
                let mut words = line.split_whitespace();
                if words.next() == Some("tfd:") && words.next() == Some(&fd.to_string()) {
                    let events = words.skip_while(|w| *w != "events:").nth(1).unwrap_or("0");
                    found.push(u32::from_str_radix(events, 16).expect("a hex event mask"));
                }
            }
        }
        found
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_reader_is_registered_for_bytes_to_read_and_never_for_room() {
        let (ours, mut theirs) = UnixStream::pair().expect("socket pair");
        let fd = ours.as_raw_fd();
        let (mut rd, mut wr) = split(ours).expect("split");
        // (The runtime's poller may be reached through more than one descriptor: each lists it.)
        let events = watched_for(fd);
        assert!(!events.is_empty(), "the socket is registered");
        for mask in events {
            assert!(mask & libc::EPOLLIN as u32 != 0, "it waits for bytes: {mask:x}");
            assert!(
                mask & libc::EPOLLOUT as u32 == 0,
                "it never waits for room, which the other side makes each time it reads: {mask:x}"
            );
        }
        // Both ways still work.
        wr.write_all(b"ping").await.expect("written");
        let mut got = [0u8; 4];
        theirs.read_exact(&mut got).expect("read");
        assert_eq!(&got, b"ping");
        theirs.write_all(b"pong").expect("written");
        let mut got = [0u8; 4];
        rd.read_exact(&mut got).await.expect("read");
        assert_eq!(&got, b"pong");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_write_bigger_than_the_socket_waits_for_room_and_arrives_whole() {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        let (_rd, mut wr) = split(ours).expect("split");
        let want: Vec<u8> = (0..8u32 << 20).map(|j| (j % 251) as u8).collect();
        let reader = std::thread::spawn(move || {
            let mut theirs = theirs;
            let mut got = Vec::new();
            theirs.read_to_end(&mut got).map(|_| got)
        });
        wr.write_all(&want).await.expect("written");
        wr.shutdown().await.expect("shut down");
        let got = reader.join().expect("reader").expect("read");
        assert!(got == want, "the stream arrived whole and in order");
        // Once the write went through, the wait for room is let go.
        assert!(wr.room.is_none(), "no registration for room is kept");
    }
}
