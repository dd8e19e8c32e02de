//! Runs an outside program (`ssh`, `git`) with a deadline and a bound on what it may print, so a
//! remote that hangs or floods, or a repository that is slow, cannot hang or grow pokeshell, through
//! the one bounded runner (`bounded_run`).

use std::process::{Command, ExitStatus};
use std::time::Duration;

use crate::term::bounded_run::{self, LINGER, Limits, RunError};

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

/// Runs `cmd` (stdin closed) until it ends, `deadline` passes, or it prints more than `limit`
/// bytes (and a little stderr); in the last two cases the program and its process group are killed.
/// Err: it could not start. The work is `bounded_run`'s; this keeps the partial output and the
/// flags that `ssh` and `git` callers read.
pub fn run(mut cmd: Command, deadline: Duration, limit: usize) -> std::io::Result<Ran> {
    let limits = Limits {
        deadline,
        cap: limit + STDERR_LIMIT,
        linger: LINGER,
    };
    let killed = |stdout: Vec<u8>, timed_out: bool| Ran {
        status: None,
        stdout,
        stderr: Vec::new(),
        timed_out,
        overflowed: !timed_out,
    };
    match bounded_run::run(&mut cmd, limits) {
        Ok(out) if out.stdout.len() > limit => {
            let mut stdout = out.stdout;
            stdout.truncate(limit);
            Ok(killed(stdout, false))
        }
        Ok(out) => Ok(Ran {
            status: Some(out.status),
            stdout: out.stdout,
            stderr: out.stderr,
            timed_out: false,
            overflowed: false,
        }),
        Err(RunError::TooMuch { mut stdout, .. }) => {
            stdout.truncate(limit);
            Ok(killed(stdout, false))
        }
        Err(RunError::Deadline(_) | RunError::KeptOpen(_)) => Ok(killed(Vec::new(), true)),
        Err(RunError::Start(e) | RunError::Io(e)) => Err(e),
    }
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
