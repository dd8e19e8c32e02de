//! One client's connection to the server: who it is (same uid, the token), then frames both ways.
//! What the client sends goes to the server's state as [`ServerMsg::Up`] (its writer is handed over
//! first, as [`Handle::Conn`]); what goes back is the
//! server's own messages and the frames of the session the client follows. A client follows one
//! session at a time: switching hands the writer a new channel, so nothing of the old session can
//! arrive after the new one's first frame.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::perform::Handle;
use super::serve::ServerMsg;
use super::socket;
use super::wire::{self, Down, Up};
use crate::event_loop::{ClientEvent, ClientOut, WorldEvent};

/// How often a client typing the short way tells the core, which keeps the session used last.
const TYPED_EVERY: Duration = Duration::from_secs(1);

/// Where a client's keys go the short way, straight from its connection to the session's loop: the
/// session the core made it follow ([`super::state::ServerEffect::Follow`]), set and cleared by the
/// performer as the core decides. Everything else the client sends goes through the core.
#[derive(Default)]
pub struct Route {
    session: Mutex<Option<UnboundedSender<WorldEvent>>>,
    /// What the client sent the long way and the core has not had yet. A key goes the short way
    /// only when this is zero, so it never overtakes a resize, the terminal's answers or a key the
    /// client sent before it.
    long_way: AtomicUsize,
}

impl Route {
    /// From now on keys go to `session` (`None`: through the core).
    pub fn set(&self, session: Option<UnboundedSender<WorldEvent>>) {
        *self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = session;
    }

    /// The core has had one more of what was sent the long way.
    pub fn arrived(&self) {
        let _ = self
            .long_way
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// Hands the session client `id`'s key; gives it back when the key must go through the core.
    fn key(&self, id: u64, bytes: Vec<u8>) -> Result<(), Vec<u8>> {
        if self.long_way.load(Ordering::Acquire) != 0 {
            return Err(bytes);
        }
        let session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(tx) = session.as_ref() else {
            return Err(bytes);
        };
        let ev = WorldEvent::Client(ClientEvent::Input { id, bytes });
        tx.send(ev).map_err(|e| match e.0 {
            WorldEvent::Client(ClientEvent::Input { bytes, .. }) => bytes,
            _ => Vec::new(),
        })
    }
}

/// What the server's state tells a connection's writer.
#[derive(Debug)]
pub enum ConnCmd {
    Down(Down),
    /// Follow this session's frames from now on (and no other's).
    Follow {
        out: UnboundedReceiver<ClientOut>,
        queued: Arc<AtomicUsize>,
    },
    /// Stop following any session.
    Unfollow,
}

async fn refuse(stream: &mut (impl AsyncWriteExt + Unpin), reason: &str) {
    let frame = wire::encode_down(&Down::Error {
        message: format!("refused: {reason}"),
    });
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), stream.write_all(&frame)).await;
}

/// Serves one accepted connection until either side ends it.
pub async fn serve(
    id: u64,
    mut stream: UnixStream,
    token: Arc<str>,
    server: UnboundedSender<ServerMsg>,
    handles: UnboundedSender<Handle>,
) {
    if let Err(reason) = socket::admit(&stream).await {
        refuse(&mut stream, &reason).await;
        return;
    }
    let (mut rd, mut wr) = stream.into_split();
    if let Err(reason) = socket::read_hello(&mut rd, &token, socket::HELLO_TIMEOUT).await {
        refuse(&mut wr, &reason).await;
        return;
    }
    let (ctl_tx, ctl_rx) = unbounded_channel::<ConnCmd>();
    let _ = ctl_tx.send(ConnCmd::Down(Down::Welcome {
        server_pid: std::process::id(),
        restoring: super::restoring::pending(),
    }));
    let route = Arc::new(Route::default());
    let handle = Handle::Conn {
        id,
        ctl: ctl_tx,
        route: route.clone(),
    };
    if handles.send(handle).is_err() {
        return;
    }
    let writer = tokio::spawn(write_loop(wr, ctl_rx));
    let mut told_typed: Option<Instant> = None;
    loop {
        match wire::read_frame_async(&mut rd).await {
            Ok(Some((kind, payload))) => match wire::decode_up(kind, &payload) {
                Ok(up) => {
                    let up = match up {
                        Up::Input(bytes) => match route.key(id, bytes) {
                            Ok(()) => {
                                // Off the key's path: the key is with the session already.
                                if told_typed.is_none_or(|t| t.elapsed() >= TYPED_EVERY) {
                                    told_typed = Some(Instant::now());
                                    let _ = server.send(ServerMsg::Typed { id });
                                }
                                continue;
                            }
                            Err(bytes) => Up::Input(bytes),
                        },
                        up => up,
                    };
                    route.long_way.fetch_add(1, Ordering::AcqRel);
                    if server.send(ServerMsg::Up { id, up }).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = server.send(ServerMsg::Garbage {
                        id,
                        reason: e.to_string(),
                    });
                    break;
                }
            },
            Ok(None) => break,
            Err(e) => {
                let _ = server.send(ServerMsg::Garbage {
                    id,
                    reason: e.to_string(),
                });
                break;
            }
        }
    }
    let _ = server.send(ServerMsg::Gone { id });
    // The writer ends once the server's state has dropped this client's channel.
    let _ = writer.await;
}

async fn write_loop(mut wr: OwnedWriteHalf, mut ctl: UnboundedReceiver<ConnCmd>) {
    let mut follow: Option<(UnboundedReceiver<ClientOut>, Arc<AtomicUsize>)> = None;
    loop {
        let out = async {
            match &mut follow {
                Some((rx, _)) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        let frame = tokio::select! {
            biased;
            cmd = ctl.recv() => match cmd {
                None => break,
                Some(ConnCmd::Down(down)) => {
                    let last = matches!(down, Down::Detached { .. } | Down::Exited { .. } | Down::Error { .. });
                    if last && let Some((rx, queued)) = &mut follow {
                        // What the session drew before it ended comes first.
                        while let Ok(out) = rx.try_recv() {
                            if let Some(bytes) = encode_out(out, queued)
                                && wr.write_all(&bytes).await.is_err()
                            {
                                break;
                            }
                        }
                    }
                    let frame = wire::encode_down(&down);
                    if wr.write_all(&frame).await.is_err() || last {
                        break;
                    }
                    continue;
                }
                Some(ConnCmd::Follow { out, queued }) => {
                    follow = Some((out, queued));
                    continue;
                }
                Some(ConnCmd::Unfollow) => {
                    follow = None;
                    continue;
                }
            },
            out = out => out,
        };
        let Some(out) = frame else {
            // The session's loop let go of this client.
            follow = None;
            continue;
        };
        let Some((_, queued)) = &follow else {
            continue;
        };
        if let Some(bytes) = encode_out(out, queued)
            && wr.write_all(&bytes).await.is_err()
        {
            break;
        }
    }
    let _ = wr.shutdown().await;
}

/// One thing a session sent this client, as a frame.
fn encode_out(out: ClientOut, queued: &AtomicUsize) -> Option<Vec<u8>> {
    match out {
        ClientOut::Bytes(b) => {
            queued.fetch_sub(b.len(), Ordering::AcqRel);
            Some(wire::encode_output(&b))
        }
        ClientOut::Suspend => Some(wire::encode_down(&Down::Suspend)),
        ClientOut::Size { cols, rows } => Some(wire::encode_down(&Down::Size { cols, rows })),
    }
}
