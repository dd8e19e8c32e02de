//! Whether a compaction is running, and whether it is pokeshell's handoff.

/// A compaction that sends no end event for this long is taken as over, so nothing waits forever.
pub const COMPACTION_HOLD_LIMIT_MS: u64 = 10 * 60 * 1000;

#[derive(Clone, Debug, Default)]
pub(crate) struct Compaction {
    active: bool,
    since_mono: u64,
    /// pokeshell asked for a handoff compaction and it has not ended yet.
    handoff_in_flight: bool,
}

impl Compaction {
    pub(crate) fn start(&mut self, now_mono: u64) {
        self.active = true;
        self.since_mono = now_mono;
    }

    pub(crate) fn start_handoff(&mut self, now_mono: u64) {
        self.handoff_in_flight = true;
        self.start(now_mono);
    }

    /// A `session_compact*` event: the compaction is over (the handoff's end is separate).
    pub(crate) fn end(&mut self) {
        self.active = false;
    }

    /// The handoff compaction ended; false when none was in flight.
    pub(crate) fn finish_handoff(&mut self) -> bool {
        if !self.handoff_in_flight {
            return false;
        }
        self.handoff_in_flight = false;
        self.active = false;
        true
    }

    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }

    pub(crate) fn active(&self) -> bool {
        self.active
    }

    pub(crate) fn handoff_in_flight(&self) -> bool {
        self.handoff_in_flight
    }

    /// Running, or about to run for a handoff.
    pub(crate) fn busy(&self) -> bool {
        self.active || self.handoff_in_flight
    }

    pub(crate) fn hold_deadline(&self) -> Option<u64> {
        self.active
            .then(|| self.since_mono.saturating_add(COMPACTION_HOLD_LIMIT_MS))
    }

    /// A compaction that never reported its end stops holding messages; true when that happened now.
    pub(crate) fn expire(&mut self, now_mono: u64) -> bool {
        if self.hold_deadline().is_some_and(|at| now_mono >= at) {
            self.reset();
            true
        } else {
            false
        }
    }
}
