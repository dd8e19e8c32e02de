//! The Unix socket server the bridge extension connects to, and the API the app uses.
//!
//! One socket per pokeshell run, in a fresh 0700 directory under the private runtime dir; a random
//! token per run. pi replaces its extension runtime on /new, /resume, /fork and /reload, so several
//! connections over time are normal: a newly authenticated connection replaces the live one when it
//! comes from the same process, and is refused while another process holds a live one. Nothing a peer sends can crash the server: bad lines are skipped with a
//! [`BridgeEvent::Warning`], bad peers are refused with a [`BridgeEvent::Rejected`].

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::net::UnixListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::auth;
use super::connection::{self, ConnConfig};
use super::hub::{self, HubMsg};
use super::runtime_dir;
use pokeshell_core::bridge::{Command, ENV_SOCKET, ENV_TOKEN, MAX_LINE_BYTES, ToBridge, encode_to_bridge};

pub use pokeshell_core::bridge::BridgeEvent;

/// Why [`BridgeHandle::send`] did not send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// No bridge is connected.
    NotConnected,
    /// The command could not be encoded or would exceed the line bound.
    Encode(String),
    /// The server has stopped.
    Stopped,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::NotConnected => write!(f, "the bridge is not connected"),
            SendError::Encode(e) => write!(f, "cannot encode the command: {e}"),
            SendError::Stopped => write!(f, "the bridge server has stopped"),
        }
    }
}

impl std::error::Error for SendError {}

/// Settings of a server; the defaults are what the app wants.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Where the per-run socket directory is created; `None` = the private runtime dir.
    pub parent_dir: Option<PathBuf>,
    /// How long a new connection may take to send its hello.
    pub hello_timeout: Duration,
    /// Capacity of the event channel handed to the app.
    pub event_capacity: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            parent_dir: None,
            hello_timeout: Duration::from_secs(10),
            event_capacity: 4096,
        }
    }
}

/// Starts the bridge server.
pub struct BridgeServer;

impl BridgeServer {
    /// Listens on a fresh socket in the private runtime dir. Must be called inside a tokio runtime.
    pub fn start() -> io::Result<(BridgeHandle, mpsc::Receiver<BridgeEvent>)> {
        Self::start_with(ServerOptions::default())
    }

    /// Like [`BridgeServer::start`], with options (tests use another parent dir and a short hello timeout).
    pub fn start_with(options: ServerOptions) -> io::Result<(BridgeHandle, mpsc::Receiver<BridgeEvent>)> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| io::Error::other("the bridge server needs a tokio runtime"))?;
        let parent = match &options.parent_dir {
            Some(dir) => {
                runtime_dir::ensure_private_dir(dir)?;
                dir.clone()
            }
            None => runtime_dir::private_runtime_dir()?,
        };
        let dir = runtime_dir::RunDir::create(&parent)?;
        let socket_path = dir.path().join("bridge.sock");
        // sockaddr_un holds 108 bytes including the terminating NUL.
        if socket_path.as_os_str().len() > 107 {
            return Err(io::Error::other(format!(
                "socket path too long for a Unix socket ({} bytes): {}; set XDG_RUNTIME_DIR or TMPDIR to a shorter directory",
                socket_path.as_os_str().len(),
                socket_path.display()
            )));
        }
        let token = auth::new_token()?;
        let listener = {
            let _guard = runtime.enter();
            UnixListener::bind(&socket_path)
        };
        let listener = match listener {
            Ok(l) => l,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot listen on {}: {e}", socket_path.display()),
                ));
            }
        };

        let (events_tx, events_rx) = mpsc::channel(options.event_capacity.max(1));
        let (hub_tx, hub_rx) = mpsc::channel(1024);
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let connected = Arc::new(AtomicBool::new(false));
        let config = Arc::new(ConnConfig {
            token: token.clone(),
            our_uid: runtime_dir::current_uid(),
            hello_timeout: options.hello_timeout,
        });
        let hub_task = runtime.spawn(hub::run(hub_rx, cmd_rx, events_tx, connected.clone()));
        let accept_task = runtime.spawn(accept_loop(listener, config, hub_tx));
        let inner = Inner {
            commands: cmd_tx,
            next_id: AtomicU64::new(1),
            connected,
            socket_path,
            _dir: dir,
            token,
            tasks: vec![accept_task, hub_task],
        };
        Ok((
            BridgeHandle {
                inner: Arc::new(inner),
            },
            events_rx,
        ))
    }
}

