//! What the shell feeds the supervisor: pi's lifecycle as the bridge reports it, the user's own
//! commands, and the replies to the supervisor's commands.

use serde_json::Value;

use super::message::{Message, StopReason};

/// `input.source` in pi. Only `Interactive` and `Rpc` mean "the user took control" (fix B1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputSource {
    Interactive,
    Rpc,
    Extension,
}

impl InputSource {
    pub fn is_user(self) -> bool {
        matches!(self, Self::Interactive | Self::Rpc)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactReason {
    /// `/compact`, or `ctx.compact()` (which is how pokeshell's handoff compacts).
    Manual,
    Threshold,
    Overflow,
}

/// `ctx.getContextUsage()`; `tokens` and `percent` are unknown right after a compaction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    pub window: Option<u64>,
    /// 0–100.
    pub percent: Option<f64>,
}

/// A custom session entry (`pi.appendEntry`), in branch order; used to re-arm wakeups.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomEntry {
    pub custom_type: String,
    pub data: Value,
}

/// What the session's model answered to a question of pokeshell's, and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelAnswer {
    pub text: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// How a tool call ended, as the no-progress rails compare it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutcome {
    pub is_error: bool,
    /// How long the call ran, as pi measured it.
    pub duration_ms: Option<u64>,
    /// A digest of the call's result (its text), from the bridge; `None` from an older bridge.
    pub result_digest: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A bridge instance connected (a new one connects after `/new`, `/resume`, `/fork`, `/reload`).
    BridgeConnected,
    BridgeDisconnected {
        reason: String,
    },
    /// The bridge's `snapshot` after a welcome (after the lines it kept meanwhile): whether pi is
    /// idle now.
    Snapshot {
        idle: Option<bool>,
    },
    /// `session_start`. `entries` are the branch's custom entries, oldest first.
    SessionStart {
        session_id: String,
        entries: Vec<CustomEntry>,
    },
    SessionShutdown,
    /// `session_tree` (the user navigated with `/tree`).
    SessionTree,
    AgentStart,
    /// `agent_end`, with the stopReason and errorMessage of its last assistant message (if any).
    AgentEnd {
        stop_reason: Option<StopReason>,
        error_message: Option<String>,
    },
    TurnStart,
    /// `turn_end`: a turn finished; its tool results are in the branch. `tail` as at a settle.
    TurnEnd {
        tail: Vec<Message>,
    },
    ToolStart {
        id: String,
        name: String,
        /// A short, single-line preview of the arguments, for the side pane.
        args_preview: String,
        /// The arguments as the bridge bounds them: with the tool's name, the call's identity for the
        /// no-progress rails (GUARD-L1, GUARD-L2).
        args: Value,
    },
    ToolEnd {
        id: String,
        outcome: ToolOutcome,
    },
    /// The tool calls pi says run right now (a heartbeat after lost lines): any other is a ghost
    /// whose end was lost, and is forgotten without a poke (POKE-E4).
    ToolsRunning {
        ids: Vec<String>,
    },
    /// pokeshell itself did not run for `ms` (it was stopped): that time is not pi's silence, so
    /// the stall watch's clock moves on by as much (STALL-S1).
    TimeAway {
        ms: u64,
    },
    /// `session_before_compact`: a compaction begins.
    CompactStart {
        reason: CompactReason,
        will_retry: bool,
    },
    /// `session_compact`: a compaction finished.
    Compact {
        reason: CompactReason,
        will_retry: bool,
        tokens_before: Option<u64>,
    },
    /// `session_compact_failed`.
    CompactFailed {
        reason: CompactReason,
        aborted: bool,
        will_retry: bool,
        error_message: Option<String>,
    },
    /// The reply to [`super::Action::Compact`].
    CompactResult {
        error: Option<String>,
    },
    /// `agent_settled`, with what pi says at that moment.
    AgentSettled {
        aborted: bool,
        is_idle: bool,
        context_usage: Option<ContextUsage>,
        /// The branch tail, oldest first (see [`super::message`]).
        tail: Vec<Message>,
        /// The end of the last assistant message's text (PROM-D1 reads it).
        final_text: Option<String>,
    },
    Input {
        source: InputSource,
    },
    /// A call of a tool the bridge registered on pokeshell's behalf (`schedule_wakeup`, `cancel_wakeup`).
    /// pi waits for the [`super::Action::ToolReply`] with the same `call_id`.
    ToolCallRequest {
        call_id: String,
        name: String,
        args: Value,
    },
    /// The model's reply is streaming (text, thinking or a tool call grows), or another sign that the
    /// request in flight is alive; the bridge sends at most one per second per kind.
    Progress,
    /// The user typed a key into pi's pane (anything, Esc included), before any prompt is submitted.
    UserTyped,
    /// The user asked for a poke (prefix+p).
    ManualPoke,
    /// The user asked for a handoff now (prefix+h), with an optional focus line.
    ManualHandoff {
        focus: Option<String>,
    },
    /// The user cancelled a pending wakeup by its id (`/wakeups cancel ID` in pi).
    CancelWakeup {
        id: String,
    },
    /// pokeshell relaunches pi on its session (it froze, ignored an abort, or died mid-run); `rule`
    /// names why. With `resume`, the agent was mid-run: the new pi is asked to carry on once its
    /// session has started, through the arbiter like any resume.
    PiRestarted {
        rule: &'static str,
        reason: String,
        resume: bool,
    },
    /// pokeshell would restart pi but may not (the hourly limit, no session file).
    RestartRefused {
        rule: &'static str,
        reason: String,
    },
    /// The reply to a [`super::Action::AskModel`]: the answer's text and its token cost, or why there
    /// is none.
    ModelAnswer {
        ask_id: u64,
        result: Result<ModelAnswer, String>,
    },
    /// One model call finished (an assistant reply with its usage): `session_cost_usd` is the whole
    /// session's cost after it, when pi priced any reply (GUARD-B1, GUARD-C1).
    ModelCall {
        session_cost_usd: Option<f64>,
    },
    /// The person answered a guard rail's pause: allow more (`usd`: how much, else what was offered)
    /// and go on (GUARD-A1), or leave it stopped (GUARD-A2).
    GuardAllow {
        usd: Option<f64>,
    },
    GuardLeave,
    /// The server's core on the day's budget across sessions (GUARD-B2).
    Daily(super::guard::circuit::DailyNews),
    /// The server's core on a provider failure other sessions met too (GUARD-K1..K3).
    Breaker(super::guard::circuit::BreakerOrder),
    /// The bridge's reply to a [`super::Action::SendMessage`]: `error` is `None` when pi took it.
    SendResult {
        send_id: u64,
        error: Option<String>,
    },
}
