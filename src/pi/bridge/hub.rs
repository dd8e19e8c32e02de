//! The one task that owns the server's state: which connection is live, which commands wait for a
//! reply. Connections and the app talk to it through channels, so events leave in one order and a
//! replaced connection can never slip an event in after its `Disconnected`.
//!
//! Admission: an authenticated connection becomes live when none is, or when it comes from the very
//! process that holds the live one (pi replacing its extension runtime). Any other process is refused
//! while a live connection exists, so a leaked token cannot take the bridge over.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::server::BridgeEvent;
use pokeshell_core::bridge::{FromBridge, Hello, PROTOCOL_VERSION, SeqGaps, ToBridge, encode_to_bridge};

pub enum HubMsg {
    /// A connection passed the handshake; the hub queues the welcome or the refusal on `writer`.
    Authenticated {
        conn: u64,
        /// The peer's process as the kernel reports it (`SO_PEERCRED`), not as the hello claims.
        peer_pid: Option<i32>,
        hello: Box<Hello>,
        writer: mpsc::Sender<String>,
        close: oneshot::Sender<()>,
    },
    Line {
        conn: u64,
        /// Boxed: an event (a message's text) is far bigger than the hub's other messages.
        msg: Box<FromBridge>,
    },
    Warning {
        conn: u64,
        reason: String,
    },
    Closed {
        conn: u64,
        reason: String,
    },
    Rejected {
        reason: String,
    },
    /// From the app: close the live connection (the bridge connects again by itself).
    Disconnect {
        reason: String,
    },
    /// From the app: an encoded command line.
    Send {
        id: u64,
        name: &'static str,
        line: String,
    },
}

struct Live {
    conn: u64,
    peer_pid: Option<i32>,
    /// Lines missing from this connection's numbering since the last heartbeat.
    gaps: SeqGaps,
    writer: mpsc::Sender<String>,
    /// Dropping it tells the connection's reader to stop.
    _close: oneshot::Sender<()>,
}

struct Hub {
    events: mpsc::Sender<BridgeEvent>,
    connected: Arc<AtomicBool>,
    live: Option<Live>,
    pending: HashMap<u64, (u64, &'static str)>,
}

pub async fn run(
    mut from_conns: mpsc::Receiver<HubMsg>,
    mut from_app: mpsc::UnboundedReceiver<HubMsg>,
    events: mpsc::Sender<BridgeEvent>,
    connected: Arc<AtomicBool>,
) {
    let mut hub = Hub {
        events,
        connected,
        live: None,
        pending: HashMap::new(),
    };
    loop {
        let msg = tokio::select! {
            Some(msg) = from_conns.recv() => msg,
            Some(msg) = from_app.recv() => msg,
            else => return,
        };
        hub.handle(msg).await;
    }
}

impl Hub {
    async fn handle(&mut self, msg: HubMsg) {
        match msg {
            HubMsg::Authenticated {
                conn,
                peer_pid,
                hello,
                writer,
                close,
            } => {
                if let Some(reason) = self.refusal(peer_pid) {
                    // Dropping `writer` after the line and `close` ends the connection once it is written.
                    if let Ok(line) = encode_to_bridge(&ToBridge::Rejected {
                        reason: reason.clone(),
                    }) {
                        let _ = writer.try_send(line);
                    }
                    let reason = format!("refused a bridge connection: {reason}");
                    return self.emit(BridgeEvent::Rejected { reason }).await;
                }
                if let Ok(line) = encode_to_bridge(&ToBridge::Welcome {
                    protocol: PROTOCOL_VERSION,
                }) {
                    let _ = writer.try_send(line);
                }
                if let Some(old) = self.live.take() {
                    self.end_live(
                        old.conn,
                        "replaced by a newer bridge connection from the same pi process",
                    )
                    .await;
                }
                self.live = Some(Live {
                    conn,
                    peer_pid,
                    gaps: SeqGaps::default(),
                    writer,
                    _close: close,
                });
                self.connected.store(true, Ordering::Relaxed);
                self.emit(BridgeEvent::Connected { conn, hello: *hello }).await;
            }
            HubMsg::Line { conn, msg } => {
                let Some(live) = self.live.as_mut().filter(|l| l.conn == conn) else {
                    return;
                };
                if let Some(seq) = line_seq(&msg) {
                    live.gaps.note(seq);
                }
                match *msg {
                    FromBridge::Event { seq, at, event } => {
                        self.emit(BridgeEvent::Event { conn, seq, at, event }).await;
                    }
                    FromBridge::Reply(reply) => match self.pending.remove(&reply.id) {
                        Some((_, command)) => {
                            let id = reply.id;
                            self.emit(BridgeEvent::Reply {
                                id,
                                command,
                                result: reply.into_result(),
                            })
                            .await;
                        }
                        None => {
                            let reason =
                                format!("ignored a reply to unknown or expired command {}", reply.id);
                            self.emit(BridgeEvent::Warning { conn, reason }).await;
                        }
                    },
                    FromBridge::Heartbeat(heartbeat) => {
                        let missed = live.gaps.take_missed();
                        self.emit(BridgeEvent::Heartbeat {
                            conn,
                            heartbeat,
                            missed,
                        })
                        .await;
                    }
                    FromBridge::Hello(_) => {
                        let reason = "ignored a second hello on an authenticated connection".to_owned();
                        self.emit(BridgeEvent::Warning { conn, reason }).await;
                    }
                }
            }
            HubMsg::Warning { conn, reason } => self.emit(BridgeEvent::Warning { conn, reason }).await,
            HubMsg::Rejected { reason } => self.emit(BridgeEvent::Rejected { reason }).await,
            HubMsg::Closed { conn, reason } => {
                if self.live_conn() == Some(conn) {
                    self.live = None;
                    self.end_live(conn, &reason).await;
                }
            }
            HubMsg::Disconnect { reason } => {
                // Dropping the live entry closes its socket; the reader's own Closed is then ignored.
                if let Some(old) = self.live.take() {
                    self.end_live(old.conn, &reason).await;
                }
            }
            HubMsg::Send { id, name, line } => self.send(id, name, line).await,
        }
    }

