//! pi-stalled-agent-recovery (spec §2): the empty-reply retry and the failing-call loop guard.
//! The pure detectors live in the submodules; this file keeps the per-session budgets and turns a
//! settle's tail into a claim for the arbiter.

pub mod emptiness;
pub mod loop_guard;
pub mod signature;

use std::collections::HashMap;

use self::emptiness::evaluate_empty;
use self::loop_guard::{LoopDecision, ToolLoop, decide_loop_action, detect_tool_loop};
use super::Supervisor;
use super::action::{Action, DeliverAs, NotifyLevel};
use super::arbiter::{Claim, Resume};
use super::delivery::Sent;
use super::ledger::{LedgerKind, rule};
use super::message::{Message, Role, last_visible};
use super::texts;
use super::time::Now;

/// The budgets of one session (SAR-S7, SAR-L4).
#[derive(Clone, Debug, Default)]
pub(crate) struct Budgets {
    /// Retries sent for the current empty-reply occurrence.
    pub retries: u32,
    /// Per loop signature: the last nudge number (or crossing, after giving up).
    pub loop_nudges: HashMap<String, u32>,
}

/// Budgets keyed by session id, as the original kept them.
#[derive(Debug, Default)]
pub(crate) struct Recovery {
    sessions: HashMap<String, Budgets>,
    /// The failure (signature and count) the loop guard last spoke about between turns. When the run
    /// then settles on that same failure, the message is already on its way: the settle stays quiet.
    pub(crate) in_run: Option<(String, u32)>,
}

const NO_SESSION: &str = "default";

impl Recovery {
    pub(crate) fn budgets(&self, session: Option<&str>) -> Option<&Budgets> {
        self.sessions.get(session.unwrap_or(NO_SESSION))
    }

    pub(crate) fn budgets_mut(&mut self, session: Option<&str>) -> &mut Budgets {
        self.sessions
            .entry(session.unwrap_or(NO_SESSION).to_string())
            .or_default()
    }

    /// SAR-S2, SAR-L5: a text reply, an aborted run or a new session forgets both budgets.
    pub(crate) fn reset(&mut self, session: Option<&str>) {
        self.sessions.remove(session.unwrap_or(NO_SESSION));
    }
}

impl Supervisor {
    fn retries_used(&self) -> u32 {
        self.recovery
            .budgets(self.session_id.as_deref())
            .map_or(0, |budgets| budgets.retries)
    }

    fn last_nudge(&self, signature: &str) -> u32 {
        self.recovery
            .budgets(self.session_id.as_deref())
            .and_then(|budgets| budgets.loop_nudges.get(signature).copied())
            .unwrap_or(0)
    }

    fn store_nudge(&mut self, signature: &str, value: u32) {
        let session = self.session_id.clone();
        self.recovery
            .budgets_mut(session.as_deref())
            .loop_nudges
            .insert(signature.to_string(), value);
    }

    /// SAR-S4 + SAR-L4: a failing tool result at the end of the branch belongs to the loop guard.
    /// Whatever it decides, it owns the settle (X6).
    pub(super) fn evaluate_loop(
        &mut self,
        tail: &[Message],
        now: Now,
        out: &mut Vec<Action>,
    ) -> Option<Claim> {
        let last = last_visible(tail)?;
        if last.role != Role::ToolResult || !last.is_error {
            return None;
        }
        let found = detect_tool_loop(tail)?;
        if self.recovery.in_run.take() == Some((found.signature.clone(), found.count)) {
            let reason = format!(
                "{} failed {} times; the loop guard already spoke about this failure between turns",
                found.tool_name, found.count
            );
            self.record(out, now, rule::SAR_LOOP, LedgerKind::Declined, reason, None);
            return Some(Claim::Quiet { rule: rule::SAR_LOOP });
        }
        let threshold = self.config.recovery.effective_loop_threshold();
        let max = self.config.recovery.effective_max_loop_nudges();
        let last_nudge = self.last_nudge(&found.signature);
        match decide_loop_action(found.count, threshold, max, last_nudge) {
            LoopDecision::Nudge { number } => Some(Claim::Inject(Resume::Loop {
                signature: found.signature,
                tool: found.tool_name,
                count: found.count,
                nudge: Some(number),
                last: number == max,
            })),
            LoopDecision::GiveUp { crossing } => {
                self.give_up_loop(&found, crossing, max, now, out);
                Some(Claim::Quiet { rule: rule::SAR_LOOP })
            }
            LoopDecision::None { .. } if last_nudge >= max => {
                self.record(
                    out,
                    now,
                    rule::SAR_LOOP,
                    LedgerKind::Declined,
                    format!(
                        "{} failed {} times; the final nudge was sent already, so pokeshell stays quiet",
                        found.tool_name, found.count
                    ),
                    None,
                );
                Some(Claim::Quiet { rule: rule::SAR_LOOP })
            }
            LoopDecision::None { .. } => Some(Claim::Inject(Resume::Loop {
                signature: found.signature,
                tool: found.tool_name,
                count: found.count,
                nudge: None,
                last: false,
            })),
        }
    }

