//! The PTY's master, read and written without a thread hop where none is needed. The master is
//! non-blocking: what the caller writes goes straight in when nothing waits before it and the PTY
//! takes it at once (a typed key: no wake-up of another thread); the rest waits, in order, for the
//! writer thread, which waits for room (started the first time the PTY is full). The caller never
//! blocks. Readers wait with `poll`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, mpsc};
use std::thread;

/// A handle on the master of one PTY, its own descriptor kept open while a reader or writer needs it.
pub type Master = Arc<OwnedFd>;

/// Duplicates the master's descriptor and makes the master non-blocking (for every descriptor of
/// it: the reader then waits with [`wait`]).
pub fn master(fd: RawFd) -> io::Result<Master> {
    // SAFETY: fcntl on a descriptor the caller owns; the duplicate is owned once, below.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(dup) };
    // SAFETY: reading and setting the status flags of our descriptor.
    unsafe {
        let flags = libc::fcntl(dup, libc::F_GETFL);
        if flags < 0 || libc::fcntl(dup, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(Arc::new(owned))
}

/// Waits until the master is readable (`POLLIN`) or writable (`POLLOUT`), or hung up.
pub fn wait(fd: &OwnedFd, events: libc::c_short) {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd on the stack. An error (EINTR) only means: try again.
    unsafe { libc::poll(&mut p, 1, -1) };
}

/// Waits at most `ms` milliseconds for the master to be readable (or hung up); `false`: it was not.
pub fn readable_within(fd: &OwnedFd, ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd on the stack. An error (EINTR) counts as readable: the caller's
    // read then says what there is.
    unsafe { libc::poll(&mut p, 1, ms) != 0 }
}

/// Reads what is there without waiting (`WouldBlock`: nothing is); `Ok(0)`: the child's side is
/// closed (a PTY says so with EIO).
pub fn read_now(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: reading into a buffer of its length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => {}
            _ if e.raw_os_error() == Some(libc::EIO) => return Ok(0),
            _ => return Err(e),
        }
    }
}

/// Reads what is there, waiting for it; `Ok(0)`: the child's side is closed.
pub fn read(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match read_now(fd, buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait(fd, libc::POLLIN),
            read => return read,
        }
    }
}

/// Writes what the PTY takes now. `Err`: it never will (the child's side is gone).
fn write_now(fd: &OwnedFd, bytes: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: writing from a buffer of its length.
        let n = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => return Ok(0),
            _ => return Err(e),
        }
    }
}

/// The child's input. Clones share the order of what they write.
#[derive(Clone)]
pub struct Input {
    fd: Master,
    /// Writes handed to the writer thread and not all written yet; under its lock, the queue's
    /// order is the order of the writes.
    waiting: Arc<Mutex<usize>>,
    /// The writer thread's queue, made the first time the PTY is full: a session whose child reads
    /// its input (nearly every one) never starts the thread.
    writer: Arc<OnceLock<mpsc::Sender<Vec<u8>>>>,
    /// Bytes handed to the writer thread and not written yet: what a child that reads nothing
    /// leaves waiting (the server's connections stop reading their clients while it is high). Kept
    /// across relaunches: the next child's input counts in the same gauge.
    queued: Arc<AtomicUsize>,
}

