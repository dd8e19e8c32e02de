//! Where the pokeshell server listens and who may talk to it.
//!
//! One server per user, in `<private runtime dir>/server/` (0700; `$POKESHELL_SERVER_DIR` names
//! another, for a server of its own): `socket`, `token` (0600, 64 hex
//! characters, new for every server run) and `pid` (the server's pid as text). A client must run as
//! the server's uid (`SO_PEERCRED`) and open with a hello carrying the token, which only that user can
//! read. The env-based functions use the private runtime dir; the `_in` variants take the server
//! directory explicitly (tests use a temp dir).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::AsyncRead;
use tokio::net::{UnixListener, UnixStream};

use crate::pi::bridge::{auth, runtime_dir};
use pokeshell_core::wire::{self, PROTOCOL, Up};

/// How long the server waits for a new connection's hello.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

const SOCKET: &str = "socket";
const TOKEN: &str = "token";
const PID: &str = "pid";

/// sockaddr_un holds 108 bytes including the terminating NUL.
const MAX_SOCKET_PATH: usize = 107;

/// Names another server directory than the per-user one, as an absolute path: a server of its own,
/// which `pokeshell demo` starts so (docs/demo.md).
pub const SERVER_DIR_ENV: &str = "POKESHELL_SERVER_DIR";

/// Where the server's directory is: `$POKESHELL_SERVER_DIR`, else `server` in the private runtime
/// dir (created private when missing).
fn server_dir_path() -> io::Result<PathBuf> {
    match std::env::var_os(SERVER_DIR_ENV).map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => Ok(dir),
        _ => Ok(runtime_dir::private_runtime_dir()?.join("server")),
    }
}

/// The server directory, created private (0700) when missing.
pub fn server_dir() -> io::Result<PathBuf> {
    let dir = server_dir_path()?;
    runtime_dir::ensure_private_dir(&dir)?;
    Ok(dir)
}

pub fn socket_path() -> io::Result<PathBuf> {
    Ok(server_dir()?.join(SOCKET))
}

/// The running server's token, for a client's hello.
pub fn read_token() -> io::Result<String> {
    read_token_in(&server_dir()?)
}

pub fn read_token_in(dir: &Path) -> io::Result<String> {
    let path = dir.join(TOKEN);
    let token = fs::read_to_string(&path).map_err(|e| with_path(e, "cannot read", &path))?;
    let token = token.trim();
    if token.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is empty", path.display()),
        ));
    }
    Ok(token.to_owned())
}

/// The running server's pid, from its pid file.
pub fn server_pid() -> Option<i32> {
    server_pid_in(&server_dir().ok()?)
}

pub fn server_pid_in(dir: &Path) -> Option<i32> {
    fs::read_to_string(dir.join(PID)).ok()?.trim().parse().ok()
}

/// Connects to the running server (blocking). No server: `NotFound`, "no pokeshell server runs".
pub fn connect() -> io::Result<StdUnixStream> {
    connect_in(&server_dir_path()?)
}

pub fn connect_in(dir: &Path) -> io::Result<StdUnixStream> {
    match fs::symlink_metadata(dir) {
        Ok(meta) => runtime_dir::check_private_dir(dir, &meta, runtime_dir::current_uid())?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(no_server()),
        Err(e) => return Err(with_path(e, "cannot inspect", dir)),
    }
    let socket = dir.join(SOCKET);
    check_socket_path(&socket)?;
    StdUnixStream::connect(&socket).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => no_server(),
        _ => with_path(e, "cannot connect to", &socket),
    })
}

fn no_server() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no pokeshell server runs")
}

/// The server's listening socket. Dropping it removes the socket, token and pid files, unless
/// another server has taken the directory over since.
#[derive(Debug)]
pub struct Listening {
    pub listener: UnixListener,
    pub token: String,
    dir: PathBuf,
}

impl Listening {
    /// Listens in the server directory. Must be called inside a tokio runtime.
    pub fn bind() -> io::Result<Listening> {
        Listening::bind_in(&server_dir()?)
    }

