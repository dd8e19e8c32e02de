//! The loop's one reading of time, from which every [`Now`] the workspace sees is derived.

use std::time::Duration;

use tokio::time::Instant;

use crate::supervisor::Now;

/// The loop's clock: one monotonic start and one wall-clock reading; every [`Now`] derives from them.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    wall_ms: u64,
}

impl Clock {
    pub fn new(start: Instant, wall_ms: u64) -> Self {
        Self { start, wall_ms }
    }

    /// The moment the loop started.
    pub fn start(&self) -> Instant {
        self.start
    }

    pub fn now(&self, at: Instant) -> Now {
        let mono_ms = u64::try_from(at.saturating_duration_since(self.start).as_millis()).unwrap_or(u64::MAX);
        Now::new(mono_ms, self.wall_ms.saturating_add(mono_ms))
    }

    /// The instant of a deadline in monotonic ms. `None` when the platform's clock cannot hold it (a
    /// deadline read from a corrupt session entry, centuries away): a deadline that never comes.
    pub fn instant(&self, mono_ms: u64) -> Option<Instant> {
        self.start.checked_add(Duration::from_millis(mono_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_and_instant_are_inverse_and_never_panic() {
        let start = Instant::now();
        let clock = Clock::new(start, 1_000);
        let at = clock.instant(2_500).expect("a near deadline");
        assert_eq!(clock.now(at).mono_ms, 2_500);
        assert_eq!(clock.now(at).wall_ms, 3_500);
        assert_eq!(clock.now(start).mono_ms, 0, "no time before the start");
        let far = clock.instant(u64::MAX);
        assert!(far.is_none_or(|at| at > start), "{far:?}");
    }
}