fn lock(m: &Mutex<usize>) -> MutexGuard<'_, usize> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Input {
    /// The input of `fd`; bytes waiting for its writer thread are counted in `queued`.
    pub fn spawn(fd: Master, queued: Arc<AtomicUsize>) -> Input {
        Input {
            fd,
            waiting: Arc::new(Mutex::new(0)),
            writer: Arc::new(OnceLock::new()),
            queued,
        }
    }

    /// Starts the writer thread, which writes what the PTY had no room for, in order, waiting for
    /// room; it ends once every clone of this input is dropped.
    fn start_writer(&self) -> mpsc::Sender<Vec<u8>> {
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let (fd, waiting, queued) = (self.fd.clone(), self.waiting.clone(), self.queued.clone());
        thread::spawn(move || {
            let mut broken = false;
            while let Ok(bytes) = rx.recv() {
                let mut rest = &bytes[..];
                while !broken && !rest.is_empty() {
                    match write_now(&fd, rest) {
                        Ok(0) => wait(&fd, libc::POLLOUT),
                        Ok(n) => rest = &rest[n..],
                        // Nobody is left to read: what comes is dropped, and writers never block.
                        Err(_) => broken = true,
                    }
                }
                queued.fetch_sub(bytes.len(), Ordering::AcqRel);
                let mut w = lock(&waiting);
                *w = w.saturating_sub(1);
            }
        });
        tx
    }

    /// The gauge of bytes waiting for the writer thread.
    pub fn queued(&self) -> Arc<AtomicUsize> {
        self.queued.clone()
    }

    /// Writes `bytes` to the child without ever blocking: at once if nothing waits before them and
    /// the PTY has room, else after what waits.
    pub fn write(&self, bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        let mut waiting = lock(&self.waiting);
        let rest = if *waiting == 0 {
            match write_now(&self.fd, &bytes) {
                Ok(n) if n == bytes.len() => return,
                Ok(n) => bytes[n..].to_vec(),
                // The child's side is gone: nobody is left to read the bytes.
                Err(_) => return,
            }
        } else {
            bytes
        };
        *waiting += 1;
        let len = rest.len();
        self.queued.fetch_add(len, Ordering::AcqRel);
        let tx = self.writer.get_or_init(|| self.start_writer());
        if tx.send(rest).is_err() {
            *waiting -= 1;
            self.queued.fetch_sub(len, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PTY pair whose slave nobody reads: the master's room runs out.
    fn pair() -> (OwnedFd, OwnedFd) {
        let (mut m, mut s) = (0, 0);
        // SAFETY: openpty fills two descriptors, each owned once below.
        let r = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(r, 0);
        // SAFETY: fresh descriptors from openpty.
        unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) }
    }

    fn raw(slave: &OwnedFd) {
        // SAFETY: termios calls on a valid descriptor with a local struct.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            libc::tcgetattr(slave.as_raw_fd(), &mut t);
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t);
        }
    }

    fn read_all(slave: &OwnedFd, want: usize) -> Vec<u8> {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while got.len() < want {
            // SAFETY: reading into a local buffer of its length (the slave blocks).
            let n = unsafe { libc::read(slave.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            assert!(n > 0, "the slave read failed");
            got.extend_from_slice(&buf[..n as usize]);
        }
        got
    }

    #[test]
    fn a_child_that_does_not_read_never_blocks_the_writer_and_loses_nothing_nor_reorders() {
        let (m, s) = pair();
        raw(&s);
        let queued = Arc::new(AtomicUsize::new(0));
        let input = Input::spawn(master(m.as_raw_fd()).unwrap(), queued.clone());
        // Far more than a PTY holds, written before anything reads: a write that waited for room
        // would never return, and the deadline below would fail the test.
        let chunks: Vec<Vec<u8>> = (0..400u32)
            .map(|i| format!("{i:05}:").repeat(100).into_bytes())
            .collect();
        let want: Vec<u8> = chunks.concat();
        let (done_tx, done_rx) = mpsc::channel();
        thread::spawn(move || {
            for c in chunks {
                input.write(c);
            }
            let _ = done_tx.send(input);
        });
        let input = done_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("every write returned while the child read nothing");
        assert!(queued.load(Ordering::Acquire) > 0, "what waits is counted");
        let got = read_all(&s, want.len());
        assert!(got == want, "the child got the bytes in order and whole");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while queued.load(Ordering::Acquire) != 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the gauge went back to zero"
            );
            thread::yield_now();
        }
        drop(input);
    }
}
