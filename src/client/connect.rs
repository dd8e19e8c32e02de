//! Reaching the per-user server: connect, start it when none runs, and say hello.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::deadline;
use crate::ipc::socket;
use pokeshell_core::wire::{self, Down, Up};

/// How long a server just started gets to listen.
const START_LIMIT: Duration = Duration::from_secs(10);
/// How often a client looks for the server it started: it listens a few milliseconds after it was
/// started, and every start of pokeshell waits for it.
const START_POLL: Duration = Duration::from_millis(2);

/// Connects to the running server.
pub fn connect() -> Result<UnixStream, std::io::Error> {
    socket::connect()
}

/// Connects to the server, starting one first when none runs.
pub fn connect_or_start() -> Result<UnixStream, String> {
    let dir = socket::server_dir().map_err(|e| format!("cannot reach the pokeshell server: {e}"))?;
    connect_or_start_in(&dir, &[])
}

/// Connects to the server whose directory is `dir`, starting one first when none runs, with `vars`
/// set in its environment (the demo's server of its own is told where its directories are).
pub fn connect_or_start_in(dir: &Path, vars: &[(&str, &Path)]) -> Result<UnixStream, String> {
    match socket::connect_in(dir) {
        Ok(s) => return Ok(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot reach the pokeshell server: {e}")),
    }
    let log = dir.join(LOG);
    start_server(&log, vars)?;
    let deadline = Instant::now() + START_LIMIT;
    loop {
        match socket::connect_in(dir) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() >= deadline => {
                return Err(format!(
                    "the pokeshell server did not start within {} s ({e}); its log: {}",
                    START_LIMIT.as_secs(),
                    log.display()
                ));
            }
            Err(_) => std::thread::sleep(START_POLL),
        }
    }
}

/// The server's log, in its directory.
const LOG: &str = "log";

/// Where the server writes what goes wrong.
pub fn log_path() -> Option<std::path::PathBuf> {
    socket::server_dir().ok().map(|d| d.join(LOG))
}

/// Starts `pokeshell __server`, which leaves this process's family at once (see
/// [`crate::server::serve::detach_from_parent`]): closing the terminal must not reach it, and
/// nothing that ends this client's children may end it.
fn start_server(log: &Path, vars: &[(&str, &Path)]) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find pokeshell's own program: {e}"))?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_or_else(|_| Stdio::null(), Stdio::from);
    let mut cmd = Command::new(exe);
    cmd.arg("__server")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .current_dir("/");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    // Out of the terminal's process group at once: a Ctrl+\ or Ctrl+C typed while it loads must not
    // reach it.
    // SAFETY: setsid is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the pokeshell server: {e}"))?;
    // The first process only forks the server and exits.
    child
        .wait()
        .map_err(|e| format!("cannot start the pokeshell server: {e}"))?;
    Ok(())
}

/// Says hello; the server answers with a welcome (returned: how many saved sessions it is still
/// bringing back), or refuses. Within [`deadline::HELLO_LIMIT`].
pub fn hello(stream: &mut UnixStream) -> Result<u32, String> {
    let dir = socket::server_dir().map_err(|e| format!("cannot read the server's token: {e}"))?;
    hello_in(stream, &dir)
}

/// [`hello`] to the server whose directory is `dir` (a timeout names that server's state, not the
/// user's usual server's: the demo says hello to a server of its own).
pub fn hello_in(stream: &mut UnixStream, dir: &Path) -> Result<u32, String> {
    let token = socket::read_token_in(dir).map_err(|e| format!("cannot read the server's token: {e}"))?;
    let frame = wire::encode_up(&Up::Hello {
        token,
        protocol: wire::PROTOCOL,
    });
    let pid = || socket::server_pid_in(dir);
    let (what, limit) = ("the hello", deadline::HELLO_LIMIT);
    send_to(stream, &frame, what, limit, None, &pid)?;
    match read_down_from(stream, what, limit, None, &pid)? {
        Down::Welcome { restoring, .. } => Ok(restoring),
        // A server of protocol 1 or 2 says only that the versions differ: said as ours says it.
        Down::Error { message } => match wire::older_server_refusal(&message) {
            Some(theirs) => {
                let server_pid = pid().and_then(|p| u32::try_from(p).ok()).unwrap_or(0);
                Err(wire::protocol_mismatch(wire::PROTOCOL, theirs, server_pid))
            }
            None => Err(message),
        },
        other => Err(format!("the server answered the hello with {other:?}")),
    }
}

/// Writes `bytes` within `limit`; past it, says what state the server is in.
pub fn send_within(
    stream: &mut UnixStream,
    bytes: &[u8],
    what: &str,
    limit: Duration,
    restoring: Option<u32>,
) -> Result<(), String> {
    send_to(stream, bytes, what, limit, restoring, &socket::server_pid)
}

/// One message from the server within `limit`; past it, says what state the server is in.
pub fn read_down_within(
    stream: &mut UnixStream,
    what: &str,
    limit: Duration,
    restoring: Option<u32>,
) -> Result<Down, String> {
    read_down_from(stream, what, limit, restoring, &socket::server_pid)
}