    async fn send(&mut self, id: u64, command: &'static str, line: String) {
        let Some(live) = &self.live else {
            let result = Err("the bridge is not connected".to_owned());
            return self.emit(BridgeEvent::Reply { id, command, result }).await;
        };
        match live.writer.try_send(line) {
            Ok(()) => {
                self.pending.insert(id, (live.conn, command));
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                let result = Err("the bridge is not reading its commands; this one was dropped".to_owned());
                self.emit(BridgeEvent::Reply { id, command, result }).await;
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                let result = Err("the bridge connection is closing".to_owned());
                self.emit(BridgeEvent::Reply { id, command, result }).await;
            }
        }
    }

    /// Reports the end of the (former) live connection and fails the commands still waiting on it.
    async fn end_live(&mut self, conn: u64, reason: &str) {
        if self.live.is_none() {
            self.connected.store(false, Ordering::Relaxed);
        }
        let mut orphaned: Vec<(u64, &'static str)> = self
            .pending
            .iter()
            .filter(|(_, (c, _))| *c == conn)
            .map(|(id, (_, name))| (*id, *name))
            .collect();
        orphaned.sort_unstable();
        for (id, _) in &orphaned {
            self.pending.remove(id);
        }
        self.emit(BridgeEvent::Disconnected {
            conn,
            reason: reason.to_owned(),
        })
        .await;
        for (id, command) in orphaned {
            let result = Err(format!("the bridge connection ended before replying ({reason})"));
            self.emit(BridgeEvent::Reply { id, command, result }).await;
        }
    }

    /// Why a newly authenticated connection from `peer_pid` may not become live, if it may not.
    fn refusal(&self, peer_pid: Option<i32>) -> Option<String> {
        let live = self.live.as_ref()?;
        if live.peer_pid.is_some() && live.peer_pid == peer_pid {
            return None;
        }
        let holder = live
            .peer_pid
            .map_or_else(|| "another process".to_owned(), |pid| format!("pi process {pid}"));
        Some(format!(
            "{holder} holds the live bridge connection; only it may replace that connection"
        ))
    }

    fn live_conn(&self) -> Option<u64> {
        self.live.as_ref().map(|l| l.conn)
    }

    async fn emit(&self, event: BridgeEvent) {
        // The app dropped its receiver: nobody listens, which is not an error for the server.
        let _ = self.events.send(event).await;
    }
}

/// The number a line carries in the bridge's one counter; the hello has none.
fn line_seq(msg: &FromBridge) -> Option<u64> {
    match msg {
        FromBridge::Event { seq, .. } => Some(*seq),
        FromBridge::Reply(reply) => reply.seq,
        FromBridge::Heartbeat(heartbeat) => Some(heartbeat.seq),
        FromBridge::Hello(_) => None,
    }
}
