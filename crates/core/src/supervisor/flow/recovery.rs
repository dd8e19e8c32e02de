//! The stalled-agent recovery's side of a settle and of a turn's end: the loop guard [SAR-L4] and the
//! empty-reply retry [SAR-S3..S8] turn the branch tail into a claim for the arbiter.

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, DeliverAs, NotifyLevel};
use crate::supervisor::arbiter::{Claim, GiveUp, Resume};
use crate::supervisor::delivery::Sent;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::message::{Message, Role, last_visible};
use crate::supervisor::recovery::emptiness::evaluate_empty;
use crate::supervisor::recovery::loop_guard::{LoopDecision, ToolLoop, decide_loop_action, detect_tool_loop};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

impl Supervisor {
    /// SAR-S4 + SAR-L4: a failing tool result at the end of the branch belongs to the loop guard.
    /// Whatever it decides, it owns the settle (X6).
    pub(in crate::supervisor) fn evaluate_loop(
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
        if self.recovery.take_spoke_in_run(&found.signature, found.count) {
            let reason = format!(
                "{} failed {} times; the loop guard already spoke about this failure between turns",
                found.tool_name, found.count
            );
            self.record(out, now, rule::SAR_LOOP, LedgerKind::Declined, reason, None);
            return Some(Claim::Quiet { rule: rule::SAR_LOOP });
        }
        let threshold = self.config.recovery.effective_loop_threshold();
        let max = self.config.recovery.effective_max_loop_nudges();
        let last_nudge = self
            .recovery
            .last_nudge(self.session_id.as_deref(), &found.signature);
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
                let reason = format!(
                    "{} failed {} times; the final nudge was sent already, so pokeshell stays quiet",
                    found.tool_name, found.count
                );
                self.record(out, now, rule::SAR_LOOP, LedgerKind::Declined, reason, None);
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
    ///
    /// ARB-ABORT: Esc during a tool ends its batch with an aborted result and a `turn_end` before the
    /// aborted settle; nothing is steered into a run the user (or pokeshell's auto-abort) is stopping,
    /// nor after an aborted settle until the user types. ARB-ONE: at most one message per turn, and the
    /// shared cooldown applies; a nudge held back is not counted, so a later turn may still give it.
    pub(in crate::supervisor) fn on_turn_end(&mut self, tail: &[Message], now: Now, out: &mut Vec<Action>) {
        let sent_this_turn = self.arbiter.take_injected_since_turn();
        if !self.config.poke.enabled || self.compaction.active() {
            return;
        }
        let aborting = last_visible(tail).is_some_and(Message::is_aborted_tool_result);
        if aborting || self.arbiter.stopped().is_some() || self.guard_holds().is_some() {
            return;
        }
        let Some(found) = detect_tool_loop(tail) else {
            return;
        };
        let threshold = self.config.recovery.effective_loop_threshold();
        let max = self.config.recovery.effective_max_loop_nudges();
        let session = self.session_id.clone();
        let last_nudge = self.recovery.last_nudge(session.as_deref(), &found.signature);
        match decide_loop_action(found.count, threshold, max, last_nudge) {
            LoopDecision::Nudge { number } => {
                let cooldown_ends = self.arbiter.cooldown_ends(self.config.global_cooldown_ms());
                let held = if !self.connected {
                    Some("the bridge is not connected".to_string())
                } else if sent_this_turn {
                    Some("another message went to the agent during this turn".to_string())
                } else if now.mono_ms < cooldown_ends {
                    let wait_s = (cooldown_ends - now.mono_ms).div_ceil(1000);
                    Some(format!(
                        "the cooldown between automatic messages has {wait_s}s to run"
                    ))
                } else {
                    None
                };
                if let Some(held) = held {
                    let reason = format!(
                        "{} failed {} times in a row inside one run: nudge {number} held back ({held})",
                        found.tool_name, found.count
                    );
                    self.record(out, now, rule::SAR_LOOP, LedgerKind::Declined, reason, None);
                    return;
                }
                self.recovery
                    .store_nudge(session.as_deref(), &found.signature, number);
                self.arbiter.injected(now.mono_ms, false);
                self.recovery.spoke_in_run(&found.signature, found.count);
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
                self.recovery.spoke_in_run(&found.signature, found.count);
            }
            LoopDecision::None { .. } => {}
        }
    }

    /// SAR-L4's give-up, at a settle or between turns: remembered, so later crossings stay quiet.
    fn give_up_loop(&mut self, found: &ToolLoop, crossing: u32, max: u32, now: Now, out: &mut Vec<Action>) {
        self.recovery
            .store_nudge(self.session_id.as_deref(), &found.signature, crossing);
        let reason = format!(
            "gave up on the {} loop: {} identical failures after {max} nudges",
            found.tool_name, found.count
        );
        let notice = texts::notify_loop_give_up(&found.tool_name, max);
        self.give_up(out, now, rule::SAR_LOOP, reason, notice);
    }

    /// SAR-S3, SAR-S5..S7: an empty reply (or a bare successful tool result) at the end of the branch. The
    /// give-up (SAR-S7) is only a claim: it happens if it wins the settle (ARB-LOSE).
    pub(in crate::supervisor) fn evaluate_retry(&mut self, tail: &[Message]) -> Option<Claim> {
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
        if self.recovery.retries(self.session_id.as_deref()) >= max {
            return Some(Claim::GiveUp(GiveUp::Retry { reason }));
        }
        Some(Claim::Inject(Resume::Retry { reason }))
    }
}