/// [`send_within`] to the server whose pid `pid` reads.
fn send_to(
    stream: &mut UnixStream,
    bytes: &[u8],
    what: &str,
    limit: Duration,
    restoring: Option<u32>,
    pid: &dyn Fn() -> Option<i32>,
) -> Result<(), String> {
    let _ = stream.set_write_timeout(Some(limit));
    stream.write_all(bytes).map_err(|e| {
        if deadline::timed_out(&e) {
            deadline::no_answer(what, limit, deadline::ServerState::of(pid()), restoring)
        } else {
            format!("cannot talk to the pokeshell server: {e}")
        }
    })
}

/// [`read_down_within`] from the server whose pid `pid` reads.
fn read_down_from(
    stream: &mut UnixStream,
    what: &str,
    limit: Duration,
    restoring: Option<u32>,
    pid: &dyn Fn() -> Option<i32>,
) -> Result<Down, String> {
    let _ = stream.set_read_timeout(Some(limit.max(Duration::from_millis(1))));
    match wire::read_frame(stream) {
        Ok(Some((kind, payload))) => wire::decode_down(kind, &payload).map_err(|e| e.to_string()),
        Ok(None) => Err(CLOSED.to_string()),
        Err(e) => {
            let e = std::io::Error::from(e);
            if deadline::timed_out(&e) {
                Err(deadline::no_answer(
                    what,
                    limit,
                    deadline::ServerState::of(pid()),
                    restoring,
                ))
            } else {
                Err(e.to_string())
            }
        }
    }
}

/// What to say when `what` got no answer within `limit`, from the server's state now.
pub fn no_answer_in(what: &str, limit: Duration, restoring: Option<u32>) -> String {
    deadline::no_answer(
        what,
        limit,
        deadline::ServerState::of(socket::server_pid()),
        restoring,
    )
}

/// The server ended the connection before it answered.
pub const CLOSED: &str = "the pokeshell server closed the connection";

/// One message from the server (blocking).
pub fn read_down(stream: &mut impl Read) -> Result<Down, String> {
    match wire::read_frame(stream) {
        Ok(Some((kind, payload))) => wire::decode_down(kind, &payload).map_err(|e| e.to_string()),
        Ok(None) => Err(CLOSED.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Connects (starting the server if asked) and says hello.
pub fn session(start: bool) -> Result<UnixStream, String> {
    session_with(start).map(|(stream, _)| stream)
}

/// [`session`], and how many saved sessions the server is still bringing back.
pub fn session_with(start: bool) -> Result<(UnixStream, u32), String> {
    let mut stream = if start {
        connect_or_start()?
    } else {
        connect().map_err(|e| e.to_string())?
    };
    match hello(&mut stream) {
        Ok(restoring) => Ok((stream, restoring)),
        // A server ending with its last session may still take a connection it no longer serves:
        // once it is gone, a new one is started.
        Err(e) if start && e == CLOSED && wait_gone(socket::server_pid()) => {
            let mut stream = connect_or_start()?;
            let restoring = hello(&mut stream)?;
            Ok((stream, restoring))
        }
        Err(e) => Err(e),
    }
}

/// Waits (a few seconds at most) until the server `pid` is gone; true when it is.
pub fn wait_gone(pid: Option<i32>) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    loop {
        if deadline::ServerState::of(pid) == deadline::ServerState::Gone {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that takes the hello and never answers: the timeout names the state of that server
    /// (here a process that runs, this test's own), not the user's usual server's.
    #[test]
    fn a_hello_without_an_answer_names_the_server_it_went_to() {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::write(dir.path().join("token"), "t").expect("a token");
        std::fs::write(dir.path().join("pid"), std::process::id().to_string()).expect("a pid file");
        let (mut ours, _silent) = UnixStream::pair().expect("a socket pair");
        let err = hello_in(&mut ours, dir.path()).expect_err("no answer");
        let running = format!("(pid {}) runs but did not answer the hello", std::process::id());
        assert!(err.contains(&running), "{err}");
    }

    /// A server of protocol 2 (still running after pokeshell was updated) refuses our hello in its
    /// own words: the client says which side is older and how to end that server.
    #[test]
    fn an_older_server_s_refusal_says_how_to_end_it() {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::write(dir.path().join("token"), "t").expect("a token");
        std::fs::write(dir.path().join("pid"), "4242").expect("a pid file");
        let (mut ours, mut server) = UnixStream::pair().expect("a socket pair");
        let old = std::thread::spawn(move || {
            let (kind, payload) = wire::read_frame(&mut server)
                .expect("a frame")
                .expect("the hello");
            let Ok(Up::Hello { protocol, .. }) = wire::decode_up(kind, &payload) else {
                panic!("not a hello");
            };
            // Word for word what a server of protocol 2 answers.
            let message = format!(
                "the client speaks protocol {protocol}, this server 2: the client and the server \
                 are different pokeshell versions"
            );
            server
                .write_all(&wire::encode_down(&Down::Error { message }))
                .expect("the refusal");
            protocol
        });
        let err = hello_in(&mut ours, dir.path()).expect_err("refused");
        assert_eq!(old.join().expect("the old server"), 3, "our hello speaks 3");
        assert!(
            err.contains("(pid 4242) is older than this pokeshell") && err.contains("`kill 4242`"),
            "{err}"
        );
    }
}
