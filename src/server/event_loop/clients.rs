//! The loop's side of the terminals attached to its session (every session runs in a server): a
//! client attaches with its size and its terminal's answers to the start-up probe, types, resizes,
//! leaves.
//! The screen (the server's) keeps the clients and fans frames out to them; the loop re-applies
//! pi's input modes and draws everything again for a newcomer, and gives pi the newcomer's
//! terminal capabilities.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

use super::{Bridge, Child, Layer, Loop, RESIZE_COALESCE, Screen, lock};
use crate::term::host::HostModes;
use crate::term::screen::HostCaps;
use pokeshell_core::session::{ClientId, Input};

/// What the loop sends one attached client.
#[derive(Debug)]
pub enum ClientOut {
    /// Bytes for the client's terminal.
    Bytes(Vec<u8>),
    /// pi suspended itself (Ctrl+Z): the client gives its terminal back until `fg`.
    Suspend,
    /// The pane's size now (at attach, and when it changed).
    Size { cols: u16, rows: u16 },
}

/// One attached client, as the screen keeps it.
#[derive(Debug, Clone)]
pub struct ClientLink {
    pub tx: UnboundedSender<ClientOut>,
    pub cols: u16,
    pub rows: u16,
    /// Bytes queued for the client and not written to its socket yet (a client that does not read
    /// is dropped rather than let the server's memory grow).
    pub queued: Arc<AtomicUsize>,
    /// Only watching: its size counts for the pane only when every client attached watches.
    pub watch: bool,
}

impl ClientLink {
    /// Hands `out` to the client's connection; `false`: the client is gone.
    pub fn send(&self, out: ClientOut) -> bool {
        self.tx.send(out).is_ok()
    }

    /// Sends bytes for the client's terminal, counted against the client's bound until its
    /// connection wrote them; `false`: the client is gone.
    pub fn send_bytes(&self, bytes: &[u8]) -> bool {
        self.queued.fetch_add(bytes.len(), Ordering::AcqRel);
        self.send(ClientOut::Bytes(bytes.to_vec()))
    }
}

/// Something a client did.
#[derive(Debug)]
pub enum ClientEvent {
    Attach {
        id: u64,
        link: ClientLink,
        /// The raw answers of the client's terminal to the start-up probe; `None`: they follow as
        /// [`ClientEvent::Caps`] (pi's queries wait for them).
        caps: Option<Vec<u8>>,
    },
    /// The client's terminal answered the probe.
    Caps {
        id: u64,
        caps: Vec<u8>,
    },
    Detach {
        id: u64,
    },
    Input {
        id: u64,
        bytes: Vec<u8>,
        /// Counts the bytes against the client's input bound until the loop has taken them.
        ticket: crate::server::event_loop::input_meter::Ticket,
    },
    Resize {
        id: u64,
        cols: u16,
        rows: u16,
    },
    /// The client was suspended with pi and is back.
    Resumed {
        id: u64,
        cols: u16,
        rows: u16,
    },
}

