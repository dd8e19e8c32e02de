//! A peer of another uid for the sockets' admission tests. SO_PEERCRED reports the effective uid at
//! connect time: as root, a forked child switches its effective uid to nobody while keeping
//! filesystem uid 0 (setfsuid), so it still reaches the 0700 socket directory and the server sees a
//! foreign peer. Not root: the tests say so and skip (the uid check itself is unit-tested).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Whether this process can play a foreign peer.
pub fn can_pose() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A forked child, running as nobody, connected to a socket.
pub struct ForeignPeer {
    pid: i32,
}

impl ForeignPeer {
    /// Forks a child that connects to the socket at `path` as nobody, writes `hello` and reads until
    /// the server closes the connection.
    pub fn connect(path: &OsStr, hello: &[u8]) -> ForeignPeer {
        // Everything the child needs is prepared before fork: after it, only raw syscalls.
        // SAFETY: sockaddr_un is plain data; all zeros is a valid value.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, src) in addr.sun_path.iter_mut().zip(path.as_bytes()) {
            *dst = *src as libc::c_char;
        }
        let nobody: libc::uid_t = 65534;
        // SAFETY: the child calls only async-signal-safe functions and leaves with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: raw syscalls on local data, then _exit.
            unsafe {
                if libc::setresuid(nobody, nobody, 0) != 0 {
                    libc::_exit(10);
                }
                libc::setfsuid(0);
                let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                if fd < 0 {
                    libc::_exit(11);
                }
                let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
                if libc::connect(fd, &addr as *const _ as *const libc::sockaddr, len) != 0 {
                    libc::_exit(12);
                }
                libc::write(fd, hello.as_ptr() as *const libc::c_void, hello.len());
                let mut buf = [0u8; 256];
                while libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) > 0 {}
                libc::_exit(0);
            }
        }
        ForeignPeer { pid }
    }

    /// Reaps the child, killing it first if the server kept it connected; its exit code.
    pub fn reap(self) -> i32 {
        let mut status = 0;
        // SAFETY: reaping our own child.
        unsafe {
            if libc::waitpid(self.pid, &mut status, libc::WNOHANG) == 0 {
                libc::kill(self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, &mut status, 0);
            }
        }
        libc::WEXITSTATUS(status)
    }
}
