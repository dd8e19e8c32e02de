//! What the clock drives between events: the long-tool monitor and auto-abort [POKE-M2, POKE-M3], the
//! orphaned-tool poke [POKE-O1], and the follow-up record of a resume that no turn answered.

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, NotifyLevel};
use crate::supervisor::arbiter::{Resume, StopCause};
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::message::Message;
use crate::supervisor::texts;
use crate::supervisor::time::Now;

impl Supervisor {
    /// POKE-M2, POKE-M3.
    pub(in crate::supervisor) fn monitor_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if !self.config.poke.enabled {
            return;
        }
        let threshold_s = self.config.poke.threshold_seconds;
        let abort = self.config.poke.auto_abort && self.connected;
        let overdue = self.tools.breach(now.mono_ms, self.config.threshold_ms());
        let abort_now = abort && !overdue.is_empty();
        for tool in overdue {
            if abort {
                self.tools.end(&tool.id);
                let reason = format!(
                    "aborted the agent: {} ran {}s, past the {threshold_s}s threshold",
                    tool.name, tool.elapsed_s
                );
                self.record(out, now, rule::POKE_AUTO_ABORT, LedgerKind::Action, reason, None);
                out.push(Action::Notify {
                    level: NotifyLevel::Error,
                    text: texts::notify_auto_abort(&tool.name, threshold_s),
                    desktop: true,
                });
            } else {
                let why = if self.config.poke.auto_abort {
                    "the bridge is not connected"
                } else {
                    "auto-abort is off"
                };
                let reason = format!(
                    "{} passed the {threshold_s}s threshold; watching without acting ({why})",
                    tool.name
                );
                self.record(out, now, rule::POKE_BREACH, LedgerKind::Declined, reason, None);
            }
        }
        // ctx.abort() stops the whole agent: one abort covers every overdue tool of this tick.
        if abort_now {
            out.push(Action::Abort);
            self.arbiter.self_aborted(StopCause::AutoAbort);
        }
    }

    /// POKE-E4 after lost lines: a tool pi no longer lists ended while its end was lost. It is
    /// forgotten quietly; it must not pass for an orphan.
    pub(in crate::supervisor) fn forget_ghost_tools(
        &mut self,
        running: &[String],
        now: Now,
        out: &mut Vec<Action>,
    ) {
        for (id, name) in self.tools.keep_only(running) {
            let reason =
                format!("forgot {name} ({id}): pi no longer runs it, and its end was lost on the way");
            self.record(out, now, rule::POKE_TOOL_END, LedgerKind::Declined, reason, None);
        }
    }

    pub(in crate::supervisor) fn monitor_deadline(&self) -> Option<u64> {
        if !self.config.poke.enabled {
            return None;
        }
        self.tools.breach_deadline(self.config.threshold_ms())
    }

    /// POKE-O1 conditions 1–4 and the arbiter's, everything but the clock.
    fn orphan_watch_open(&self) -> bool {
        let poke = &self.config.poke;
        poke.enabled
            && poke.auto_poke
            && !poke.auto_abort
            && !self.post_compact.armed()
            && self.run.settled_phase()
            && self.run.failed()
            && self.arbiter.parked().is_none()
            && !self.arbiter.injected_since_settle()
            && !self.arbiter.settle_claimed()
            && self.arbiter.stopped().is_none()
            && !self.compaction.active()
            && self.connected
            && self.guard_holds().is_none()
    }

    /// POKE-O1: a tool still running past the threshold after its run ended in error or length and the
    /// agent settled. Acts only when no rule owned the last settle and nothing was sent since.
    pub(in crate::supervisor) fn orphan_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if !self.orphan_watch_open() {
            return;
        }
        let Some((id, name)) = self.tools.orphan(now.mono_ms, self.config.threshold_ms()) else {
            return;
        };
        let max = self.config.max_pokes();
        if self.post_compact.pokes() >= max {
            self.tools.decline_orphan(&id);
            let reason = format!(
                "{name} outlived its interrupted run, but {max} pokes were sent in this episode already"
            );
            self.give_up(out, now, rule::POKE_ORPHAN, reason, texts::notify_poke_limit(max));
            return;
        }
        if now.mono_ms < self.resume_ready_at(true) {
            return;
        }
        self.commit_and_send(Resume::Orphan { tool_id: id }, now, out);
    }

    pub(in crate::supervisor) fn orphan_deadline(&self) -> Option<u64> {
        if !self.orphan_watch_open() {
            return None;
        }
        let overdue = self.tools.orphan_deadline(self.config.threshold_ms())?;
        if self.post_compact.pokes() >= self.config.max_pokes() {
            Some(overdue)
        } else {
            Some(overdue.max(self.resume_ready_at(true)))
        }
    }

    /// At a settle: what came of the last automatic resume.
    pub(in crate::supervisor) fn judge_outcome(
        &mut self,
        aborted: bool,
        tail: &[Message],
        now: Now,
        out: &mut Vec<Action>,
    ) {
        if let Some((rule, reason)) = self.outcomes.judge(aborted, tail) {
            self.record(out, now, rule, LedgerKind::Outcome, reason, None);
        }
    }

    /// The user or a session change took over before the agent settled.
    pub(in crate::supervisor) fn abandon_outcome(&mut self, why: &str, now: Now, out: &mut Vec<Action>) {
        if let Some(rule) = self.outcomes.abandon() {
            let reason = format!("unknown: {why}");
            self.record(out, now, rule, LedgerKind::Outcome, reason, None);
        }
    }

    pub(in crate::supervisor) fn outcome_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if let Some((rule, reason)) = self.outcomes.expire(now.mono_ms) {
            self.record(out, now, rule, LedgerKind::Outcome, reason, None);
        }
    }
}
