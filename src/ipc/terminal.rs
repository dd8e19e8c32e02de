//! A client's terminal, opened by the server itself. A key typed in an attached terminal used to wake
//! the client, which read it and wrote it to the server's socket, and every frame woke the client
//! again to copy it from the socket to the terminal: two of the ten thread wakes between a key and
//! its echo. tmux's server reads and writes its clients' terminals itself; so does pokeshell's when
//! the client names its terminal in `Up::Open` and the server can open it. The client then only
//! keeps the terminal's modes, its size and its signals; the socket carries everything but keys and
//! screen bytes.
//!
//! The server opens the terminal by its path, so that its own open file (non-blocking) leaves the
//! client's as it was. The connection that holds it (`crate::server::conn`) is its only reader and
//! writer; it stops using it while the client is stopped with pi and closes it before it tells the
//! client it leaves.

use std::fs::File;
use std::io::{self, IsTerminal};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;

/// The path of the terminal open on `fd`, if it is one.
pub fn path_of(fd: BorrowedFd<'_>) -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: ttyname_r writes at most the buffer's length, NUL included, into a live buffer.
    let r = unsafe { libc::ttyname_r(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return None;
    }
    let end = buf.iter().position(|b| *b == 0)?;
    String::from_utf8(buf[..end].to_vec()).ok()
}

/// Opens the terminal at `path` (a device under /dev that is a terminal): non-blocking, and never
/// as the server's controlling terminal.
pub fn open(path: &str) -> io::Result<File> {
    if !path.starts_with("/dev/") {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a device path"));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)?;
    if !file.is_terminal() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a terminal"));
    }
    Ok(file)
}

#[cfg(test)]
pub(crate) mod tests;
