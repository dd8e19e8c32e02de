//! Reaching the per-user server: connect, start it when none runs, and say hello.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::server::socket;
use crate::server::wire::{self, Down, Up};

/// How long a server just started gets to listen.
const START_LIMIT: Duration = Duration::from_secs(10);

/// Connects to the running server.
pub fn connect() -> Result<UnixStream, std::io::Error> {
    socket::connect()
}

/// Connects to the server, starting one first when none runs.
pub fn connect_or_start() -> Result<UnixStream, String> {
    match socket::connect() {
        Ok(s) => return Ok(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot reach the pokeshell server: {e}")),
    }
    start_server()?;
    let deadline = Instant::now() + START_LIMIT;
    loop {
        match socket::connect() {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() >= deadline => {
                return Err(format!(
                    "the pokeshell server did not start within {} s ({e}); its log: {}",
                    START_LIMIT.as_secs(),
                    log_path().map_or_else(|| "none".to_string(), |p| p.display().to_string())
                ));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Where the server writes what goes wrong.
pub fn log_path() -> Option<std::path::PathBuf> {
    socket::server_dir().ok().map(|d| d.join("log"))
}

/// Starts `pokeshell __server`, which leaves this process's family at once (see
/// [`crate::server::serve::detach_from_parent`]): closing the terminal must not reach it, and
/// nothing that ends this client's children may end it.
fn start_server() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find pokeshell's own program: {e}"))?;
    let log = log_path()
        .and_then(|p| std::fs::OpenOptions::new().create(true).append(true).open(p).ok())
        .map_or_else(Stdio::null, Stdio::from);
    let mut cmd = Command::new(exe);
    cmd.arg("__server")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .current_dir("/");
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

/// Says hello; the server answers with a welcome, or refuses.
pub fn hello(stream: &mut UnixStream) -> Result<(), String> {
    let token = socket::read_token().map_err(|e| format!("cannot read the server's token: {e}"))?;
    let frame = wire::encode_up(&Up::Hello {
        token,
        protocol: wire::PROTOCOL,
    });
    stream
        .write_all(&frame)
        .map_err(|e| format!("cannot talk to the pokeshell server: {e}"))?;
    match read_down(stream)? {
        Down::Welcome { .. } => Ok(()),
        Down::Error { message } => Err(message),
        other => Err(format!("the server answered the hello with {other:?}")),
    }
}

/// One message from the server (blocking).
pub fn read_down(stream: &mut impl Read) -> Result<Down, String> {
    match wire::read_frame(stream) {
        Ok(Some((kind, payload))) => wire::decode_down(kind, &payload).map_err(|e| e.to_string()),
        Ok(None) => Err("the pokeshell server closed the connection".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Connects (starting the server if asked) and says hello.
pub fn session(start: bool) -> Result<UnixStream, String> {
    let mut stream = if start {
        connect_or_start()?
    } else {
        connect().map_err(|e| e.to_string())?
    };
    hello(&mut stream)?;
    Ok(stream)
}
