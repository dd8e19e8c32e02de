//! pi-poke's post-compaction wake (spec §1.6, with the newer upstream N1–N5): an automatic compaction
//! that interrupted work arms a wake; the next turn moves it to watching; the settle decides to poke
//! or to clear. The episode counter and cooldown are shared with the orphaned-tool poke.

use super::Supervisor;
use super::action::Action;
use super::arbiter::{Claim, Resume};
use super::event::CompactReason;
use super::ledger::{LedgerKind, rule};
use super::texts;
use super::time::Now;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakePhase {
    /// A compaction interrupted work; no turn has started since.
    Armed,
    /// A turn started after the compaction; its run is being judged.
    Watching,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Wake {
    pub phase: WakePhase,
    pub failed: bool,
    pub error: Option<String>,
    pub tokens_before: Option<u64>,
    pub since_wall: u64,
}

/// pi-poke's stall episode: pokes sent and when the last went out.
#[derive(Clone, Debug, Default)]
pub(crate) struct Episode {
    pub pokes: u32,
    pub last_poke_mono: Option<u64>,
}

/// What ended a compaction, for [`Supervisor::on_compaction_end`].
pub(crate) struct CompactionEnd {
    pub reason: CompactReason,
    pub will_retry: bool,
    pub failed: bool,
    pub aborted: bool,
    pub error: Option<String>,
    pub tokens_before: Option<u64>,
}

impl Supervisor {
    pub(super) fn on_compact_start(&mut self, now: Now) {
        self.compaction.active = true;
        self.compaction.since_mono = now.mono_ms;
    }

    /// POKE-E8 / POKE-E9.
    pub(super) fn on_compaction_end(&mut self, end: CompactionEnd, now: Now, out: &mut Vec<Action>) {
        self.compaction.active = false;
        if end.reason == CompactReason::Manual && self.compaction.handoff_in_flight {
            let error = end.failed.then(|| {
                end.error
                    .unwrap_or_else(|| "the compaction did not complete".to_string())
            });
            self.finish_handoff(error.as_deref(), now, out);
            return;
        }
        if end.failed && end.aborted {
            return;
        }
        if end.reason == CompactReason::Manual {
            self.record(
                out,
                now,
                rule::POKE_WAKE_ARM,
                LedgerKind::Declined,
                "manual compaction: you asked for it, nothing to resume".to_string(),
                None,
            );
            return;
        }
        if !(end.will_retry || self.run.interrupted()) {
            self.record(
                out,
                now,
                rule::POKE_WAKE_ARM,
                LedgerKind::Declined,
                "compaction after a run that had finished: nothing was interrupted".to_string(),
                None,
            );
            return;
        }
        let off = if !self.config.poke.enabled {
            Some("supervision is off")
        } else if !self.config.poke.post_compact_poke {
            Some("the post-compaction poke is off")
        } else {
            None
        };
        if let Some(off) = off {
            let reason = format!("a compaction interrupted the work, but {off}");
            self.record(out, now, rule::POKE_WAKE_ARM, LedgerKind::Declined, reason, None);
            return;
        }
        if matches!(self.arbiter.deferred.as_ref(), Some(deferred) if deferred.resume == Resume::WakePoke) {
            self.cancel_deferred("a new compaction re-armed the wake", now, out);
        }
        self.wake = Some(Wake {
            phase: WakePhase::Armed,
            failed: end.failed,
            error: end.error,
            tokens_before: end.tokens_before,
            since_wall: now.wall_ms,
        });
    }

    /// POKE-W3.
    pub(super) fn wake_saw_turn(&mut self) {
        if let Some(wake) = &mut self.wake {
            wake.phase = WakePhase::Watching;
        }
    }

    /// POKE-W4 in the order of N3. Returns whether a wake was handled (else POKE-O2 runs) and its claim.
    pub(super) fn evaluate_wake(&mut self, now: Now, out: &mut Vec<Action>) -> (bool, Option<Claim>) {
        let Some(wake) = &self.wake else {
            return (false, None);
        };
        if !self.config.poke.post_compact_poke {
            self.wake = None;
            return (false, None);
        }
        let resumed_and_failed = self.run.failed();
        if wake.phase == WakePhase::Watching && !resumed_and_failed {
            self.episode.pokes = 0;
            self.wake = None;
            self.record(
                out,
                now,
                rule::POKE_WAKE,
                LedgerKind::Declined,
                "the run after the compaction ended normally: no poke needed".to_string(),
                None,
            );
            return (true, None);
        }
        if self.episode.pokes >= self.config.max_pokes() {
            self.give_up_wake(now, out);
            return (
                true,
                Some(Claim::Quiet {
                    rule: rule::POKE_WAKE,
                }),
            );
        }
        (true, Some(Claim::Inject(Resume::WakePoke)))
    }

    /// The anti-loop maximum is reached: drop the wake and tell the user.
    pub(super) fn give_up_wake(&mut self, now: Now, out: &mut Vec<Action>) {
        self.wake = None;
        let max = self.config.max_pokes();
        let reason = format!("the agent is still stalled, but {max} pokes were sent in this episode already");
        self.give_up(out, now, rule::POKE_WAKE, reason, texts::notify_poke_limit(max));
    }

    /// Session start, `/tree`, shutdown: forget the wake and the episode, and anything parked (fix B2).
    pub(super) fn reset_post_compact_state(&mut self, why: &str, now: Now, out: &mut Vec<Action>) {
        self.wake = None;
        self.episode = Episode::default();
        self.arbiter.last_injection_mono = None;
        self.arbiter.resume_shown = false;
        self.arbiter.stopped = None;
        self.arbiter.self_abort = None;
        self.arbiter.settle_claimed = false;
        self.arbiter.injected_since_settle = false;
        self.cancel_deferred(why, now, out);
        self.abandon_outcome(why, now, out);
        self.run.phase = super::state::RunPhase::Idle;
        self.run.last_stop = None;
        self.run.last_error = None;
    }
}
