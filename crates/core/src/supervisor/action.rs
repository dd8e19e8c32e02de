//! What the supervisor asks the shell to do. Performing them is the shell's job.

use serde_json::Value;

use super::ledger::LedgerRecord;

/// pi's `deliverAs`: when a message lands if the agent is busy (irrelevant when idle with a trigger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliverAs {
    /// After the current tool batch, in the same run.
    Steer,
    /// After the run's current work, still in the same run.
    FollowUp,
    /// Held for the next prompt.
    NextTurn,
}

impl DeliverAs {
    pub fn wire(self) -> &'static str {
        match self {
            Self::Steer => "steer",
            Self::FollowUp => "followUp",
            Self::NextTurn => "nextTurn",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotifyLevel {
    Info,
    Success,
    Warning,
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `pi.sendMessage({customType, content: text, display}, {triggerTurn, deliverAs})`.
    /// The shell reports the outcome with [`super::Event::SendResult`] carrying `send_id`.
    SendMessage {
        send_id: u64,
        custom_type: &'static str,
        text: String,
        display: bool,
        deliver_as: DeliverAs,
        trigger_turn: bool,
    },
    /// `ctx.abort()`.
    Abort,
    /// `ctx.compact()` for a handoff pass: the bridge writes the handoff document in
    /// `session_before_compact`; `focus` is the user's optional line; `save` says whether to write
    /// `handoff-<timestamp>.md` next to the session file. Reply with [`super::Event::CompactResult`].
    Compact { focus: Option<String>, save: bool },
    /// Ask the session's own model one short question (PROM-A1) and answer with
    /// [`super::Event::ModelAnswer`] carrying `ask_id`; the bridge gives up after `timeout_ms`.
    AskModel {
        ask_id: u64,
        system: String,
        question: String,
        timeout_ms: u64,
    },
    /// The answer to a [`super::Event::ToolCallRequest`].
    ToolReply {
        call_id: String,
        text: String,
        is_error: bool,
        details: Value,
    },
    /// `pi.appendEntry(custom_type, data)`: persistence (wakeups).
    AppendEntry { custom_type: &'static str, data: Value },
    /// Tell the user. `desktop`: pokeshell acted on its own or gave up, so also ring the bell and send
    /// an OSC 9 / OSC 777 desktop notification.
    Notify {
        level: NotifyLevel,
        text: String,
        desktop: bool,
    },
    /// pokeshell aborted the run itself and pi did not settle within [`super::stall::ABORT_SETTLE_LIMIT_MS`]:
    /// pi looks frozen. The shell may restart it; the supervisor does nothing more about it.
    Unresponsive { aborted_mono_ms: u64 },
    /// Append one record to the intervention ledger (a JSON line).
    Log(LedgerRecord),
    /// Tell the server's core about a provider failure this session met (GUARD-K1..K3); the shell adds
    /// which provider.
    Breaker(super::guard::circuit::BreakerNote),
    /// The person's answer to the day's pause (GUARD-B2), for the server's core: it holds the day's
    /// budget for every session.
    Daily(super::guard::circuit::DailyAnswer),
}
