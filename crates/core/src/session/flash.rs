//! The footer's short-lived message.

use crate::supervisor::Now;
use crate::ui::theme::Tone;

/// How long a footer message stays.
const TTL_MS: u64 = 4000;

#[derive(Debug, Default)]
pub struct Flash {
    message: Option<(String, Tone, u64)>,
}

impl Flash {
    pub fn show(&mut self, text: impl Into<String>, tone: Tone, now: Now) {
        self.message = Some((text.into(), tone, now.mono_ms));
    }

    /// Drops a message whose time is up; true when one was dropped.
    pub fn expire(&mut self, now: Now) -> bool {
        let due = self.deadline().is_some_and(|d| d <= now.mono_ms);
        if due {
            self.message = None;
        }
        due
    }

    pub fn deadline(&self) -> Option<u64> {
        self.message.as_ref().map(|(_, _, at)| at + TTL_MS)
    }

    pub fn current(&self) -> Option<(String, Tone)> {
        self.message.as_ref().map(|(t, tone, _)| (t.clone(), *tone))
    }
}
