//! pi-poke's post-compaction wake [POKE-W1..W5, N1..N5]: an automatic compaction that interrupted work
//! arms a wake; the next turn moves it to watching; the settle decides to poke or to clear. The stall
//! episode (pokes sent, the last one's time) is shared with the orphaned-tool poke.

use super::event::CompactReason;
use super::texts;
use super::view::WakeView;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakePhase {
    /// A compaction interrupted work; no turn has started since.
    Armed,
    /// A turn started after the compaction; its run is being judged.
    Watching,
}

#[derive(Clone, Debug, PartialEq)]
struct Wake {
    phase: WakePhase,
    failed: bool,
    error: Option<String>,
    tokens_before: Option<u64>,
    since_wall: u64,
}

/// What ended a compaction.
pub(crate) struct CompactionEnd {
    pub reason: CompactReason,
    pub will_retry: bool,
    pub failed: bool,
    pub aborted: bool,
    pub error: Option<String>,
    pub tokens_before: Option<u64>,
}

/// What the wake makes of a settle (POKE-W4 in the order of N3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WakeVerdict {
    /// No wake (or the post-compaction poke is off, which drops it): POKE-O2 decides the episode.
    NoWake,
    /// The run after the compaction ended well: the wake clears and the episode is over.
    Healthy,
    /// The episode's maximum is reached: the wake is to be dropped if its give-up wins the settle.
    GiveUp,
    /// The wake wants to poke.
    Poke,
}

/// The wake and pi-poke's stall episode.
#[derive(Debug, Default)]
pub(crate) struct PostCompact {
    wake: Option<Wake>,
    /// Pokes sent in this episode.
    pokes: u32,
    last_poke_mono: Option<u64>,
}

impl PostCompact {
    pub(crate) fn arm(&mut self, end: CompactionEnd, now_wall: u64) {
        self.wake = Some(Wake {
            phase: WakePhase::Armed,
            failed: end.failed,
            error: end.error,
            tokens_before: end.tokens_before,
            since_wall: now_wall,
        });
    }

    pub(crate) fn armed(&self) -> bool {
        self.wake.is_some()
    }

    /// POKE-W3.
    pub(crate) fn saw_turn(&mut self) {
        if let Some(wake) = &mut self.wake {
            wake.phase = WakePhase::Watching;
        }
    }

    /// Drops the wake; true when there was one.
    pub(crate) fn drop_wake(&mut self) -> bool {
        self.wake.take().is_some()
    }

    pub(crate) fn judge(&mut self, post_compact_poke: bool, run_failed: bool, max_pokes: u32) -> WakeVerdict {
        let Some(wake) = &self.wake else {
            return WakeVerdict::NoWake;
        };
        if !post_compact_poke {
            self.wake = None;
            return WakeVerdict::NoWake;
        }
        if wake.phase == WakePhase::Watching && !run_failed {
            self.pokes = 0;
            self.wake = None;
            return WakeVerdict::Healthy;
        }
        if self.pokes >= max_pokes {
            return WakeVerdict::GiveUp;
        }
        WakeVerdict::Poke
    }

    /// The poke's text and whether the compaction had failed; `None` without a wake.
    pub(crate) fn poke_text(&self, run_error: Option<&str>) -> Option<(String, bool)> {
        let wake = self.wake.as_ref()?;
        let error = wake.error.as_deref().or(run_error);
        let text = if wake.failed {
            texts::failed_compaction_poke(error)
        } else {
            texts::compaction_poke(wake.tokens_before, error)
        };
        Some((text, wake.failed))
    }

    pub(crate) fn pokes(&self) -> u32 {
        self.pokes
    }

    pub(crate) fn last_poke_mono(&self) -> Option<u64> {
        self.last_poke_mono
    }

    pub(crate) fn count_poke(&mut self, now_mono: u64) {
        self.pokes += 1;
        self.last_poke_mono = Some(now_mono);
    }

    /// The episode ends (a healthy settle, the user's input, a manual poke).
    pub(crate) fn end_episode(&mut self) {
        self.pokes = 0;
    }

    /// Session start, `/tree`, shutdown: forget the wake and the episode.
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }

    pub(crate) fn view(&self) -> Option<WakeView> {
        self.wake.as_ref().map(|wake| WakeView {
            phase: wake.phase,
            failed: wake.failed,
            since_wall_ms: wake.since_wall,
        })
    }
}
