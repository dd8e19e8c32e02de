//! `pokeshell.notifyCommand`: a command of the user's run when pokeshell wants their attention (the
//! moments it rings the bell or sends a desktop notification) while no terminal is attached.
//!
//! The message travels as the command's last argument and in `$POKESHELL_MESSAGE`, never inside the
//! shell text, so nothing the model or a tool wrote into it can run. The caller never waits: the
//! command is started and a thread of its own waits for it, ending it (with everything it started)
//! once it has run for too long.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a notify command may run before it is killed.
pub const TIME_LIMIT: Duration = Duration::from_secs(30);
const SHELL: &str = "/bin/sh";
/// How often the waiting thread looks at the command; it only decides when a kill is due.
const POLL: Duration = Duration::from_millis(100);

/// How a started command ended.
#[derive(Debug)]
pub enum Ended {
    Exited(ExitStatus),
    /// Still running at the time limit: it and its process group were killed.
    Killed,
    /// Waiting for it failed; it may still run.
    Lost(String),
}

/// Starts `command` with `message` as its last argument; see the module's comment. An empty command
/// does nothing. Err: the command could not be started (the text says why).
pub fn run(command: &str, message: &str, session: &str) -> Result<(), String> {
    run_then(command, message, session, |_| {})
}

/// [`run`], and `on_end` is called on the waiting thread with how the command ended (e.g. to tell the
/// user that their command failed).
pub fn run_then(
    command: &str,
    message: &str,
    session: &str,
    on_end: impl FnOnce(Ended) + Send + 'static,
) -> Result<(), String> {
    start(SHELL, TIME_LIMIT, command, message, session, on_end)
}

fn start(
    shell: &str,
    limit: Duration,
    command: &str,
    message: &str,
    session: &str,
    on_end: impl FnOnce(Ended) + Send + 'static,
) -> Result<(), String> {
    let command = command.trim();
    if command.is_empty() {
        return Ok(());
    }
    let child = Command::new(shell)
        .arg("-c")
        .arg(format!("{command} \"$1\""))
        .arg("sh")
        .arg(message)
        .env("POKESHELL_MESSAGE", message)
        .env("POKESHELL_SESSION", session)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group: the kill at the limit reaches what it started, and the terminal's Ctrl+C
        // does not reach it. Not its own session: the reaper leaves zombies of pokeshell's session
        // to whoever waits for them, here the thread below.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("pokeshell.notifyCommand could not be started with {shell}: {e}"))?;
    std::thread::Builder::new()
        .name("notify-command".into())
        .spawn(move || on_end(wait_or_kill(child, limit)))
        .map(|_| ())
        .map_err(|e| {
            format!("pokeshell.notifyCommand was started but cannot be watched ({e}); it may keep running")
        })
}

fn wait_or_kill(mut child: Child, limit: Duration) -> Ended {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ended::Exited(status),
            Ok(None) => {}
            Err(e) => return Ended::Lost(e.to_string()),
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        std::thread::sleep(POLL.min(deadline - now));
    }
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads; the child
        // is not reaped yet, so the group id cannot have been reused.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    match child.wait() {
        Ok(_) => Ended::Killed,
        Err(e) => Ended::Lost(e.to_string()),
    }
}

#[cfg(test)]
mod tests;
