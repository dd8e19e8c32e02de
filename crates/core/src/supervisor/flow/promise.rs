//! The promise rule's side of a settle [PROM-D1, PROM-D2, PROM-P1, PROM-B1]: a run that ended on a step
//! the agent announced and did not take becomes a claim for the arbiter, which sends the poke (or holds
//! it for Esc, a compaction, the cooldown) like any resume.

use crate::supervisor::Supervisor;
use crate::supervisor::action::Action;
use crate::supervisor::arbiter::{Claim, Resume};
use crate::supervisor::event::ModelAnswer;
use crate::supervisor::flow::settle::Settle;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::message::{Message, Role, StopReason, last_visible};
use crate::supervisor::promise::{RunEnding, Verdict, judge};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

/// How long the bridge lets the second opinion's model call run.
pub const ASK_TIMEOUT_MS: u64 = 20_000;
/// The supervisor waits this much longer, so the bridge's own timeout is what normally answers.
const ASK_GRACE_MS: u64 = 5_000;

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
        self.cancel_promise_ask("the agent settled again", now, out);
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
        if !certain && self.config.recovery.promise_second_opinion {
            self.ask_second_opinion(step, settle.final_text.as_deref().unwrap_or_default(), now, out);
            return None;
        }
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

    /// PROM-A1: an unsure ending, and the second opinion is on: the session's model is asked first.
    fn ask_second_opinion(&mut self, step: String, text: &str, now: Now, out: &mut Vec<Action>) {
        let due = now.mono_ms.saturating_add(ASK_TIMEOUT_MS + ASK_GRACE_MS);
        let ask_id = self.promise.ask(step.clone(), due);
        out.push(Action::AskModel {
            ask_id,
            system: texts::PROMISE_ASK_SYSTEM.to_string(),
            question: texts::promise_question(text),
            timeout_ms: ASK_TIMEOUT_MS,
        });
        let reason =
            format!("unsure whether the run ended on an untaken step (\"{step}\"): asking the model");
        self.record(out, now, rule::PROM_ASK, LedgerKind::Action, reason, None);
    }

    /// The model's answer to the second opinion: a step it did not take is poked, through the arbiter.
    pub(in crate::supervisor) fn on_model_answer(
        &mut self,
        ask_id: u64,
        result: Result<ModelAnswer, String>,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let Some(asking) = self.promise.answered(ask_id) else {
            return;
        };
        let answer = match result {
            Ok(answer) => answer,
            Err(error) => {
                let reason = format!("the model's second opinion failed ({error}): the ending is left alone");
                self.record(out, now, rule::PROM_ASK, LedgerKind::Declined, reason, None);
                return;
            }
        };
        let cost = match (answer.input_tokens, answer.output_tokens) {
            (Some(input), Some(output)) => format!("{input} input + {output} output tokens"),
            _ => "tokens not reported".to_string(),
        };
        let said = answer.text.to_lowercase();
        let step_said = said.contains("step");
        let done_said = said.contains("done");
        let verdict = match (step_said, done_said) {
            (true, false) => "a step it did not take",
            (false, true) => "the end of the task",
            _ => "no clear answer",
        };
        let reason = format!(
            "the model's second opinion on \"{}\": {verdict} (it answered \"{}\"; cost {cost})",
            asking.step, answer.text
        );
        self.record(out, now, rule::PROM_ASK, LedgerKind::Outcome, reason, None);
        if !step_said || done_said {
            return;
        }
        if self.arbiter.injected_since_settle() || !self.run.idle() {
            let reason =
                "the promise poke after the second opinion is dropped: the agent moved on".to_string();
            self.record(out, now, rule::PROM_POKE, LedgerKind::Declined, reason, None);
            return;
        }
        self.dispatch(
            Resume::Promise {
                step: asking.step,
                certain: false,
            },
            now,
            out,
        );
    }

    /// A question still in flight when something else happened: its answer will be ignored.
    pub(in crate::supervisor) fn cancel_promise_ask(&mut self, why: &str, now: Now, out: &mut Vec<Action>) {
        if let Some(asking) = self.promise.drop_ask() {
            let reason = format!("the second opinion on \"{}\" is dropped: {why}", asking.step);
            self.record(out, now, rule::PROM_ASK, LedgerKind::Declined, reason, None);
        }
    }

    /// Tick: no answer in time means the ending is left alone.
    pub(in crate::supervisor) fn promise_ask_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if let Some(asking) = self.promise.expired(now.mono_ms) {
            let reason = format!(
                "the model gave no second opinion on \"{}\" within {}s: the ending is left alone",
                asking.step,
                (ASK_TIMEOUT_MS + ASK_GRACE_MS) / 1000
            );
            self.record(out, now, rule::PROM_ASK, LedgerKind::Declined, reason, None);
        }
    }
}
