use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::*;

/// A pseudo-terminal: its master (the terminal's side, which the test plays) and its slave's path.
pub(crate) fn pty() -> (OwnedFd, OwnedFd, String) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty fills two descriptors; null pointers leave name, termios and size alone.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty");
    // SAFETY: fresh descriptors from openpty, each owned once.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    // Raw, so that what is written arrives as written.
    // SAFETY: termios calls on a valid descriptor with a local struct.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        libc::tcgetattr(slave.as_raw_fd(), &mut t);
        libc::cfmakeraw(&mut t);
        libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t);
    }
    let path = path_of(std::os::fd::AsFd::as_fd(&slave)).expect("the slave's path");
    (master, slave, path)
}

pub(crate) fn type_in(master: &OwnedFd, bytes: &[u8]) {
    // SAFETY: writing a live slice to a valid descriptor.
    let n = unsafe { libc::write(master.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
    assert_eq!(n, bytes.len() as isize);
}

/// Whether the terminal is shown nothing within 50 ms.
pub(crate) fn quiet(master: &OwnedFd) -> bool {
    let mut fds = libc::pollfd {
        fd: master.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut fds, 1, 50) == 0 }
}

/// What the terminal shows next (waiting up to 5 s for it).
pub(crate) fn shown(master: &OwnedFd) -> Vec<u8> {
    let mut fds = libc::pollfd {
        fd: master.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; then a read into a live buffer.
    unsafe {
        if libc::poll(&mut fds, 1, 5000) != 1 {
            return Vec::new();
        }
        let mut buf = [0u8; 256];
        let n = libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len());
        buf[..n.max(0) as usize].to_vec()
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_server_reads_keys_and_writes_the_screen_of_a_terminal_it_opened() {
    let (master, _slave, path) = pty();
    let term = std::sync::Arc::new(open(&path).expect("the terminal opens"));
    let (mut keys, mut screen) = crate::ipc::halves::split(&term).expect("registered");
    assert_eq!(screen.try_write(b"frame").expect("written"), 5);
    assert_eq!(shown(&master), b"frame");
    type_in(&master, b"ab");
    let mut got = Vec::new();
    while got.len() < 2 {
        let mut buf = [0u8; 64];
        let n = tokio::time::timeout(std::time::Duration::from_secs(5), keys.read(&mut buf))
            .await
            .expect("keys within 5 s")
            .expect("read");
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, b"ab");
}

#[test]
fn only_a_terminal_under_dev_is_opened() {
    let not_dev = open("/tmp/not-a-terminal").expect_err("refused");
    assert_eq!(not_dev.kind(), std::io::ErrorKind::InvalidInput);
    let not_tty = open("/dev/null").expect_err("refused");
    assert!(not_tty.to_string().contains("not a terminal"), "{not_tty}");
    assert!(open("/dev/pts/does-not-exist").is_err());
}
