//! The sends the bridge has not answered yet (fix B7: pi's reply to each send comes back as
//! `SendResult`, so the supervisor knows what pi really took).

use std::collections::VecDeque;

/// What a send was for, to act on its result.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sent {
    Resume { rule: &'static str },
    ManualPoke,
    Review,
    Wakeup { id: String, reason: String },
}

const REMEMBERED_SENDS: usize = 64;

#[derive(Debug, Default)]
pub(crate) struct SendLog {
    last_id: u64,
    recent: VecDeque<(u64, Sent)>,
}

impl SendLog {
    /// A new send id for `sent`.
    pub(crate) fn register(&mut self, sent: Sent) -> u64 {
        self.last_id += 1;
        if self.recent.len() == REMEMBERED_SENDS {
            self.recent.pop_front();
        }
        self.recent.push_back((self.last_id, sent));
        self.last_id
    }

    /// What the answered send was for; `None` for an unknown or forgotten id.
    pub(crate) fn len(&self) -> usize {
        self.recent.len()
    }

    /// A new session began (WAK-T6): a late answer to a wakeup of the old one must not mark the new
    /// session's wakeup of the same id as fired (ids start again in every session).
    pub(crate) fn forget_wakeups(&mut self) {
        self.recent
            .retain(|(_, sent)| !matches!(sent, Sent::Wakeup { .. }));
    }

    pub(crate) fn take(&mut self, send_id: u64) -> Option<Sent> {
        let index = self.recent.iter().position(|(id, _)| *id == send_id)?;
        self.recent.remove(index).map(|(_, sent)| sent)
    }
}
