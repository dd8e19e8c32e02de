//! `agent_settled`: every rule looks at the same moment and at most one resume message goes out
//! (docs/supervision.md, "Arbitration"). Priority: the user's abort, then a guard rail's pause or
//! ladder (GUARD-*), then the loop guard, then the
//! post-compaction wake, then a provider limit's resume, then the empty-reply retry, then the promise
//! poke; the orphaned-tool poke acts between settles. A rule
//! that loses keeps its counters untouched.

use crate::supervisor::Supervisor;
use crate::supervisor::action::Action;
use crate::supervisor::arbiter::{Claim, GiveUp, Resume, StopCause};
use crate::supervisor::event::ContextUsage;
use crate::supervisor::flow::promise::promise_verdict;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::limit::Plan;
use crate::supervisor::message::{Message, Role, last_visible};
use crate::supervisor::recovery::emptiness::evaluate_empty;
use crate::supervisor::texts;
use crate::supervisor::time::Now;
use crate::supervisor::wake::WakeVerdict;

pub(crate) struct Settle {
    pub aborted: bool,
    pub is_idle: bool,
    pub context_usage: Option<ContextUsage>,
    pub tail: Vec<Message>,
    pub final_text: Option<String>,
}

impl Supervisor {
    pub(in crate::supervisor) fn on_settled(&mut self, settle: Settle, now: Now, out: &mut Vec<Action>) {
        self.run.settled(settle.is_idle);
        self.context = settle.context_usage;
        let aborted = settle.aborted || last_visible(&settle.tail).is_some_and(Message::is_aborted_assistant);
        self.judge_outcome(aborted, &settle.tail, now, out);
        let cause = self.arbiter.new_settle();
        let stall_abort = self.stall.settled();
        self.cancel_deferred("the agent settled again before it went out", now, out);
        if !self.config.poke.enabled {
            self.explain_disabled_settle(&settle, out, now);
            return;
        }
        if aborted {
            // A stopped run is nobody's progress: the pokes before it are not judged.
            self.guard.pokes.clear();
            match stall_abort {
                Some(abort) if cause == StopCause::Stall => self.settle_after_stall(abort, now, out),
                _ => self.settle_aborted(cause, now, out),
            }
            return;
        }
        if !self.run.failed() {
            self.stall.end_episode();
        }
        if let Some(why) = self.guard_holds() {
            let rule = self
                .guard
                .halt
                .as_ref()
                .map_or(rule::GUARD_BUDGET, |h| h.cause.rule());
            let reason = format!("the agent settled, but {why}: nothing resumes it");
            self.record(out, now, rule, LedgerKind::Declined, reason, None);
            return;
        }

        let guard_claim = self.evaluate_guard(&settle, now, out);
        let loop_claim = self.evaluate_loop(&settle.tail, now, out);
        let (wake_handled, wake_claim) = self.evaluate_wake(now, out);
        if !wake_handled {
            self.close_episode_unless_orphaned(now);
        }
        // Only a planned resume claims the settle; a notice (no resume) leaves the settle to the other
        // rules, the orphaned-tool poke included, and is given only when none of them acts.
        let (limit_claim, mut limit_notice) = match self.evaluate_limit(now, out) {
            Some(
                claim @ Claim::Limit {
                    plan: Plan::Resume { .. },
                    ..
                },
            ) => (Some(claim), None),
            other => (None, other),
        };
        let retry_claim = self.evaluate_retry(&settle.tail);
        let promise_claim = self.evaluate_promise(&settle, now, out);

        let mut claims = [
            guard_claim,
            loop_claim,
            wake_claim,
            limit_claim,
            retry_claim,
            promise_claim,
        ]
        .into_iter()
        .flatten();
        if let Some(winner) = claims.next() {
            self.arbiter.claim();
            let winner_rule = winner.rule();
            // ARB-LOSE: a rule that loses records it and changes nothing.
            for loser in claims.chain(limit_notice.take()) {
                let lost = match &loser {
                    Claim::Inject(resume) => Some((resume.rule(), resume.describe())),
                    Claim::GiveUp(give_up) => Some((give_up.rule(), give_up.describe().to_string())),
                    Claim::Limit { kind, .. } => Some((
                        loser.rule(),
                        format!(
                            "the plan for the {}",
                            crate::supervisor::provider_wait::kind_label(*kind)
                        ),
                    )),
                    Claim::Quiet { .. } => None,
                };
                if let Some((rule, what)) = lost {
                    let reason = format!("{what} was pre-empted by {winner_rule}");
                    self.record(out, now, rule, LedgerKind::Declined, reason, None);
                }
            }
            if winner.tells_agent_to_stop() && self.post_compact.drop_wake() {
                let reason =
                    "the post-compaction wake is dropped: the loop guard told the agent to stop".to_string();
                self.record(out, now, rule::POKE_WAKE, LedgerKind::Declined, reason, None);
            }
            match winner {
                Claim::Inject(resume) => self.dispatch(resume, now, out),
                Claim::GiveUp(give_up) => self.give_up_settle(give_up, now, out),
                Claim::Limit { plan, kind, error } => self.settle_on_limit(plan, kind, &error, now, out),
                Claim::Quiet { .. } => {}
            }
            return;
        }
        if let Some(Claim::Limit { plan, kind, error }) = limit_notice {
            self.settle_on_limit(plan, kind, &error, now, out);
        }
        if !self.post_compact.armed() {
            self.evaluate_handoff(settle.is_idle, now, out);
        }
    }