impl<S: Screen, C: Child, B: Bridge, L: Layer> Loop<S, C, B, L> {
    pub(super) fn on_client(&mut self, ev: ClientEvent) -> Result<()> {
        let now = Instant::now();
        match ev {
            ClientEvent::Attach { id, link, caps } => {
                if let Some(caps) = caps {
                    self.client_caps(id, &caps);
                }
                self.screen.attach(id, link);
                // The newcomer's terminal has none of pi's modes (the others keep theirs: a kitty
                // push twice would stack) and nothing of ours on it.
                let bytes = HostModes::default().transition(&self.host_modes);
                self.screen.write_to(id, &bytes)?;
                self.cursor = None;
                let (cols, rows) = self.screen.size()?;
                self.screen.clear(cols, rows)?;
                self.input(Input::Resize { cols, rows })?;
                self.dirty = true;
            }
            ClientEvent::Caps { id, caps } => self.client_caps(id, &caps),
            ClientEvent::Detach { id } => {
                self.screen.detach(id);
                self.typing.left(id);
                self.input(Input::ClientLeft { client: id })?;
                self.status_clients.remove(&id);
                if self.suspended && self.screen.attached() == 0 {
                    // Nobody is left to bring pi back with `fg`: it goes on working unattended.
                    self.suspended = false;
                    self.child.signal(libc::SIGCONT);
                }
                self.resize_due.get_or_insert(now + RESIZE_COALESCE);
            }
            ClientEvent::Input { id, bytes, ticket } => {
                self.stdin(id, bytes)?;
                // Now counted in the child's input queue (or held by the start gate, bounded).
                drop(ticket);
            }
            ClientEvent::Resize { id, cols, rows } => {
                self.screen.client_resize(id, cols, rows);
                self.resize_due.get_or_insert(now + RESIZE_COALESCE);
            }
            ClientEvent::Resumed { id, cols, rows } => {
                self.screen.client_resize(id, cols, rows);
                if self.suspended {
                    self.suspended = false;
                    self.resume()?;
                }
            }
        }
        Ok(())
    }

    /// Clients the screen dropped for not reading leave the session's keyboards too.
    pub(super) fn forget_dropped(&mut self) -> Result<()> {
        for id in self.screen.take_dropped() {
            self.typing.left(id);
            self.input(Input::ClientLeft { client: id })?;
            self.status_clients.remove(&id);
        }
        Ok(())
    }

    /// One client's probe answers: pi's queries are answered from them, and the client gets
    /// program-status reports if its terminal reads them.
    fn client_caps(&mut self, id: u64, answers: &[u8]) {
        if HostCaps::parse_probe(answers).caps.program_status {
            self.status_clients.insert(id);
        }
        self.give_caps(answers);
    }

    /// A program-status report goes to each client whose terminal said it reads them.
    pub(super) fn status_report(&mut self, bytes: &[u8]) -> Result<()> {
        for id in self.status_clients.clone() {
            self.screen.write_to(id, bytes)?;
        }
        Ok(())
    }

    /// A client's terminal answered the probe: pi's queries are answered from it from now on.
    pub fn give_caps(&mut self, answers: &[u8]) {
        let caps: HostCaps = HostCaps::parse_probe(answers).caps;
        let mut m = lock(&self.mirror);
        m.set_host_caps(caps);
        let replies = m.take_replies();
        // Under the lock, like the parser's answers, so no later answer overtakes these.
        self.child.write(replies);
    }

    /// A client's keys: held while pi's screen is not up (see [`crate::term::host::start_gate`]), then
    /// into the session as that client's.
    pub(super) fn stdin(&mut self, client: ClientId, bytes: Vec<u8>) -> Result<()> {
        let ready = lock(&self.mirror).modes().bracketed_paste;
        let typed = self
            .typing
            .offer(client, &bytes, std::time::Instant::now(), ready);
        self.type_in(typed)
    }

    fn type_in(&mut self, typed: super::typing::Typed) -> Result<()> {
        for (client, bytes) in typed {
            self.input(Input::Stdin { client, bytes })?;
            let pending = self.workspace.shown().input_pending(client);
            self.typing.note_pending(client, pending, Instant::now());
        }
        Ok(())
    }

    /// pi may be ready for the keys held since it started.
    pub(super) fn release_held_keys(&mut self) -> Result<()> {
        if !self.typing.holding() {
            return Ok(());
        }
        let ready = lock(&self.mirror).modes().bracketed_paste;
        let typed = self.typing.check(std::time::Instant::now(), ready);
        self.type_in(typed)
    }

    /// Keys wait for pi's screen: from now on, and again each time pi is relaunched (its PTY is in
    /// cooked mode until pi takes it: a Ctrl+C or Ctrl+\ typed then would be a signal to pi).
    pub fn hold_keys_until_ready(&mut self) {
        self.gate_each_start = true;
        self.typing.hold_until_ready(std::time::Instant::now());
    }
}
