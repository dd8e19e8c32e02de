//! Time as the shell passes it in: the supervisor never reads a clock.

/// One instant, seen through two clocks.
///
/// `mono_ms` drives every cooldown, threshold and timer (it never jumps). `wall_ms` (Unix epoch
/// milliseconds) is only used for what outlives the process: a wakeup's persisted fire time, and the
/// timestamps of ledger records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Now {
    pub mono_ms: u64,
    pub wall_ms: u64,
}

impl Now {
    pub fn new(mono_ms: u64, wall_ms: u64) -> Self {
        Self { mono_ms, wall_ms }
    }

    /// The same instant `ms` later on both clocks.
    pub fn plus_ms(self, ms: u64) -> Self {
        Self {
            mono_ms: self.mono_ms.saturating_add(ms),
            wall_ms: self.wall_ms.saturating_add(ms),
        }
    }
}