    /// Fix B5/B6 and SAR-S2: the user's Esc (or pokeshell's own abort) ends the episode without a resume.
    fn settle_aborted(&mut self, cause: StopCause, now: Now, out: &mut Vec<Action>) {
        self.recovery.reset(self.session_id.as_deref());
        self.arbiter.stop(cause);
        if cause == StopCause::User {
            self.save_stop(out);
        }
        let had_wake = self.post_compact.drop_wake();
        let who = cause.who();
        let reason = if had_wake {
            format!(
                "{who} stopped the run: the pending post-compaction resume is dropped; nothing resumes until you type"
            )
        } else {
            format!("{who} stopped the run: nothing resumes until you type")
        };
        self.record(out, now, rule::ARB_ABORTED, LedgerKind::Declined, reason, None);
        self.cancel_limit_wait("the run was stopped", now, out);
    }

    /// POKE-W4 in the order of N3. Returns whether a wake was handled (else POKE-O2 runs) and its claim.
    fn evaluate_wake(&mut self, now: Now, out: &mut Vec<Action>) -> (bool, Option<Claim>) {
        let verdict = self.post_compact.judge(
            self.config.poke.post_compact_poke,
            self.run.failed(),
            self.config.max_pokes(),
        );
        match verdict {
            WakeVerdict::NoWake => (false, None),
            WakeVerdict::Healthy => {
                let reason = "the run after the compaction ended normally: no poke needed".to_string();
                self.record(out, now, rule::POKE_WAKE, LedgerKind::Declined, reason, None);
                (true, None)
            }
            WakeVerdict::GiveUp => (true, Some(Claim::GiveUp(GiveUp::Wake))),
            WakeVerdict::Poke => (true, Some(Claim::Inject(Resume::WakePoke))),
        }
    }

    /// A give-up that won the settle: the rule resets its count and tells the user.
    fn give_up_settle(&mut self, give_up: GiveUp, now: Now, out: &mut Vec<Action>) {
        match give_up {
            GiveUp::Wake => {
                self.post_compact.drop_wake();
                self.announce_wake_give_up(now, out);
            }
            GiveUp::Retry { reason } => {
                let max = self.config.recovery.max_retries;
                self.recovery.reset_retries(self.session_id.as_deref());
                let why = format!(
                    "{}; {max} retries were sent already, so pokeshell stops retrying",
                    reason.reason()
                );
                let notice = texts::notify_retry_give_up(max);
                self.give_up(out, now, rule::SAR_RETRY_GIVE_UP, why, notice);
            }
        }
    }

    /// The anti-loop maximum is reached (the wake is already dropped): tell the user.
    pub(in crate::supervisor) fn announce_wake_give_up(&mut self, now: Now, out: &mut Vec<Action>) {
        let max = self.config.max_pokes();
        let reason = format!("the agent is still stalled, but {max} pokes were sent in this episode already");
        self.give_up(out, now, rule::POKE_WAKE, reason, texts::notify_poke_limit(max));
    }

    /// POKE-O2: a settle without a wake closes the episode unless an overdue, un-poked tool of a failed
    /// run is pending (then the orphan poke still has to act).
    fn close_episode_unless_orphaned(&mut self, now: Now) {
        let stalled_orphan = self.tools.stalled(now.mono_ms, self.config.threshold_ms());
        if !(self.run.failed() && stalled_orphan) {
            self.post_compact.end_episode();
        }
    }

    /// While supervision is off nothing acts; say so where a rule would have acted.
    fn explain_disabled_settle(&mut self, settle: &Settle, out: &mut Vec<Action>, now: Now) {
        if settle.aborted {
            return;
        }
        if let Some(last) = last_visible(&settle.tail) {
            let failing_tool = last.role == Role::ToolResult && last.is_error;
            let stalled = if failing_tool {
                Some((rule::SAR_LOOP, "the run ended on a failed tool call"))
            } else if evaluate_empty(Some(last)).is_some() {
                Some((rule::SAR_RETRY, "the run ended without a reply"))
            } else {
                None
            };
            if let Some((stalled_rule, what)) = stalled {
                let reason = format!("{what}, but supervision is off");
                self.record(out, now, stalled_rule, LedgerKind::Declined, reason, None);
            } else if let Some(step) = promise_verdict(&settle.tail, settle.final_text.as_deref()).step() {
                let reason =
                    format!("the run ended on an announced step (\"{step}\"), but supervision is off");
                self.record(out, now, rule::PROM_DETECT, LedgerKind::Declined, reason, None);
            }
        }
        let percent = self.context.and_then(|usage| usage.percent);
        if let Some(percent) = percent.filter(|percent| *percent >= self.config.handoff_percent()) {
            let reason = format!("context at {percent:.0}%, but supervision is off");
            self.record(out, now, rule::HO_AUTO, LedgerKind::Declined, reason, None);
        }
    }
}
