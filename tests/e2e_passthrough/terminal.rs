//! Running a command as a shell in a terminal would: in a session of its own whose controlling
//! terminal is a fresh PTY, stdin and stdout on that PTY or redirected, stderr a pipe of its own;
//! every wait bounded.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::support::WAIT;

/// Where the child's stdin comes from.
#[derive(Clone, Copy)]
pub enum Input {
    Terminal,
    /// A pipe holding this text, then closed.
    Piped(&'static str),
}

/// Where the child's stdout goes.
#[derive(Clone, Copy)]
pub enum Output {
    Terminal,
    Pipe,
}

/// What one run left: its status and everything it wrote (stdout as the terminal received it).
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// A new PTY (master, slave), 40×120, neither inherited by the child beyond its stdio.
fn open_pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 40,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors into the locals; name and termios may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    for fd in [master, slave] {
        // SAFETY: fcntl on a descriptor this process owns.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors were just opened and belong to nobody else.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

fn read_all(mut from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        // A PTY master ends with EIO once the last slave is closed: what was read still counts.
        let mut buf = [0u8; 8192];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
        }
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

/// `cmd` in a session of its own whose controlling terminal is the PTY, as a shell would start it;
/// stdin and stdout on the PTY or redirected; stderr a pipe.
pub fn start(mut cmd: Command, input: Input, output: Output) -> (Child, Option<OwnedFd>) {
    let (master, slave) = open_pty();
    let slave_fd = slave.as_raw_fd();
    let on_pty = || Stdio::from(slave.try_clone().expect("dup the pty slave"));
    cmd.stdin(match input {
        Input::Terminal => on_pty(),
        Input::Piped(_) => Stdio::piped(),
    });
    cmd.stdout(match output {
        Output::Terminal => on_pty(),
        Output::Pipe => Stdio::piped(),
    });
    cmd.stderr(Stdio::piped());
    // SAFETY: setsid and ioctl are async-signal-safe; the slave is still open until the exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 || libc::ioctl(slave_fd, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn the command");
    drop(cmd);
    drop(slave);
    if let (Input::Piped(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes()).expect("write the child's stdin");
    }
    (child, Some(master))
}

/// Waits for the child (at most `timeout`, else it is killed and the test fails) and collects what
/// it wrote.
#[track_caller]
pub fn finish(mut child: Child, master: Option<OwnedFd>, timeout: Duration) -> Outcome {
    let terminal = master.map(|fd| read_all(File::from(fd)));
    let stdout = child.stdout.take().map(read_all);
    let stderr = read_all(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            break child.wait().ok().filter(|_| false);
        }
        thread::sleep(Duration::from_millis(10));
    };
    let collect = |rx: mpsc::Receiver<String>| {
        rx.recv_timeout(WAIT)
            .expect("the output ends once the command has exited")
    };
    let on_terminal = terminal.map(collect).unwrap_or_default();
    let stdout = stdout.map(collect).unwrap_or_default();
    let stderr = collect(stderr);
    let Some(status) = status else {
        panic!(
            "the command ran longer than {timeout:?}\n--- terminal ---\n{on_terminal}\n\
             --- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
        );
    };
    Outcome {
        status,
        // With stdout redirected, nothing should reach the terminal at all, which the comparison
        // checks too.
        stdout: format!("{stdout}{on_terminal}"),
        stderr,
    }
}
