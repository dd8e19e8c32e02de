//! The stall watch [STALL-S1, STALL-R1, STALL-F1]: a run in flight that shows no sign of life.
//!
//! A provider can hold a stream open with keep-alive comments and never send another token; pi waits
//! for it forever. And an extension can await forever at `agent_end`, so the run never settles. Both
//! look the same from here: a run is in flight, no tool runs, and nothing (no stream progress, no event)
//! arrived for `streamStallSeconds`. This part keeps the clock of that silence, the pokeshell abort
//! waiting for its settle, and the episode's count of resumes.

/// How long pokeshell's own abort may go without a settle before pi counts as frozen.
pub const ABORT_SETTLE_LIMIT_MS: u64 = 30_000;

/// Which silence it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallKind {
    /// A model request was in flight: the stream stopped (STALL-S1).
    Stream,
    /// The run had ended but never settled (STALL-R1).
    Run,
}

/// An abort pokeshell sent for a stall, waiting for its aborted settle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StallAbort {
    pub kind: StallKind,
    /// How long the silence had lasted, in seconds.
    pub seconds: u64,
    pub at_mono: u64,
    /// `Action::Unresponsive` went out for it.
    pub frozen_reported: bool,
}

#[derive(Debug, Default)]
pub(crate) struct StallWatch {
    /// The last sign of life of the run in flight (mono ms).
    last_activity: u64,
    abort: Option<StallAbort>,
    /// Resumes after stalls in this episode (a healthy settle or the user ends it).
    resumes: u32,
    /// The maximum was reached in this run: stop watching it until it settles.
    gave_up: bool,
}

impl StallWatch {
    /// Any sign that the run is alive.
    pub(crate) fn alive(&mut self, now_mono: u64) {
        self.last_activity = now_mono;
    }

    /// When the silence passes `limit_ms`, if the watch is open.
    /// pokeshell was away for `ms`: the silence it measures did not grow meanwhile.
    pub(crate) fn away(&mut self, ms: u64) {
        self.last_activity = self.last_activity.saturating_add(ms);
        if let Some(abort) = &mut self.abort {
            abort.at_mono = abort.at_mono.saturating_add(ms);
        }
    }

    pub(crate) fn deadline(&self, limit_ms: u64) -> Option<u64> {
        if self.abort.is_some() || self.gave_up {
            return None;
        }
        Some(self.last_activity.saturating_add(limit_ms))
    }

    pub(crate) fn silence_s(&self, now_mono: u64) -> u64 {
        now_mono.saturating_sub(self.last_activity) / 1000
    }

    pub(crate) fn resumes(&self) -> u32 {
        self.resumes
    }

    /// pokeshell aborts the run for this stall.
    pub(crate) fn aborting(&mut self, kind: StallKind, seconds: u64, now_mono: u64) {
        self.abort = Some(StallAbort {
            kind,
            seconds,
            at_mono: now_mono,
            frozen_reported: false,
        });
    }

    /// The maximum is reached: this run is left alone.
    pub(crate) fn give_up(&mut self) {
        self.gave_up = true;
    }

    /// The abort waiting for its settle, if any.
    pub(crate) fn pending_abort(&self) -> Option<StallAbort> {
        self.abort
    }

    /// When an unanswered abort makes pi count as frozen.
    pub(crate) fn frozen_deadline(&self) -> Option<u64> {
        self.abort
            .filter(|abort| !abort.frozen_reported)
            .map(|abort| abort.at_mono.saturating_add(ABORT_SETTLE_LIMIT_MS))
    }

    pub(crate) fn report_frozen(&mut self) {
        if let Some(abort) = self.abort.as_mut() {
            abort.frozen_reported = true;
        }
    }

    /// A settle: returns the stall abort it answers, if any; the next run is watched afresh.
    pub(crate) fn settled(&mut self) -> Option<StallAbort> {
        self.gave_up = false;
        self.abort.take()
    }

    pub(crate) fn count_resume(&mut self) {
        self.resumes += 1;
    }

    /// A healthy settle, the user's input, a new session: a new episode.
    pub(crate) fn end_episode(&mut self) {
        self.resumes = 0;
    }

    /// A session change: nothing of the old run is waited for.
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }
}
