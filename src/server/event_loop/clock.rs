//! The loop's one reading of time, from which every [`Now`] the workspace sees is derived, and the
//! one way pokeshell knows the user's local time: the offset from UTC, handed to the session as
//! [`pokeshell_core::session::Input::LocalTime`] (the session itself reads no zone).

use std::time::Duration;

use anyhow::Result;
use tokio::time::Instant;

use super::{Bridge, Child, Layer, Loop, Screen};
use pokeshell_core::session::Input;
use pokeshell_core::supervisor::Now;

/// How often the local offset is read again (it changes with daylight saving).
pub const ZONE_CHECK: Duration = Duration::from_secs(60);

/// Where local time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// The process's zone, as the C library knows it (`TZ`, else `/etc/localtime`). In the server
    /// that is the environment of the client that started it (the server inherits it).
    System,
    /// A fixed offset east of UTC, in seconds (tests: nothing read from the machine).
    Fixed(i32),
}

/// The loop's clock: one monotonic start and one wall-clock reading; every [`Now`] derives from them.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    wall_ms: u64,
    zone: Zone,
}

impl Clock {
    /// A clock whose local time is UTC; [`Clock::with_zone`] gives it another.
    pub fn new(start: Instant, wall_ms: u64) -> Self {
        Self {
            start,
            wall_ms,
            zone: Zone::Fixed(0),
        }
    }

    pub fn with_zone(self, zone: Zone) -> Self {
        Self { zone, ..self }
    }

    /// The local offset from UTC (seconds east) at `now`.
    pub fn utc_offset_secs(&self, now: Now) -> i32 {
        match self.zone {
            Zone::Fixed(secs) => secs,
            Zone::System => system_offset_secs(now.wall_ms),
        }
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

impl<S: Screen, C: Child, B: Bridge, L: Layer> Loop<S, C, B, L> {
    /// The session learns the local offset at once and again when it changes (read at most once
    /// a [`ZONE_CHECK`], on the loop's own wakes: no wake of its own).
    pub(super) fn check_zone(&mut self, now: Instant) -> Result<()> {
        if now < self.zone_check_due {
            return Ok(());
        }
        self.zone_check_due = now + ZONE_CHECK;
        let offset = self.clock.utc_offset_secs(self.clock.now(now));
        if self.utc_offset != Some(offset) {
            self.utc_offset = Some(offset);
            self.input(Input::LocalTime {
                utc_offset_secs: offset,
            })?;
        }
        Ok(())
    }
}

/// The process's local offset from UTC (seconds east) at `wall_ms`; 0 when the C library cannot
/// tell.
pub fn system_offset_secs(wall_ms: u64) -> i32 {
    let secs = (wall_ms / 1000) as libc::time_t;
    // SAFETY: localtime_r writes only into the zeroed local struct it is given.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            return 0;
        }
        i32::try_from(tm.tm_gmtoff).unwrap_or(0)
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

    #[test]
    fn a_fixed_zone_is_what_it_says_and_the_default_is_utc() {
        let clock = Clock::new(Instant::now(), 1_000);
        assert_eq!(clock.utc_offset_secs(Now::new(0, 1_000)), 0);
        let paris = clock.with_zone(Zone::Fixed(3600));
        assert_eq!(paris.utc_offset_secs(Now::new(0, 1_000)), 3600);
    }
}
