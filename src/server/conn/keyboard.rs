//! The keys of a client's terminal that the server holds (`crate::ipc::terminal`): read here, on
//! the server's main thread, while the client follows no session or something it sent is on its
//! way through the core, and lent to the session it follows otherwise, as its socket's reading is.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::lent::{self, Keyboard, Lent};
use super::{Following, READ_BUFFER, input_room, pass_keys};
use crate::ipc::outbox::Outbox;
use crate::ipc::terminal::{Keys, Terminal, Typed};
use crate::server::route::Route;
use crate::server::serve::{ServerEvent, ServerMsg};
use pokeshell_core::wire::Up;

/// The test hook under which the server never takes a terminal (read from the server's
/// environment), so that tests reach the client's own reading and writing of its terminal.
const KEEP_TERMINAL_HOOK: &str = "POKESHELL_TEST_KEEP_TERMINAL";

/// Opens the client's terminal for the screen and the keys; `false`: the client keeps them.
pub(super) fn take_terminal(path: &str, outbox: &Outbox) -> bool {
    if std::env::var_os(KEEP_TERMINAL_HOOK).is_some() {
        return false;
    }
    match Terminal::open(path) {
        Ok(term) => {
            outbox.set_terminal(Arc::new(term));
            true
        }
        Err(_) => false,
    }
}

/// The reader of a client's terminal that the server holds: it lends the reading to the session
/// the client follows, as the socket's is lent, and reads here while there is none.
pub(super) struct TerminalKeys {
    pub(super) id: u64,
    pub(super) term: Arc<Terminal>,
    pub(super) route: Arc<Route>,
    pub(super) server: UnboundedSender<ServerMsg>,
    pub(super) in_flight: Arc<AtomicUsize>,
    pub(super) following: Following,
    pub(super) held_limit: Duration,
}

impl TerminalKeys {
    pub(super) async fn run(self) {
        let mut told_typed: Option<Instant> = None;
        let mut unread: Vec<u8> = Vec::new();
        let mut keys: Option<Keys> = None;
        let mut refused: Option<u64> = None;
        let mut buf = vec![0u8; READ_BUFFER];
        loop {
            if let Err(reason) = input_room(&self.in_flight, &self.following, self.held_limit).await {
                let _ = self
                    .server
                    .send(ServerEvent::Garbage { id: self.id, reason }.into());
                break;
            }
            if !unread.is_empty() {
                let bytes = std::mem::take(&mut unread);
                if !pass_keys(
                    self.id,
                    bytes,
                    &self.in_flight,
                    &self.route,
                    &self.server,
                    &mut told_typed,
                ) {
                    break;
                }
                continue;
            }
            if self.term.is_closed() {
                break;
            }
            let lendable = || self.route.lendable().filter(|to| refused != Some(to.generation));
            if let Some(to) = lendable() {
                // The registration here goes before the session's runtime makes its own.
                keys = None;
                let reading = Keyboard {
                    term: self.term.clone(),
                    unread: Vec::new(),
                    refused: false,
                    ended: false,
                };
                let counts = (self.in_flight.clone(), self.following.clone());
                let (lent, back) = Lent::new(
                    self.id,
                    reading,
                    self.route.clone(),
                    to.generation,
                    self.server.clone(),
                    counts,
                );
                to.runtime.spawn(lent::read_terminal(lent));
                let Ok(reading) = back.await else { break };
                refused = reading.refused.then_some(to.generation);
                unread = reading.unread;
                if reading.ended {
                    self.lost(&unread);
                    break;
                }
                continue;
            }
            let changed = self.route.changed();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if lendable().is_some() {
                continue;
            }
            let reader = match &mut keys {
                Some(k) => k,
                None => match Keys::new(&self.term) {
                    Ok(k) => keys.insert(k),
                    Err(_) => break,
                },
            };
            tokio::select! {
                () = &mut changed => {}
                typed = reader.read(&self.term, &mut buf) => match typed {
                    Typed::Bytes(n) => unread = buf[..n].to_vec(),
                    _ => {
                        self.lost(&unread);
                        break;
                    }
                },
            }
        }
    }

    /// The terminal can no longer be read: unless the server closed it, the client is detached, as
    /// a client whose own read of its terminal failed detaches itself.
    fn lost(&self, unread: &[u8]) {
        if self.term.is_closed() {
            return;
        }
        if !unread.is_empty() {
            let mut told_typed = None;
            pass_keys(
                self.id,
                unread.to_vec(),
                &self.in_flight,
                &self.route,
                &self.server,
                &mut told_typed,
            );
        }
        self.route.went_long_way();
        let _ = self.server.send(
            ServerEvent::Up {
                id: self.id,
                up: Up::Detach,
            }
            .into(),
        );
    }
}
