//! The short way for a client's keys: straight from its connection to the loop of the session the
//! core made it follow, past the core, as long as nothing the client sent earlier is still on its way
//! through the core. On the short way the connection may also lend the reading of its socket to
//! that session's thread ([`super::conn::lent`]), so that a key wakes that thread alone.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::sync::mpsc::UnboundedSender;

use crate::server::event_loop::input_meter::Ticket;
use crate::server::event_loop::{ClientEvent, WorldEvent};

/// A session's loop, where keys go, and the runtime its thread runs (where a lent socket is read).
#[derive(Clone)]
pub struct Target {
    pub tx: UnboundedSender<WorldEvent>,
    pub runtime: Handle,
}

/// Where a client's keys go the short way, straight from its connection to the session's loop: the
/// session the core made it follow ([`pokeshell_core::server::state::ServerEffect::Follow`]), set and cleared by the
/// performer as the core decides. Everything else the client sends goes through the core.
#[derive(Default)]
pub struct Route {
    session: Mutex<Option<Target>>,
    /// Counts the changes of `session`: a lent reading knows by it that it read for a route gone.
    generation: AtomicU64,
    /// Told of every change of `session`.
    changed: Notify,
    /// What the client sent the long way and the core has not had yet. A key goes the short way
    /// only when this is zero, so it never overtakes a resize, the terminal's answers or a key the
    /// client sent before it.
    long_way: AtomicUsize,
}

/// A route as it was at one moment: to lend the reading to the session it led to.
pub struct Lendable {
    pub generation: u64,
    pub runtime: Handle,
}

impl Route {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Target>> {
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// From now on keys go to `session` (`None`: through the core).
    pub fn set(&self, session: Option<Target>) {
        let mut slot = self.slot();
        *slot = session;
        self.generation.fetch_add(1, Ordering::AcqRel);
        drop(slot);
        self.changed.notify_waiters();
    }

    /// The core has had one more of what was sent the long way.
    pub fn arrived(&self) {
        let _ = self
            .long_way
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// Something was sent the long way, through the core.
    pub fn went_long_way(&self) {
        self.long_way.fetch_add(1, Ordering::AcqRel);
    }

    /// Hands the session client `id`'s key (with its ticket, which keeps it counted until the
    /// session took it); gives both back when the key must go through the core.
    pub fn key(&self, id: u64, bytes: Vec<u8>, ticket: Ticket) -> Result<(), (Vec<u8>, Ticket)> {
        if self.long_way.load(Ordering::Acquire) != 0 {
            return Err((bytes, ticket));
        }
        let session = self.slot();
        let Some(target) = session.as_ref() else {
            return Err((bytes, ticket));
        };
        send(&target.tx, id, bytes, ticket)
    }

    /// The session the reading may be lent to: the route leads to one, and nothing the client sent
    /// is on its way through the core.
    pub fn lendable(&self) -> Option<Lendable> {
        if self.long_way.load(Ordering::Acquire) != 0 {
            return None;
        }
        let session = self.slot();
        session.as_ref().map(|t| Lendable {
            generation: self.generation.load(Ordering::Acquire),
            runtime: t.runtime.clone(),
        })
    }

    /// As [`Route::key`], for a reading lent at `generation`: the key is given back when the route
    /// changed since, or when something the client sent is on its way through the core (a lent
    /// terminal is read beside the socket), and goes the way the connection finds then.
    pub fn lent_key(
        &self,
        generation: u64,
        id: u64,
        bytes: Vec<u8>,
        ticket: Ticket,
    ) -> Result<(), (Vec<u8>, Ticket)> {
        if self.long_way.load(Ordering::Acquire) != 0 {
            return Err((bytes, ticket));
        }
        let session = self.slot();
        match session.as_ref() {
            Some(target) if self.is_still(generation) => send(&target.tx, id, bytes, ticket),
            _ => Err((bytes, ticket)),
        }
    }

    /// Whether the route is still the one of `generation`.
    pub fn is_still(&self, generation: u64) -> bool {
        self.generation.load(Ordering::Acquire) == generation
    }

    /// Resolves at the route's next change (create it before looking at [`Route::is_still`]).
    pub fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }
}

fn send(
    tx: &UnboundedSender<WorldEvent>,
    id: u64,
    bytes: Vec<u8>,
    ticket: Ticket,
) -> Result<(), (Vec<u8>, Ticket)> {
    let ev = WorldEvent::Client(ClientEvent::Input { id, bytes, ticket });
    tx.send(ev).map_err(|e| match e.0 {
        WorldEvent::Client(ClientEvent::Input { bytes, ticket, .. }) => (bytes, ticket),
        _ => (Vec::new(), Ticket::default()),
    })
}
