//! pi-wakeup [WAK-P1..P4, WAK-T1..T5]: the model schedules its own wakeups through two tools the
//! bridge forwards. This component keeps the pending timers; the supervisor persists each step as a
//! session entry, re-arms pending wakeups when a session starts, and decides when they may fire.

pub mod restore;
pub mod schedule;

use super::event::CustomEntry;
use super::view::WakeupView;

pub const SCHEDULE_TOOL: &str = "schedule_wakeup";
pub const CANCEL_TOOL: &str = "cancel_wakeup";

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PendingWakeup {
    pub id: String,
    pub prompt: String,
    pub reason: String,
    pub fire_at_wall: u64,
    pub due_mono: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Wakeups {
    pending: Vec<PendingWakeup>,
    /// The last `wake-N` number handed out.
    counter: u64,
}

impl Wakeups {
    /// WAK-T1: a new wakeup `delay_s` seconds from now, with the next id.
    pub(crate) fn schedule(
        &mut self,
        prompt: &str,
        reason: &str,
        delay_s: u64,
        now_mono: u64,
        now_wall: u64,
    ) -> PendingWakeup {
        self.counter += 1;
        let delay_ms = delay_s * 1000;
        let wakeup = PendingWakeup {
            id: format!("wake-{}", self.counter),
            prompt: prompt.to_string(),
            reason: reason.to_string(),
            fire_at_wall: now_wall + delay_ms,
            due_mono: now_mono + delay_ms,
        };
        self.pending.push(wakeup.clone());
        wakeup
    }

    /// WAK-T2 for one id; true when it was pending.
    pub(crate) fn cancel(&mut self, id: &str) -> bool {
        let existed = self.pending.iter().any(|wakeup| wakeup.id == id);
        self.pending.retain(|wakeup| wakeup.id != id);
        existed
    }

    /// WAK-T2 without an id; how many were pending.
    pub(crate) fn cancel_all(&mut self) -> usize {
        let count = self.pending.len();
        self.pending.clear();
        count
    }

    /// WAK-T5: rebuilds the pending wakeups from the session's entries. Returns the entries that could
    /// not be used (with the reason) and the ids re-armed.
    pub(crate) fn restore(
        &mut self,
        entries: &[CustomEntry],
        now_mono: u64,
        now_wall: u64,
    ) -> (Vec<String>, Vec<String>) {
        let restored = restore::restore(entries);
        self.counter = restored.highest_number;
        self.pending = restored
            .pending
            .into_iter()
            .map(|wakeup| PendingWakeup {
                due_mono: now_mono + wakeup.fire_at_wall.saturating_sub(now_wall),
                id: wakeup.id,
                prompt: wakeup.prompt,
                reason: wakeup.reason,
                fire_at_wall: wakeup.fire_at_wall,
            })
            .collect();
        let ids = self.pending.iter().map(|wakeup| wakeup.id.clone()).collect();
        (restored.skipped, ids)
    }

    /// WAK-T3: removes and returns the wakeup due first at `now_mono`, if any (one at a time: at most
    /// one message goes to the agent per settle, ARB-ONE).
    pub(crate) fn take_due(&mut self, now_mono: u64) -> Option<PendingWakeup> {
        let index = self
            .pending
            .iter()
            .enumerate()
            .filter(|(_, wakeup)| wakeup.due_mono <= now_mono)
            .min_by_key(|(_, wakeup)| wakeup.due_mono)
            .map(|(index, _)| index)?;
        Some(self.pending.remove(index))
    }

    pub(crate) fn next_due(&self) -> Option<u64> {
        self.pending.iter().map(|wakeup| wakeup.due_mono).min()
    }

    pub(crate) fn due_within(&self, now_mono: u64, margin_ms: u64) -> bool {
        self.pending
            .iter()
            .any(|wakeup| wakeup.due_mono <= now_mono + margin_ms)
    }

    pub(crate) fn len(&self) -> usize {
        self.pending.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// WAK-T4: the timers go; persisted wakeups come back at the next session start.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
    }

    /// Soonest first; `held` says why a due wakeup does not fire yet.
    pub(crate) fn views(&self, now_mono: u64, held: Option<&'static str>) -> Vec<WakeupView> {
        let mut views: Vec<WakeupView> = self
            .pending
            .iter()
            .map(|wakeup| {
                let remaining_ms = wakeup.due_mono.saturating_sub(now_mono);
                WakeupView {
                    id: wakeup.id.clone(),
                    reason: wakeup.reason.clone(),
                    prompt: wakeup.prompt.clone(),
                    fire_at_wall_ms: wakeup.fire_at_wall,
                    remaining_ms,
                    held: if remaining_ms == 0 { held } else { None },
                }
            })
            .collect();
        views.sort_by_key(|wakeup| wakeup.remaining_ms);
        views
    }
}