async fn accept_loop(listener: UnixListener, config: Arc<ConnConfig>, hub: mpsc::Sender<HubMsg>) {
    let mut next_conn = 1u64;
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let conn = next_conn;
                next_conn += 1;
                tokio::spawn(connection::serve(conn, stream, config.clone(), hub.clone()));
            }
            Err(e) => {
                let reason = format!("accepting a bridge connection failed: {e}");
                if hub.send(HubMsg::Warning { conn: 0, reason }).await.is_err() {
                    return;
                }
                // Out of file descriptors and the like: do not spin.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The app's side of the server. Cheap to clone; when the last clone is dropped the server stops and
/// its socket directory is removed.
#[derive(Clone)]
pub struct BridgeHandle {
    inner: Arc<Inner>,
}

struct Inner {
    commands: mpsc::UnboundedSender<HubMsg>,
    next_id: AtomicU64,
    connected: Arc<AtomicBool>,
    socket_path: PathBuf,
    /// Removes the socket's directory when the last handle goes.
    _dir: runtime_dir::RunDir,
    token: String,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        let _ = std::fs::remove_file(&self.socket_path);
    }
}

impl BridgeHandle {
    /// Sends a command to the live bridge and returns its id; the answer arrives as
    /// [`BridgeEvent::Reply`] with that id (exactly once for every `Ok`).
    pub fn send(&self, command: Command) -> Result<u64, SendError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        self.send_as(id, command).map(|()| id)
    }

    /// Sends a command under an id the caller chose (a session numbers its own commands); the
    /// answer arrives as [`BridgeEvent::Reply`] with that id (exactly once for every `Ok`). Ids must
    /// not repeat while a reply is outstanding; don't mix with [`BridgeHandle::send`] on one handle.
    pub fn send_as(&self, id: u64, command: Command) -> Result<(), SendError> {
        if !self.is_connected() {
            return Err(SendError::NotConnected);
        }
        let name = command.name();
        let line = encode_to_bridge(&ToBridge::Command { id, command })
            .map_err(|e| SendError::Encode(e.to_string()))?;
        if line.len() > MAX_LINE_BYTES {
            return Err(SendError::Encode(format!(
                "{name} would be {} bytes, over the {MAX_LINE_BYTES}-byte line limit",
                line.len()
            )));
        }
        self.inner
            .commands
            .send(HubMsg::Send { id, name, line })
            .map_err(|_| SendError::Stopped)
    }

    /// Closes the live connection, as if it had broken. The bridge inside pi connects again on its
    /// own; commands waiting for a reply get an error reply. A debugging aid (SIGUSR1 to pokeshell).
    pub fn disconnect(&self, reason: &str) -> Result<(), SendError> {
        self.inner
            .commands
            .send(HubMsg::Disconnect {
                reason: reason.to_owned(),
            })
            .map_err(|_| SendError::Stopped)
    }

    /// Whether a bridge is connected right now.
    pub fn is_connected(&self) -> bool {
        self.inner.connected.load(Ordering::Relaxed)
    }

    /// The environment pi needs to find and authenticate to this server.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        vec![
            (ENV_SOCKET, self.inner.socket_path.clone().into_os_string()),
            (ENV_TOKEN, OsString::from(&self.inner.token)),
        ]
    }

    pub fn socket_path(&self) -> &Path {
        &self.inner.socket_path
    }
}

impl std::fmt::Debug for BridgeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeHandle")
            .field("socket_path", &self.inner.socket_path)
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}
