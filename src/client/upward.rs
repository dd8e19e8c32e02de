//! What the client sends up to the server, written straight from the thread that has it (the
//! stdin reader for keys): a key's frame does not wait for the client's loop to wake up. One lock
//! keeps frames from different threads whole. The socket is non-blocking (the loop reads it through
//! tokio), so a full socket is waited out with `poll`.

use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone)]
pub struct Upward(Arc<Mutex<UnixStream>>);

impl Upward {
    pub fn new(stream: UnixStream) -> Self {
        Self(Arc::new(Mutex::new(stream)))
    }

    /// Writes one whole frame; waits at most `limit` for room in the socket (`None`: as long as
    /// it takes).
    pub fn send(&self, frame: &[u8], limit: Option<Duration>) -> io::Result<()> {
        let deadline = limit.map(|l| Instant::now() + l);
        let stream = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut rest = frame;
        while !rest.is_empty() {
            match (&*stream).write(rest) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_writable(&stream, deadline)?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

fn wait_writable(stream: &UnixStream, deadline: Option<Instant>) -> io::Result<()> {
    let timeout = match deadline {
        None => -1,
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::from(io::ErrorKind::TimedOut));
            }
            i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX)
        }
    };
    let mut fds = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd on the stack.
    let r = unsafe { libc::poll(&mut fds, 1, timeout) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(())
        } else {
            Err(e)
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn frames_from_two_threads_arrive_whole_through_a_full_socket() {
        let (a, mut b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let up = Upward::new(a);
        let frame = |c: u8| vec![c; 300_000];
        let writers: Vec<_> = [b'x', b'y']
            .into_iter()
            .map(|c| {
                let up = up.clone();
                std::thread::spawn(move || up.send(&frame(c), Some(Duration::from_secs(20))))
            })
            .collect();
        let mut got = vec![0u8; 600_000];
        b.read_exact(&mut got).unwrap();
        for w in writers {
            w.join().unwrap().unwrap();
        }
        // Each frame is one run of its byte: the other's bytes never land inside it.
        let switches = got.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(switches, 1, "the two frames interleaved");
    }

    #[test]
    fn a_peer_that_never_reads_makes_a_bounded_send_fail_instead_of_hanging() {
        let (a, _b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let up = Upward::new(a);
        let err = up
            .send(&vec![0u8; 8 << 20], Some(Duration::from_millis(100)))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }
}
