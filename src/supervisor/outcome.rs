//! After each automatic resume, the ledger gets a follow-up record: did the agent then make progress
//! (a turn started and produced output)?

use super::Supervisor;
use super::action::Action;
use super::ledger::LedgerKind;
use super::message::{Message, StopReason, last_visible};
use super::recovery::emptiness::evaluate_empty;
use super::time::Now;

/// How long a resume sent to an idle agent may wait for its first turn before it counts as ignored.
pub const OUTCOME_WAIT_MS: u64 = 120_000;

#[derive(Clone, Debug)]
pub(crate) struct AwaitingOutcome {
    rule: &'static str,
    send_id: u64,
    /// Set when the message went to an idle agent: then a turn must start within [`OUTCOME_WAIT_MS`].
    deadline_mono: Option<u64>,
    turn_started: bool,
    tool_started: bool,
}

impl Supervisor {
    pub(super) fn expect_outcome(&mut self, rule: &'static str, send_id: u64, now: Now) {
        let deadline_mono = (!self.run.known || self.run.starting).then(|| now.mono_ms + OUTCOME_WAIT_MS);
        self.outcome = Some(AwaitingOutcome {
            rule,
            send_id,
            deadline_mono,
            turn_started: false,
            tool_started: false,
        });
    }

    pub(super) fn forget_outcome(&mut self, send_id: u64) {
        if self
            .outcome
            .as_ref()
            .is_some_and(|outcome| outcome.send_id == send_id)
        {
            self.outcome = None;
        }
    }

    pub(super) fn outcome_saw_turn(&mut self) {
        if let Some(outcome) = &mut self.outcome {
            outcome.turn_started = true;
            outcome.deadline_mono = None;
        }
    }

    pub(super) fn outcome_saw_tool(&mut self) {
        if let Some(outcome) = &mut self.outcome {
            outcome.tool_started = true;
        }
    }

    /// At the first settle after the resume.
    pub(super) fn judge_outcome(&mut self, aborted: bool, tail: &[Message], now: Now, out: &mut Vec<Action>) {
        let Some(outcome) = self.outcome.take() else {
            return;
        };
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
        self.record(out, now, outcome.rule, LedgerKind::Outcome, reason, None);
    }

    /// The user or a session change took over before the agent settled.
    pub(super) fn abandon_outcome(&mut self, why: &str, now: Now, out: &mut Vec<Action>) {
        if let Some(outcome) = self.outcome.take() {
            self.record(
                out,
                now,
                outcome.rule,
                LedgerKind::Outcome,
                format!("unknown: {why}"),
                None,
            );
        }
    }

    pub(super) fn outcome_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        let expired = self
            .outcome
            .as_ref()
            .and_then(|outcome| outcome.deadline_mono)
            .is_some_and(|at| now.mono_ms >= at);
        if expired && let Some(outcome) = self.outcome.take() {
            let reason = format!("no progress: no turn started within {}s", OUTCOME_WAIT_MS / 1000);
            self.record(out, now, outcome.rule, LedgerKind::Outcome, reason, None);
        }
    }

    pub(super) fn outcome_deadline(&self) -> Option<u64> {
        self.outcome.as_ref().and_then(|outcome| outcome.deadline_mono)
    }
}
