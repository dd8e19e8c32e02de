//! The stall watch [STALL-S1, STALL-R1, STALL-F1]: a run in flight with no sign of life for
//! `streamStallSeconds` is aborted by pokeshell, and its aborted settle resumes it (it is not the
//! user's Esc). Bounded per episode by the same maximum as the compaction pokes.

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, NotifyLevel};
use crate::supervisor::arbiter::{Resume, StopCause, stall_rule};
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::stall::{ABORT_SETTLE_LIMIT_MS, StallAbort, StallKind};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

/// The least silence taken for a stall while pi may be waiting to retry a failed request.
const RETRY_WAIT_FLOOR_MS: u64 = 60_000;

impl Supervisor {
    /// The watch is open: supervision on, the bridge there, a run in flight, no tool, no compaction.
    fn stall_watched(&self) -> Option<StallKind> {
        let open =
            self.config.poke.enabled && self.connected && self.tools.is_empty() && !self.compaction.active();
        if open { self.run.in_flight() } else { None }
    }

    /// The silence allowed now. After a run that ended on an error pi may be waiting to retry it (2,
    /// 4 and 8 s by default, and no event meanwhile): that wait is not taken for a stall.
    fn stall_limit(&self, kind: StallKind) -> Option<u64> {
        let limit = self.config.stall_ms()?;
        let retrying = kind == StallKind::Run && self.run.failed();
        Some(if retrying {
            limit.max(RETRY_WAIT_FLOOR_MS)
        } else {
            limit
        })
    }

    pub(in crate::supervisor) fn stall_deadline(&self) -> Option<u64> {
        let silence = self
            .stall_watched()
            .and_then(|kind| self.stall_limit(kind))
            .and_then(|limit| self.stall.deadline(limit));
        [silence, self.stall.frozen_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    pub(in crate::supervisor) fn stall_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        self.frozen_tick(now, out);
        let Some(kind) = self.stall_watched() else {
            return;
        };
        let Some(limit) = self.stall_limit(kind) else {
            return;
        };
        if self.stall.deadline(limit).is_none_or(|due| now.mono_ms < due) {
            return;
        }
        let seconds = self.stall.silence_s(now.mono_ms);
        let rule = stall_rule(kind);
        let what = match kind {
            StallKind::Stream => "the model's stream",
            StallKind::Run => "the run after its end",
        };
        let max = self.config.max_pokes();
        if self.stall.resumes() >= max {
            self.stall.give_up();
            let reason = format!(
                "{what} was silent for {seconds}s, but pokeshell already resumed {max} stall(s) in this episode"
            );
            self.give_up(out, now, rule, reason, texts::notify_stall_give_up(max));
            // The run the last resume started is left stalled: it will never settle, so its
            // outcome is judged now (simulation seed 1112: it was never recorded).
            if let Some((rule, reason)) = self.outcomes.stalled(seconds) {
                self.record(out, now, rule, LedgerKind::Outcome, reason, None);
            }
            return;
        }
        self.stall.aborting(kind, seconds, now.mono_ms);
        self.arbiter.self_aborted(StopCause::Stall);
        out.push(Action::Abort);
        let reason = format!("aborted the agent: {what} was silent for {seconds}s (no tool running)");
        self.record(out, now, rule, LedgerKind::Action, reason, None);
        out.push(Action::Notify {
            level: NotifyLevel::Error,
            text: texts::notify_stall_abort(kind == StallKind::Stream, seconds),
            desktop: true,
        });
    }

    /// STALL-F1: pokeshell's abort got no settle in time; pi looks frozen. Said once per abort.
    fn frozen_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        let Some(due) = self.stall.frozen_deadline() else {
            return;
        };
        let Some(abort) = self.stall.pending_abort().filter(|_| now.mono_ms >= due) else {
            return;
        };
        self.stall.report_frozen();
        let seconds = ABORT_SETTLE_LIMIT_MS / 1000;
        let reason =
            format!("pi did not settle {seconds}s after pokeshell aborted the stalled run: it looks frozen");
        self.record(out, now, rule::STALL_FROZEN, LedgerKind::Declined, reason, None);
        out.push(Action::Unresponsive {
            aborted_mono_ms: abort.at_mono,
        });
        out.push(Action::Notify {
            level: NotifyLevel::Error,
            text: texts::notify_frozen(seconds),
            desktop: true,
        });
    }

    /// The aborted settle of a stall abort: it resumes the run instead of stopping (ARB-ABORT does not
    /// apply: the user did not stop it).
    pub(in crate::supervisor) fn settle_after_stall(
        &mut self,
        abort: StallAbort,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.arbiter.claim();
        let resume = Resume::Stall {
            kind: abort.kind,
            seconds: abort.seconds,
        };
        self.dispatch(resume, now, out);
    }
}