    /// SAR-L4 inside a run. pi keeps a run going after every tool result, so a model that repeats the
    /// same failing call may never settle; the loop guard also looks at each turn's end and steers its
    /// nudges in before the next model call. Continuations stay with the settle: inside a run the model
    /// sees each failure anyway. Nudge numbers are shared with the settle, so nothing is said twice.
    pub(super) fn on_turn_end(&mut self, tail: &[Message], now: Now, out: &mut Vec<Action>) {
        if !self.config.poke.enabled || self.compaction.active {
            return;
        }
        let Some(found) = detect_tool_loop(tail) else {
            return;
        };
        let threshold = self.config.recovery.effective_loop_threshold();
        let max = self.config.recovery.effective_max_loop_nudges();
        let last_nudge = self.last_nudge(&found.signature);
        match decide_loop_action(found.count, threshold, max, last_nudge) {
            LoopDecision::Nudge { number } => {
                self.store_nudge(&found.signature, number);
                self.recovery.in_run = Some((found.signature.clone(), found.count));
                let last = number == max;
                let text = texts::loop_message(&found.tool_name, found.count, true, last);
                self.send(
                    out,
                    texts::CT_LOOP,
                    text.clone(),
                    false,
                    DeliverAs::Steer,
                    Sent::Resume { rule: rule::SAR_LOOP },
                );
                let reason = format!(
                    "{} failed {} times in a row inside one run: nudge {number} of {max} steered in",
                    found.tool_name, found.count
                );
                self.record(out, now, rule::SAR_LOOP, LedgerKind::Action, reason, Some(text));
                out.push(Action::Notify {
                    level: NotifyLevel::Warning,
                    text: texts::notify_loop_nudge(&found.tool_name, found.count, last),
                    desktop: true,
                });
            }
            LoopDecision::GiveUp { crossing } => {
                self.give_up_loop(&found, crossing, max, now, out);
                self.recovery.in_run = Some((found.signature.clone(), found.count));
            }
            LoopDecision::None { .. } => {}
        }
    }

    /// SAR-L4's give-up, at a settle or between turns: remembered, so later crossings stay quiet.
    fn give_up_loop(&mut self, found: &ToolLoop, crossing: u32, max: u32, now: Now, out: &mut Vec<Action>) {
        self.store_nudge(&found.signature, crossing);
        let reason = format!(
            "gave up on the {} loop: {} identical failures after {max} nudges",
            found.tool_name, found.count
        );
        let notice = texts::notify_loop_give_up(&found.tool_name, max);
        self.give_up(out, now, rule::SAR_LOOP, reason, notice);
    }

    /// SAR-S3, SAR-S5..S7: an empty reply (or a bare successful tool result) at the end of the branch.
    pub(super) fn evaluate_retry(
        &mut self,
        tail: &[Message],
        now: Now,
        out: &mut Vec<Action>,
    ) -> Option<Claim> {
        let last = last_visible(tail)?;
        let empty = evaluate_empty(Some(last));
        if last.is_assistant() && empty.is_none() {
            if last.has_text() {
                self.recovery.reset(self.session_id.as_deref());
            }
            return None;
        }
        if last.role == Role::ToolResult && last.is_error {
            return None;
        }
        let reason = empty?;
        let max = self.config.recovery.max_retries;
        if max == 0 {
            return None;
        }
        if self.retries_used() >= max {
            let session = self.session_id.clone();
            self.recovery.budgets_mut(session.as_deref()).retries = 0;
            let why = format!(
                "{}; {max} retries were sent already, so pokeshell stops retrying",
                reason.reason()
            );
            self.give_up(
                out,
                now,
                rule::SAR_RETRY_GIVE_UP,
                why,
                texts::notify_retry_give_up(max),
            );
            return Some(Claim::Quiet {
                rule: rule::SAR_RETRY_GIVE_UP,
            });
        }
        Some(Claim::Inject(Resume::Retry { reason }))
    }

    /// Consumes a retry; `None` when the budget is spent (it was checked at the settle).
    pub(super) fn take_retry(&mut self) -> Option<(u32, u32)> {
        let max = self.config.recovery.max_retries;
        let session = self.session_id.clone();
        let budgets = self.recovery.budgets_mut(session.as_deref());
        if budgets.retries >= max {
            return None;
        }
        budgets.retries += 1;
        Some((budgets.retries, max))
    }

    pub(super) fn commit_loop_nudge(&mut self, signature: &str, nudge: Option<u32>) {
        if let Some(number) = nudge {
            self.store_nudge(signature, number);
        }
    }
}
