//! Session, bridge, run and compaction events: the resets every part takes part in (docs/supervision.md,
//! "Arbitration", and the fixes B2 and B8).

use crate::supervisor::Supervisor;
use crate::supervisor::action::Action;
use crate::supervisor::compaction::COMPACTION_HOLD_LIMIT_MS;
use crate::supervisor::event::{CompactReason, CustomEntry};
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::time::Now;
use crate::supervisor::wake::CompactionEnd;

impl Supervisor {
    /// A new session (startup, reload, new, resume, fork): reset everything session-bound, forget the
    /// stalled-recovery budgets of this session, and re-arm its pending wakeups.
    pub(in crate::supervisor) fn on_session_start(
        &mut self,
        session_id: String,
        entries: &[CustomEntry],
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.connected = true;
        self.reset_post_compact_state("a new session started", now, out);
        self.drop_held_manual_poke("a new session started", now, out);
        self.session_id = Some(session_id);
        self.arbiter.forget_sent();
        self.sends.forget_wakeups();
        self.run.session_started();
        // Ghost tools of the previous session cannot be orphans of this one.
        self.tools.clear();
        // Calls under way died with the old session; the unattended stretch goes on (a restarted pi
        // resumes the same work: its repetitions still count).
        self.guard.forget_started();
        self.compaction.reset();
        self.recovery.reset(self.session_id.as_deref());
        self.stall.reset();
        // Before the wakeups: one that came due meanwhile must not fire into a stopped run.
        self.restore_stop(entries, now, out);
        self.restore_wakeups(entries, now, out);
        self.restore_limit_wait(entries, now, out);
    }

    /// `/tree`: pi-poke's state resets; recovery budgets and wakeups stay (X7).
    pub(in crate::supervisor) fn on_session_tree(&mut self, now: Now, out: &mut Vec<Action>) {
        self.reset_post_compact_state("you moved in the session tree", now, out);
    }

    /// WAK-T4 and POKE-E2: timers, tools and parked messages go; persisted wakeups come back at the next
    /// session start.
    pub(in crate::supervisor) fn on_session_shutdown(&mut self, now: Now, out: &mut Vec<Action>) {
        self.reset_post_compact_state("the session ended", now, out);
        self.drop_held_manual_poke("the session ended", now, out);
        self.tools.clear();
        self.wakeups.clear();
        self.provider.drop_timer();
        self.stall.reset();
        self.compaction.reset();
        self.run.lost_track();
    }

    pub(in crate::supervisor) fn on_bridge_connected(&mut self) {
        self.connected = true;
        // A new bridge instance: pi's state is unknown until its next event.
        self.run.lost_track();
        // POKE-E4: an end reported while no bridge listened is lost; a tool the old instance saw
        // start would stay forever (a ghost, and a false orphan). Tools started from now on are
        // watched as usual.
        self.tools.clear();
        self.guard.forget_started();
    }

    pub(in crate::supervisor) fn on_bridge_disconnected(
        &mut self,
        reason: &str,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.connected = false;
        self.run.lost_track();
        self.cancel_deferred(&format!("the bridge disconnected ({reason})"), now, out);
    }

    /// POKE-E5.
    pub(in crate::supervisor) fn on_agent_start(&mut self, now: Now, out: &mut Vec<Action>) {
        self.run.started();
        self.guard_agent_start(now, out);
        self.recovery.new_run();
        self.cancel_deferred("the agent started a new run", now, out);
        self.cancel_limit_wait("the agent started a new run", now, out);
        self.cancel_promise_ask("the agent started a new run", now, out);
    }

    /// POKE-E8 / POKE-E9: a compaction ended; an automatic one that interrupted work arms the wake.
    pub(in crate::supervisor) fn on_compaction_end(
        &mut self,
        end: CompactionEnd,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.compaction.end();
        if end.reason == CompactReason::Manual && self.compaction.handoff_in_flight() {
            let error = end.failed.then(|| {
                end.error
                    .unwrap_or_else(|| "the compaction did not complete".to_string())
            });
            self.finish_handoff(error.as_deref(), now, out);
            return;
        }
        if end.failed && end.aborted {
            // ARB-PARK: an aborted compaction is a stop (Esc); what waited for it does not go out.
            self.cancel_deferred("the compaction was aborted", now, out);
            return;
        }
        let declined = if end.reason == CompactReason::Manual {
            Some("manual compaction: you asked for it, nothing to resume".to_string())
        } else if !(end.will_retry || self.run.interrupted()) {
            Some("compaction after a run that had finished: nothing was interrupted".to_string())
        } else if !self.config.poke.enabled {
            Some("a compaction interrupted the work, but supervision is off".to_string())
        } else if !self.config.poke.post_compact_poke {
            Some("a compaction interrupted the work, but the post-compaction poke is off".to_string())
        } else {
            None
        };
        if let Some(reason) = declined {
            self.record(out, now, rule::POKE_WAKE_ARM, LedgerKind::Declined, reason, None);
            return;
        }
        let parked_wake = self
            .arbiter
            .parked()
            .is_some_and(|deferred| deferred.resume == crate::supervisor::arbiter::Resume::WakePoke);
        if parked_wake {
            self.cancel_deferred("a new compaction re-armed the wake", now, out);
        }
        self.post_compact.arm(end, now.wall_ms);
    }

    /// Session start, `/tree`, shutdown: forget the wake and the episode, and anything parked (fix B2).
    pub(in crate::supervisor) fn reset_post_compact_state(
        &mut self,
        why: &str,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.post_compact.reset();
        self.arbiter.reset();
        self.cancel_deferred(why, now, out);
        self.abandon_outcome(why, now, out);
        self.run.reset();
    }

    /// Tick: a compaction that never reported its end stops holding messages after a while.
    pub(in crate::supervisor) fn compaction_hold_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if self.compaction.expire(now.mono_ms) {
            let reason = format!(
                "no end of the compaction was reported for {} minutes; messages are no longer held",
                COMPACTION_HOLD_LIMIT_MS / 60_000
            );
            self.record(
                out,
                now,
                rule::ARB_COMPACTION_HOLD,
                LedgerKind::Declined,
                reason,
                None,
            );
        }
    }
}
