//! Every call a client makes of the server has a deadline, and when it passes the user is told what
//! state the server is in: gone, stopped (SIGSTOP, a debugger), still bringing back its saved
//! sessions, or running but not answering. The words are decided here from facts, without I/O but
//! [`ServerState::of`].

use std::time::Duration;

/// A hello is answered by the connection's own task: seconds mean the server is not running.
pub const HELLO_LIMIT: Duration = Duration::from_secs(5);
/// `ls` and `kill` are answered from the server's state at once.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(10);
/// A new session or an attach: pi's version check alone may take 10 s on a loaded machine.
pub const OPEN_LIMIT: Duration = Duration::from_secs(45);

/// What the process behind the pid file is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    /// No pid file, or no such process.
    Gone,
    /// Stopped (state T): it cannot answer until continued.
    Stopped(i32),
    /// It runs.
    Running(i32),
}

impl ServerState {
    /// Looks at the process whose pid the server's pid file holds.
    pub fn of(pid: Option<i32>) -> ServerState {
        let Some(pid) = pid else {
            return ServerState::Gone;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return ServerState::Gone;
        };
        match stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
        {
            Some("T" | "t") => ServerState::Stopped(pid),
            Some("Z" | "X") | None => ServerState::Gone,
            Some(_) => ServerState::Running(pid),
        }
    }
}

/// What to tell the user when `what` got no answer within `waited`. `restoring`: what the server's
/// welcome said, if it came.
pub fn no_answer(what: &str, waited: Duration, state: ServerState, restoring: Option<u32>) -> String {
    let secs = waited.as_secs();
    match state {
        ServerState::Gone => format!("the pokeshell server stopped running before it answered {what}"),
        ServerState::Stopped(pid) => format!(
            "the pokeshell server (pid {pid}) is stopped and cannot answer {what}; `kill -CONT {pid}` \
             lets it go on"
        ),
        ServerState::Running(pid) => match restoring {
            Some(n) if n > 0 => format!(
                "the pokeshell server (pid {pid}) is still bringing back {n} saved session(s) and did \
                 not answer {what} within {secs} s; try again in a moment"
            ),
            _ => format!("the pokeshell server (pid {pid}) runs but did not answer {what} within {secs} s"),
        },
    }
}

/// Whether an I/O error is a read or write that ran out of time.
pub fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_is_named() {
        let w = Duration::from_secs(10);
        let gone = no_answer("`ls`", w, ServerState::Gone, None);
        assert!(gone.contains("stopped running"), "{gone}");
        let stopped = no_answer("`ls`", w, ServerState::Stopped(42), Some(0));
        assert!(
            stopped.contains("pid 42) is stopped") && stopped.contains("kill -CONT 42"),
            "{stopped}"
        );
        let restoring = no_answer("`kill`", w, ServerState::Running(7), Some(200));
        assert!(
            restoring.contains("still bringing back 200 saved session"),
            "{restoring}"
        );
        let silent = no_answer("`ls`", w, ServerState::Running(7), None);
        assert!(
            silent.contains("runs but did not answer `ls` within 10 s"),
            "{silent}"
        );
    }

    #[test]
    fn the_state_of_a_process_is_read() {
        assert_eq!(ServerState::of(None), ServerState::Gone);
        let me = i32::try_from(std::process::id()).unwrap();
        assert_eq!(ServerState::of(Some(me)), ServerState::Running(me));
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        // SAFETY: signals to the child this test started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while ServerState::of(Some(pid)) != ServerState::Stopped(pid) {
            assert!(std::time::Instant::now() < deadline, "never seen stopped");
            std::thread::sleep(Duration::from_millis(10));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(ServerState::of(Some(pid)), ServerState::Gone);
    }
}
