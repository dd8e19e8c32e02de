//! Session, bridge, run and user events: the bookkeeping every component shares (spec §5.3 item 7 for
//! the unified resets).

use super::Supervisor;
use super::action::{Action, NotifyLevel};
use super::delivery::Sent;
use super::event::{CustomEntry, InputSource};
use super::ledger::{LedgerKind, rule};
use super::message::StopReason;
use super::state::{Compaction, RunPhase};
use super::texts;
use super::time::Now;

/// A compaction that sends no end event for this long is taken as over, so nothing waits forever.
pub const COMPACTION_HOLD_LIMIT_MS: u64 = 10 * 60 * 1000;

impl Supervisor {
    /// A new session (startup, reload, new, resume, fork): reset everything session-bound, forget the
    /// stalled-recovery budgets of this session, and re-arm its pending wakeups.
    pub(super) fn on_session_start(
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
        self.run.known = true;
        self.run.starting = false;
        self.run.busy_after_settle = false;
        // Ghost tools of the previous session cannot be orphans of this one.
        self.tools.clear();
        self.compaction = Compaction::default();
        self.recovery.reset(self.session_id.as_deref());
        self.restore_wakeups(entries, now, out);
    }

    /// `/tree`: pi-poke's state resets; recovery budgets and wakeups stay (X7).
    pub(super) fn on_session_tree(&mut self, now: Now, out: &mut Vec<Action>) {
        self.reset_post_compact_state("you moved in the session tree", now, out);
    }

    /// WAK-T4 and POKE-E2: timers, tools and parked messages go; persisted wakeups come back at the next
    /// session start.
    pub(super) fn on_session_shutdown(&mut self, now: Now, out: &mut Vec<Action>) {
        self.reset_post_compact_state("the session ended", now, out);
        self.drop_held_manual_poke("the session ended", now, out);
        self.tools.clear();
        self.wakeups.pending.clear();
        self.compaction = Compaction::default();
        self.run.known = false;
    }

    pub(super) fn on_bridge_connected(&mut self) {
        self.connected = true;
        // A new bridge instance: pi's state is unknown until its next event.
        self.run.known = false;
    }

    pub(super) fn on_bridge_disconnected(&mut self, reason: &str, now: Now, out: &mut Vec<Action>) {
        self.connected = false;
        self.run.known = false;
        self.cancel_deferred(&format!("the bridge disconnected ({reason})"), now, out);
    }

    /// POKE-E5.
    pub(super) fn on_agent_start(&mut self, now: Now, out: &mut Vec<Action>) {
        self.run.started();
        self.recovery.in_run = None;
        self.cancel_deferred("the agent started a new run", now, out);
    }

    /// POKE-E6.
    pub(super) fn on_agent_end(&mut self, stop_reason: Option<StopReason>, error_message: Option<String>) {
        self.run.phase = RunPhase::BetweenRuns;
        self.run.known = true;
        if stop_reason.is_some() {
            self.run.last_stop = stop_reason;
            self.run.last_error = error_message;
        }
    }

    /// POKE-E7 and the outcome tracker.
    pub(super) fn on_turn_start(&mut self) {
        self.wake_saw_turn();
        self.outcome_saw_turn();
    }

    /// POKE-E11 as fixed upstream (N1, fix B1): only the user's own input cancels and resets.
    pub(super) fn on_input(&mut self, source: InputSource, now: Now, out: &mut Vec<Action>) {
        if !source.is_user() {
            return;
        }
        if self.wake.take().is_some() {
            let reason = "you typed: the pending post-compaction resume is cancelled".to_string();
            self.record(out, now, rule::POKE_INPUT, LedgerKind::Declined, reason, None);
        }
        self.episode.pokes = 0;
        self.arbiter.stopped = None;
        self.arbiter.resume_shown = false;
        // Fix B8: the dead run's stop reason is no stall evidence once the user took over.
        self.run.last_stop = None;
        self.run.last_error = None;
        self.cancel_deferred("you typed", now, out);
        self.abandon_outcome("you typed before the agent settled", now, out);
    }

    /// POKE-P1: works whatever the toggles say; cancels the wake and resets the episode counter.
    pub(super) fn on_manual_poke(&mut self, now: Now, out: &mut Vec<Action>) {
        self.wake = None;
        self.episode.pokes = 0;
        self.arbiter.stopped = None;
        self.cancel_deferred("you poked by hand", now, out);
        if !self.connected {
            self.refuse(
                out,
                now,
                rule::POKE_MANUAL,
                texts::notify_not_connected("No poke sent"),
            );
            return;
        }
        if self.compaction.active {
            self.held_manual_poke = Some(now.mono_ms);
            let reason = "manual poke held until the running compaction ends".to_string();
            self.record(out, now, rule::POKE_MANUAL, LedgerKind::Declined, reason, None);
            out.push(Action::Notify {
                level: NotifyLevel::Info,
                text: texts::notify_manual_poke_held(),
                desktop: false,
            });
            return;
        }
        self.send_manual_poke(now, out);
    }

    fn send_manual_poke(&mut self, now: Now, out: &mut Vec<Action>) {
        let text = texts::manual_poke();
        self.send(
            out,
            texts::CT_POKE,
            text.clone(),
            false,
            super::action::DeliverAs::Steer,
            Sent::ManualPoke,
        );
        self.record(
            out,
            now,
            rule::POKE_MANUAL,
            LedgerKind::Action,
            "you poked the agent".to_string(),
            Some(text),
        );
        out.push(Action::Notify {
            level: NotifyLevel::Info,
            text: texts::notify_manual_poke(),
            desktop: false,
        });
    }

    /// Tick: a manual poke held by a compaction goes out once the compaction is over.
    pub(super) fn held_manual_poke_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if self.held_manual_poke.is_none() || self.compaction.active {
            return;
        }
        self.held_manual_poke = None;
        if self.connected {
            self.send_manual_poke(now, out);
        } else {
            let text = texts::notify_not_connected("The held poke was dropped");
            self.refuse(out, now, rule::POKE_MANUAL, text);
        }
    }

    pub(super) fn held_manual_poke_deadline(&self) -> Option<u64> {
        if self.compaction.active {
            None
        } else {
            self.held_manual_poke
        }
    }

    fn drop_held_manual_poke(&mut self, why: &str, now: Now, out: &mut Vec<Action>) {
        if self.held_manual_poke.take().is_some() {
            let reason = format!("the held manual poke was dropped: {why}");
            self.record(out, now, rule::POKE_MANUAL, LedgerKind::Declined, reason, None);
        }
    }

    /// Tick: a compaction that never reported its end stops holding messages after a while.
    pub(super) fn compaction_hold_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if self.compaction.active && now.mono_ms >= self.compaction_hold_deadline().unwrap_or(u64::MAX) {
            self.compaction = Compaction::default();
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

    pub(super) fn compaction_hold_deadline(&self) -> Option<u64> {
        self.compaction.active.then(|| {
            self.compaction
                .since_mono
                .saturating_add(COMPACTION_HOLD_LIMIT_MS)
        })
    }
}
