//! Runs an outside program (`ssh`, `git`) with a deadline and a bound on what it may print, so a
//! remote that hangs or floods, or a repository that is slow, cannot hang or grow pokeshell.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// What a bounded run gave.
#[derive(Debug)]
pub struct Ran {
    /// None when the program was killed because it ran past its deadline or printed too much.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub timed_out: bool,
    /// stdout passed the limit: the program was killed and `stdout` holds the first `limit` bytes.
    pub overflowed: bool,
}

impl Ran {
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success()) && !self.timed_out && !self.overflowed
    }

    /// The last non-empty line of stderr, for an error message (cut to 300 characters).
    pub fn stderr_line(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        let line = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        line.chars().take(300).collect()
    }
}

/// stderr is kept to this much: it only feeds error messages.
const STDERR_LIMIT: usize = 16 * 1024;

/// Runs `cmd` (stdin closed) until it ends, `deadline` passes, or its stdout passes `limit` bytes;
/// in the last two cases the program and its process group are killed. Err: it could not start.
pub fn run(mut cmd: Command, deadline: Duration, limit: usize) -> std::io::Result<Ran> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(std::io::Error::other(
            "the program's output could not be captured",
        ));
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let errs = std::thread::spawn(move || read_bounded(&mut err, STDERR_LIMIT).0);
        let (stdout, overflowed) = read_bounded(&mut out, limit);
        if overflowed {
            kill_group(pid);
        }
        drop(out);
        let status = child.wait().ok();
        let stderr = errs.join().unwrap_or_default();
        let _ = tx.send((status, stdout, stderr, overflowed));
    });
    let (timed_out, got) = match rx.recv_timeout(deadline) {
        Ok(got) => (false, Some(got)),
        Err(_) => {
            kill_group(pid);
            // Killed: its pipes close at once unless something outside its group holds them.
            (true, rx.recv_timeout(Duration::from_secs(2)).ok())
        }
    };
    let (status, stdout, stderr, overflowed) = got.unwrap_or((None, Vec::new(), Vec::new(), false));
    Ok(Ran {
        status: if timed_out || overflowed { None } else { status },
        stdout,
        stderr,
        timed_out,
        overflowed,
    })
}

fn kill_group(pid: libc::pid_t) {
    // SAFETY: kill(2) with a negative pid signals the process group the child leads.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// Reads up to `limit` bytes; true when more were there (the rest is left unread).
fn read_bounded(r: &mut impl Read, limit: usize) -> (Vec<u8>, bool) {
    let mut buf = Vec::new();
    let got = r.take(limit as u64 + 1).read_to_end(&mut buf);
    if got.is_err() {
        return (buf, false);
    }
    let over = buf.len() > limit;
    buf.truncate(limit);
    (buf, over)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn a_quick_program_gives_its_output_and_status() {
        let ran = run(sh("echo out; echo err >&2; exit 3"), Duration::from_secs(10), 100).unwrap();
        assert_eq!(ran.stdout, b"out\n");
        assert_eq!(ran.stderr_line(), "err");
        assert_eq!(ran.status.and_then(|s| s.code()), Some(3));
        assert!(!ran.success() && !ran.timed_out && !ran.overflowed);
    }

    #[test]
    fn a_program_past_its_deadline_is_killed() {
        let started = Instant::now();
        let ran = run(
            sh("echo first; sleep 30; echo never"),
            Duration::from_millis(300),
            100,
        )
        .unwrap();
        assert!(ran.timed_out && ran.status.is_none());
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_flood_is_cut_at_the_limit_and_the_program_killed() {
        let ran = run(sh("yes flood"), Duration::from_secs(20), 1000).unwrap();
        assert!(ran.overflowed && !ran.timed_out);
        assert_eq!(ran.stdout.len(), 1000);
        assert!(!ran.success());
    }

    #[test]
    fn a_missing_program_is_an_error() {
        assert!(run(Command::new("/nonexistent/prog"), Duration::from_secs(1), 10).is_err());
    }
}
