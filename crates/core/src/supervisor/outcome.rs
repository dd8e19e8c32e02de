//! After each automatic resume, the ledger gets a follow-up record: did the agent then make progress
//! (a turn started and produced output)? This component remembers the resume it waits on and judges it.

use super::message::{Message, StopReason, last_visible};
use super::recovery::emptiness::evaluate_empty;

/// How long a resume sent to an idle agent may wait for its first turn before it counts as ignored.
pub const OUTCOME_WAIT_MS: u64 = 120_000;

#[derive(Clone, Debug)]
struct AwaitingOutcome {
    rule: &'static str,
    send_id: u64,
    /// Set when the message went to an idle agent: then a turn must start within [`OUTCOME_WAIT_MS`].
    deadline_mono: Option<u64>,
    turn_started: bool,
    tool_started: bool,
}

/// A finished judgement: the rule of the resume and the ledger's reason.
pub(crate) type Verdict = (&'static str, String);

#[derive(Debug, Default)]
pub(crate) struct Outcomes {
    awaiting: Option<AwaitingOutcome>,
}

impl Outcomes {
    /// `awaiting_start`: the agent was idle or its state unknown, so a turn must start in time.
    pub(crate) fn expect(&mut self, rule: &'static str, send_id: u64, awaiting_start: bool, now_mono: u64) {
        self.awaiting = Some(AwaitingOutcome {
            rule,
            send_id,
            deadline_mono: awaiting_start.then(|| now_mono + OUTCOME_WAIT_MS),
            turn_started: false,
            tool_started: false,
        });
    }

    /// pi refused the send: there is nothing to judge.
    pub(crate) fn forget(&mut self, send_id: u64) {
        if self
            .awaiting
            .as_ref()
            .is_some_and(|outcome| outcome.send_id == send_id)
        {
            self.awaiting = None;
        }
    }

    pub(crate) fn saw_turn(&mut self) {
        if let Some(outcome) = &mut self.awaiting {
            outcome.turn_started = true;
            outcome.deadline_mono = None;
        }
    }

    pub(crate) fn saw_tool(&mut self) {
        if let Some(outcome) = &mut self.awaiting {
            outcome.tool_started = true;
        }
    }

    /// At the first settle after the resume.
    pub(crate) fn judge(&mut self, aborted: bool, tail: &[Message]) -> Option<Verdict> {
        let outcome = self.awaiting.take()?;
        let last = last_visible(tail);
        let produced = last.is_some_and(|message| {
            message.is_assistant()
                && evaluate_empty(Some(message)).is_none()
                && !matches!(
                    message.stop_reason,
                    Some(StopReason::Error | StopReason::Length | StopReason::Aborted)
                )
        });
        let reason = if aborted {
            "unknown: the resumed run was aborted".to_string()
        } else if outcome.rule == super::ledger::rule::PROM_POKE && outcome.turn_started {
            // PROM-P1 asked for the announced step or a one-line request: a tool call is the step.
            if outcome.tool_started {
                "acted: the agent made a tool call after the promise poke".to_string()
            } else {
                "did not act: the agent answered without a tool call (it may have said what it needs)"
                    .to_string()
            }
        } else if !outcome.turn_started {
            "no progress: the agent settled without starting a turn".to_string()
        } else if outcome.tool_started || produced {
            "progress: the agent resumed and produced output".to_string()
        } else {
            let ending = match last.and_then(|message| message.error_message.as_deref()) {
                Some(error) => format!("an error ({error})"),
                None => "no output".to_string(),
            };
            format!("no progress: the resumed turn ended with {ending}")
        };
        Some((outcome.rule, reason))
    }

    /// The user or a session change took over before the agent settled: the rule of the resume.
    pub(crate) fn abandon(&mut self) -> Option<&'static str> {
        self.awaiting.take().map(|outcome| outcome.rule)
    }

    /// The resumed run stalled and is given up on: it will never settle.
    pub(crate) fn stalled(&mut self, seconds: u64) -> Option<Verdict> {
        let outcome = self.awaiting.take()?;
        let reason = if outcome.tool_started {
            format!(
                "progress: the agent resumed and made a tool call, then its stream stalled for {seconds}s"
            )
        } else {
            format!("no progress: the resumed run stalled for {seconds}s and was given up on")
        };
        Some((outcome.rule, reason))
    }

    /// No turn started in time.
    pub(crate) fn expire(&mut self, now_mono: u64) -> Option<Verdict> {
        let expired = self.deadline().is_some_and(|at| now_mono >= at);
        if !expired {
            return None;
        }
        let outcome = self.awaiting.take()?;
        let reason = format!("no progress: no turn started within {}s", OUTCOME_WAIT_MS / 1000);
        Some((outcome.rule, reason))
    }

    pub(crate) fn deadline(&self) -> Option<u64> {
        self.awaiting.as_ref().and_then(|outcome| outcome.deadline_mono)
    }
}
