//! The short way for a client's keys: straight from its connection to the loop of the session the
//! core made it follow, past the core, as long as nothing the client sent earlier is still on its way
//! through the core.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc::UnboundedSender;

use crate::event_loop::input_meter::Ticket;
use crate::event_loop::{ClientEvent, WorldEvent};

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
        let session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(tx) = session.as_ref() else {
            return Err((bytes, ticket));
        };
        let ev = WorldEvent::Client(ClientEvent::Input { id, bytes, ticket });
        tx.send(ev).map_err(|e| match e.0 {
            WorldEvent::Client(ClientEvent::Input { bytes, ticket, .. }) => (bytes, ticket),
            _ => (Vec::new(), Ticket::default()),
        })
    }
}