    /// Listens in `dir` (created private when missing). Fails with `AddrInUse` while a server answers
    /// on the socket there; a socket nobody answers on is left from a dead server and replaced.
    pub fn bind_in(dir: &Path) -> io::Result<Listening> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(io::Error::other(
                "the pokeshell server's socket needs a tokio runtime",
            ));
        }
        runtime_dir::ensure_private_dir(dir)?;
        let socket = dir.join(SOCKET);
        check_socket_path(&socket)?;
        // Two servers starting at once would each find the old socket stale and the later would
        // remove the earlier's fresh socket: the check and the bind happen under a lock.
        let _lock = lock_dir(dir)?;
        remove_stale_socket(dir, &socket)?;
        // Token and pid are written before the socket appears, so a client that can connect finds them.
        let token = auth::new_token()?;
        write_private(dir, TOKEN, token.as_bytes())?;
        write_private(dir, PID, std::process::id().to_string().as_bytes())?;
        match UnixListener::bind(&socket) {
            Ok(listener) => Ok(Listening {
                listener,
                token,
                dir: dir.to_owned(),
            }),
            Err(e) => {
                let _ = fs::remove_file(dir.join(TOKEN));
                let _ = fs::remove_file(dir.join(PID));
                Err(with_path(e, "cannot listen on", &socket))
            }
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn socket_path(&self) -> PathBuf {
        self.dir.join(SOCKET)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _lock = lock_dir(&self.dir);
        let ours = i32::try_from(std::process::id()).ok();
        if ours.is_some() && server_pid_in(&self.dir) == ours {
            for name in [SOCKET, TOKEN, PID] {
                let _ = fs::remove_file(self.dir.join(name));
            }
        }
    }
}

/// Admits a peer only when it runs as our uid.
pub async fn admit(stream: &UnixStream) -> Result<(), String> {
    let cred = stream
        .peer_cred()
        .map_err(|e| format!("cannot read the peer's credentials: {e}"))?;
    auth::check_peer_uid(cred.uid(), runtime_dir::current_uid())
}

/// Reads the connection's first frame within `timeout` and checks that it is a hello with our
/// protocol and `token`. It reads no further than that frame. On `Err` the caller answers
/// `Down::Error` with the reason and closes.
pub async fn read_hello(
    stream: &mut (impl AsyncRead + Unpin),
    token: &str,
    timeout: Duration,
) -> Result<(), String> {
    let (kind, payload) =
        match tokio::time::timeout(timeout, crate::ipc::frame_async::read_frame_async(stream)).await {
            Err(_) => return Err(format!("no hello within {timeout:?}")),
            Ok(Err(e)) => return Err(e.to_string()),
            Ok(Ok(None)) => return Err("the client closed the connection before its hello".to_owned()),
            Ok(Ok(Some(frame))) => frame,
        };
    match wire::decode_up(kind, &payload).map_err(|e| e.to_string())? {
        Up::Hello {
            token: offered,
            protocol,
        } => {
            if !auth::token_matches(token, &offered) {
                Err("wrong token".to_owned())
            } else if protocol != PROTOCOL {
                Err(wire::protocol_mismatch(protocol, PROTOCOL, std::process::id()))
            } else {
                Ok(())
            }
        }
        _ => Err(format!(
            "the first message must be a hello, not {}",
            wire::kind::name(kind).unwrap_or("a message of an unknown kind")
        )),
    }
}

fn check_socket_path(socket: &Path) -> io::Result<()> {
    let len = socket.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "socket path too long for a Unix socket ({len} bytes): {}; set XDG_RUNTIME_DIR to a shorter directory",
                socket.display()
            ),
        ));
    }
    Ok(())
}

/// Removes a socket nobody answers on; `AddrInUse` when a server answers.
fn remove_stale_socket(dir: &Path, socket: &Path) -> io::Result<()> {
    match fs::symlink_metadata(socket) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(with_path(e, "cannot inspect", socket)),
    }
    match StdUnixStream::connect(socket) {
        Ok(_) => {
            let who = match server_pid_in(dir) {
                Some(pid) => format!("pid {pid}"),
                None => format!("its socket {} answers", socket.display()),
            };
            Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("a pokeshell server already runs ({who})"),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => match fs::remove_file(socket) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(with_path(e, "cannot remove the stale socket", socket))
            }
            _ => Ok(()),
        },
        Err(e) => Err(with_path(e, "cannot check the existing socket", socket)),
    }
}

/// Writes `dir/name` with mode 0600 in one step (a temp file renamed over it), so a reader never sees
/// half a token.
fn write_private(dir: &Path, name: &str, contents: &[u8]) -> io::Result<()> {
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let _ = fs::remove_file(&temp);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut file| file.write_all(contents))
        .and_then(|()| fs::rename(&temp, dir.join(name)));
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(with_path(e, "cannot write", &dir.join(name)));
    }
    Ok(())
}

/// An exclusive lock on the directory, released when the returned file is closed.
fn lock_dir(dir: &Path) -> io::Result<File> {
    let file = File::open(dir).map_err(|e| with_path(e, "cannot open", dir))?;
    loop {
        // SAFETY: flock on a descriptor we own; it stays open for the call.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(file);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(with_path(e, "cannot lock", dir));
        }
    }
}

fn with_path(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}
