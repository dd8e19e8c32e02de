//! The promise rule's side of a settle [PROM-D1, PROM-D2, PROM-P1, PROM-B1]: a run that ended on a step
//! the agent announced and did not take becomes a claim for the arbiter, which sends the poke (or holds
//! it for Esc, a compaction, the cooldown) like any resume.

use crate::supervisor::Supervisor;
use crate::supervisor::action::Action;
use crate::supervisor::arbiter::{Claim, Resume};
use crate::supervisor::flow::settle::Settle;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::message::{Message, Role, StopReason, last_visible};
use crate::supervisor::promise::{RunEnding, Verdict, judge};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

/// What the classifier makes of a settled branch: only a final assistant message with text and no tool
/// call is judged, with the run's tool calls since the user's message and how it ended.
pub(crate) fn promise_verdict(tail: &[Message], final_text: Option<&str>) -> Verdict {
    let (Some(last), Some(text)) = (last_visible(tail), final_text) else {
        return Verdict::No;
    };
    if !last.is_assistant() || last.has_tool_call() || !last.has_text() {
        return Verdict::No;
    }
    let ended_badly = matches!(
        last.stop_reason,
        Some(StopReason::Error | StopReason::Length | StopReason::Aborted)
    );
    let had_tool_calls = tail
        .iter()
        .any(|message| message.role == Role::ToolResult || message.has_tool_call());
    judge(RunEnding {
        text,
        had_tool_calls,
        ended_badly,
    })
}

impl Supervisor {
    /// PROM-D1..B1 at a settle that was not aborted. A healthy ending closes the episode.
    pub(in crate::supervisor) fn evaluate_promise(
        &mut self,
        settle: &Settle,
        now: Now,
        out: &mut Vec<Action>,
    ) -> Option<Claim> {
        let verdict = promise_verdict(&settle.tail, settle.final_text.as_deref());
        let Some(step) = verdict.step().map(str::to_string) else {
            self.promise.end();
            return None;
        };
        // A pending wakeup brings the agent back on its own: "I'll look again later" is its plan.
        if !self.wakeups.is_empty() {
            let reason = format!("the run ended on an announced step (\"{step}\"), but a wakeup is pending");
            self.record(out, now, rule::PROM_DETECT, LedgerKind::Declined, reason, None);
            return None;
        }
        let certain = matches!(verdict, Verdict::Certain { .. });
        let max = self.config.recovery.max_promise_pokes;
        if !self.config.recovery.promise_poke || max == 0 {
            let reason =
                format!("the run ended on an announced step (\"{step}\"), but the promise poke is off");
            self.record(out, now, rule::PROM_DETECT, LedgerKind::Declined, reason, None);
            return None;
        }
        if self.promise.pokes() >= max {
            if self.promise.give_up() {
                let reason = format!(
                    "the run ended on an announced step again (\"{step}\"); {max} promise poke(s) were sent in \
                     this episode already, so pokeshell leaves it to you"
                );
                self.give_up(
                    out,
                    now,
                    rule::PROM_LIMIT,
                    reason,
                    texts::notify_promise_give_up(max),
                );
            }
            return None;
        }
        Some(Claim::Inject(Resume::Promise { step, certain }))
    }
}
