//! Provider errors after pi's own retries [LIMIT-W1, LIMIT-N1, LIMIT-R1]: a run that settles on an
//! error is read with `limit::classify`; `limit::plan` says when to resume. The resume waits for the
//! planned time (shown as a countdown), goes out as a hidden poke, and obeys the arbiter: one message
//! per settle, nothing after Esc, held while a compaction runs. Typing, Esc or a manual poke end the
//! wait; it is saved in the session so a restarted pokeshell re-arms it.

use serde_json::json;

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, NotifyLevel};
use crate::supervisor::arbiter::Claim;
use crate::supervisor::delivery::Sent;
use crate::supervisor::event::CustomEntry;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::limit::{self, ErrorKind, NotifyWhy, Plan, ResumeSource};
use crate::supervisor::provider_wait::{LimitWait, countdown, first_line, kind_label};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

impl Supervisor {
    /// At a settle: the claim of a run that ended on a provider error. An error pokeshell cannot read
    /// is left to the other rules (it may be an orphaned tool's run, or a compaction's).
    pub(in crate::supervisor) fn evaluate_limit(&mut self, now: Now, out: &mut Vec<Action>) -> Option<Claim> {
        let Some(error) = self.run.provider_error().map(str::to_string) else {
            self.provider.end_streak();
            self.circuit_recovered(out);
            return None;
        };
        let max_minutes = self.config.poke.provider_retry_max_minutes;
        if max_minutes == 0 {
            let reason =
                "the run ended on an error; waiting for provider limits is off (providerRetryMaxMinutes 0)";
            self.record(
                out,
                now,
                rule::LIMIT_NOTIFY,
                LedgerKind::Declined,
                reason.to_string(),
                None,
            );
            return None;
        }
        let classified = limit::classify(&error, now.wall_ms, self.utc_offset_secs);
        let plan = limit::plan(&classified, self.provider.streak(), now.wall_ms, max_minutes);
        if plan
            == (Plan::Notify {
                why: NotifyWhy::Unrecognised,
            })
        {
            let reason = format!(
                "the run ended on an error pokeshell does not recognise as a provider limit (\"{}\"): no wait planned",
                first_line(&error)
            );
            self.record(out, now, rule::LIMIT_NOTIFY, LedgerKind::Declined, reason, None);
            return None;
        }
        Some(Claim::Limit {
            plan,
            kind: classified.kind,
            error,
        })
    }

    /// The limit rule won the settle.
    pub(in crate::supervisor) fn settle_on_limit(
        &mut self,
        plan: Plan,
        kind: ErrorKind,
        error: &str,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let line = first_line(error);
        let label = kind_label(kind);
        match plan {
            Plan::Resume { at_wall_ms, source } => {
                let wait_ms = at_wall_ms.saturating_sub(now.wall_ms);
                let wait = LimitWait {
                    kind,
                    error_line: line.clone(),
                    armed_wall: now.wall_ms,
                    at_wall: at_wall_ms,
                    due_mono: now.mono_ms.saturating_add(wait_ms),
                    source,
                };
                let data = self.provider.arm(wait);
                out.push(Action::AppendEntry {
                    custom_type: texts::ENTRY_LIMIT_WAIT,
                    data,
                });
                self.circuit_failed(label, at_wall_ms, out);
                let whence = match source {
                    ResumeSource::Hint => "the reset time the provider named",
                    ResumeSource::Ladder => "pokeshell's backoff ladder",
                };
                let reason = format!(
                    "the run ended on a {label} after pi's retries (\"{line}\"): resume in {} ({whence})",
                    countdown(wait_ms)
                );
                self.record(out, now, rule::LIMIT_WAIT, LedgerKind::Action, reason, None);
                out.push(Action::Notify {
                    level: NotifyLevel::Warning,
                    text: texts::notify_limit_wait(label, &countdown(wait_ms)),
                    desktop: true,
                });
            }
            Plan::Notify { why } => {
                let why = match why {
                    NotifyWhy::Fatal => "waiting cannot fix it".to_string(),
                    NotifyWhy::UsageLimitWithoutReset => "a usage limit with no reset time".to_string(),
                    NotifyWhy::ResetBeyondBudget { reset_at_wall_ms } => format!(
                        "the reset is {} away, beyond providerRetryMaxMinutes",
                        countdown(reset_at_wall_ms.saturating_sub(now.wall_ms))
                    ),
                    NotifyWhy::Unrecognised => "an error pokeshell does not recognise".to_string(),
                };
                self.provider.end_streak();
                let reason = format!("the run ended on a {label} (\"{line}\"): not resumed, {why}");
                let notice = texts::notify_limit_stop(&format!("{line} ({why})"));
                self.give_up(out, now, rule::LIMIT_NOTIFY, reason, notice);
            }
            Plan::GiveUp => {
                let max = self.config.poke.provider_retry_max_minutes;
                self.provider.end_streak();
                let reason = format!(
                    "the run ended on a {label} again (\"{line}\"): the {max}-minute wait budget is spent"
                );
                let notice = texts::notify_limit_stop(&format!("{line} (waited {max} minutes in all)"));
                self.give_up(out, now, rule::LIMIT_NOTIFY, reason, notice);
            }
        }
    }

    /// Why a due wait does not resume yet, if it is held.
    pub(in crate::supervisor) fn limit_held(&self) -> Option<&'static str> {
        if self.circuit_held().is_some() {
            // GUARD-K1: another session probes first.
            return Some("another session probes the provider first");
        }
        self.planned_message_held("the agent was stopped (Esc)")
    }

    pub(in crate::supervisor) fn limit_deadline(&self) -> Option<u64> {
        let wait = self.provider.wait()?;
        self.limit_held().is_none().then_some(wait.due_mono)
    }

    /// LIMIT-W1: the planned time has come; resume the agent.
    pub(in crate::supervisor) fn limit_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if self.limit_deadline().is_none_or(|due| now.mono_ms < due) {
            return;
        }
        let Some(wait) = self.provider.take() else {
            return;
        };
        self.provider.count_resume();
        out.push(Action::AppendEntry {
            custom_type: texts::ENTRY_LIMIT_DONE,
            data: json!({ "reason": "resumed" }),
        });
        let label = kind_label(wait.kind);
        let waited_s = now.wall_ms.saturating_sub(wait.armed_wall) / 1000;
        let text = texts::limit_resume(label, &wait.error_line, waited_s);
        self.arbiter.injected(now.mono_ms, true);
        let deliver_as = self.auto_deliver_as();
        let rule = rule::LIMIT_WAIT;
        let send_id = self.send(
            out,
            texts::CT_POKE,
            text.clone(),
            false,
            deliver_as,
            Sent::Resume { rule },
        );
        self.outcomes
            .expect(rule, send_id, self.run.awaiting_start(), now.mono_ms);
        let reason = format!("the {label} wait is over: resumed the agent");
        self.record(out, now, rule, LedgerKind::Action, reason, Some(text));
        out.push(Action::Notify {
            level: NotifyLevel::Info,
            text: texts::notify_limit_resume(label),
            desktop: true,
        });
    }

    /// The user (or another start) took over: the planned resume is dropped, in the session too.
    pub(in crate::supervisor) fn cancel_limit_wait(&mut self, why: &str, now: Now, out: &mut Vec<Action>) {
        let Some(wait) = self.provider.take() else {
            return;
        };
        self.circuit_left(out);
        out.push(Action::AppendEntry {
            custom_type: texts::ENTRY_LIMIT_DONE,
            data: json!({ "reason": why }),
        });
        let reason = format!(
            "the planned resume after the {} is cancelled: {why}",
            kind_label(wait.kind)
        );
        self.record(out, now, rule::LIMIT_WAIT, LedgerKind::Declined, reason, None);
    }

    /// LIMIT-R1: a wait saved in the session comes back (one already due resumes at the next tick).
    pub(in crate::supervisor) fn restore_limit_wait(
        &mut self,
        entries: &[CustomEntry],
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let Some(wait) = self.provider.restore(entries, now.mono_ms, now.wall_ms) else {
            return;
        };
        let (kind, at_wall) = (kind_label(wait.kind), wait.at_wall);
        let reason = format!(
            "re-armed the planned resume after a {} from the session: due in {}",
            kind_label(wait.kind),
            countdown(wait.at_wall.saturating_sub(now.wall_ms))
        );
        self.record(out, now, rule::LIMIT_RESTORE, LedgerKind::Action, reason, None);
        self.circuit_failed(kind, at_wall, out);
    }
}
