//! Events the bridge forwards from pi (docs/protocol.md; what pi means by them: docs/pi-facts.md).

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod transcript;
pub use transcript::*;

/// One of pi's lifecycle events, reduced to the fields pokeshell uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PiEvent {
    SessionStart(SessionStart),
    SessionShutdown(SessionShutdown),
    SessionTree(SessionTree),
    SessionInfoChanged(SessionInfoChanged),
    ModelSelect(ModelSelect),
    Input(InputEvent),
    BeforeAgentStart(BeforeAgentStart),
    AgentStart,
    AgentEnd(AgentEnd),
    AgentSettled(AgentSettled),
    TurnStart(TurnStart),
    /// Sent only for a turn whose tool batch had a failure: the branch tail, as at a settle.
    TurnEnd(TurnEnd),
    MessageEnd(MessageEnd),
    /// The model's reply is streaming; at most one per second per kind.
    Progress(Progress),
    ToolExecutionStart(ToolExecutionStart),
    ToolExecutionEnd(ToolExecutionEnd),
    SessionBeforeCompact(SessionBeforeCompact),
    SessionCompact(SessionCompact),
    SessionCompactFailed(SessionCompactFailed),
    /// What the handoff pass of a `compact {handoff: true}` did.
    Handoff(HandoffReport),
    /// A forwarded tool (schedule_wakeup, cancel_wakeup) waits for a `tool_reply` command.
    ToolCallRequest(ToolCallRequest),
    /// The user typed one of the bridge's pi commands; answer with a `command_answer` command.
    UserCommand(super::UserCommand),
    /// pi's state, sent after every welcome so a reconnect starts from facts.
    Snapshot(Snapshot),
    /// Something went wrong inside the bridge; it reports instead of throwing into pi.
    Log(LogEvent),
    /// An event type this pokeshell does not know (a newer bridge); ignored.
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionReason {
    Startup,
    Quit,
    Reload,
    New,
    Resume,
    Fork,
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStart {
    pub reason: SessionReason,
    pub previous_session_file: Option<String>,
    pub session_id: Option<String>,
    pub session_file: Option<String>,
    pub session_name: Option<String>,
    pub model: Option<String>,
    /// pokeshell's own custom entries (customType starting with "pokeshell") on the current branch,
    /// oldest first, so settings and wakeups can be restored.
    #[serde(default)]
    pub custom_entries: Vec<CustomEntry>,
}

/// A custom entry (`pi.appendEntry`) read back from the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    pub id: Option<String>,
    pub custom_type: String,
    #[serde(default)]
    pub data: Value,
    pub timestamp: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionShutdown {
    pub reason: SessionReason,
    pub target_session_file: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTree {
    pub new_leaf_id: Option<String>,
    pub old_leaf_id: Option<String>,
    /// pokeshell's custom entries on the branch now current.
    #[serde(default)]
    pub custom_entries: Vec<CustomEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoChanged {
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSelect {
    pub model: Option<String>,
    pub source: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSource {
    /// Typed by the user.
    Interactive,
    /// Sent by an RPC client.
    Rpc,
    /// Sent by an extension with `pi.sendUserMessage` (pokeshell's own included).
    Extension,
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputEvent {
    pub source: InputSource,
    /// "steer" or "followUp" when the input arrived while pi was busy.
    pub streaming_behavior: Option<String>,
    #[serde(default)]
    pub text_chars: u64,
    #[serde(default)]
    pub has_images: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStart {
    /// "user" for a prompt, "custom" for a run started by a custom message.
    pub message_type: Option<String>,
    pub custom_type: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Pending,
    Deferred,
    #[serde(other)]
    Other,
}

/// pi's `agent_end` is not final (retries and compaction retries follow); `agent_settled` is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentEnd {
    /// Of the last assistant message of this low-level run, if it had one.
    pub stop_reason: Option<StopReason>,
    pub error_message: Option<String>,
    #[serde(default)]
    pub message_count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSettled {
    pub aborted: bool,
    /// `ctx.isIdle()` inside the handler (true unless something raced).
    pub idle: Option<bool>,
    pub pending_messages: Option<bool>,
    pub context_usage: Option<ContextUsage>,
    /// The last message entries of the current branch, oldest first (raw branch order, pre-compaction
    /// messages included), bounded to 200.
    #[serde(default)]
    pub tail: Vec<TailEntry>,
    /// True when the branch had more entries than the tail carries.
    #[serde(default)]
    pub tail_truncated: bool,
    /// The end (at most 2000 characters) of the branch's last assistant message's text; absent from
    /// older bridges.
    #[serde(default)]
    pub final_text: Option<String>,
}

/// What grew in the streaming reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgressKind {
    Text,
    Thinking,
    Toolcall,
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub kind: ProgressKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStart {
    #[serde(default)]
    pub turn_index: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnd {
    #[serde(default)]
    pub turn_index: u32,
    /// pi waits for this turn's end until pokeshell sends `release_turn` with this id (or a short
    /// timeout passes); absent when nothing waits.
    #[serde(default)]
    pub hold_id: Option<u64>,
    #[serde(default)]
    pub tail: Vec<TailEntry>,
    #[serde(default)]
    pub tail_truncated: bool,
}

/// Fires for every finished message: user, assistant, tool result, custom, system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageEnd {
    pub message: MessageSummary,
    /// What an assistant reply used (absent for other messages, and from older bridges).
    #[serde(default)]
    pub usage: Option<TokenUsage>,
    /// The message's words for the conversation a person reads (the web view): its text blocks,
    /// bounded by the bridge with the start and the end kept; absent when it has none.
    #[serde(default)]
    pub text: Option<String>,
}

/// One reply's tokens and cost, as pi counted and priced them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Prompt tokens not read from the cache.
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
    /// In US dollars; 0 when pi has no prices for the model, `None` when it said nothing.
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionStart {
    pub tool_call_id: String,
    pub tool_name: String,
    /// A preview: strings cut at 200 characters, nesting and sizes bounded.
    #[serde(default)]
    pub args: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionEnd {
    pub tool_call_id: String,
    pub tool_name: String,
    #[serde(default)]
    pub is_error: bool,
    pub duration_ms: Option<u64>,
    /// A digest of the result's content (sha-256, hex, cut), for the no-progress rails; absent from
    /// older bridges.
    #[serde(default)]
    pub result_digest: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    Manual,
    Threshold,
    Overflow,
    #[serde(other)]
    Other,
}

/// A compaction is starting (pi is not idle until it ends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeCompact {
    pub reason: CompactReason,
    #[serde(default)]
    pub will_retry: bool,
    pub tokens_before: Option<u64>,
    /// This pass is one pokeshell asked for with `handoff: true`; a `handoff` event follows.
    #[serde(default)]
    pub handoff: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompact {
    pub reason: CompactReason,
    #[serde(default)]
    pub will_retry: bool,
    #[serde(default)]
    pub from_extension: bool,
    pub tokens_before: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactFailed {
    pub reason: CompactReason,
    #[serde(default)]
    pub will_retry: bool,
    #[serde(default)]
    pub aborted: bool,
    #[serde(default)]
    pub from_extension: bool,
    pub error_message: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffOutcome {
    /// The handoff document became the compaction summary.
    Written,
    /// The bridge returned nothing and pi wrote its default summary.
    Fallback,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffReport {
    pub outcome: HandoffOutcome,
    /// Where the document was saved, when it was.
    pub path: Option<String>,
    /// Why the document was not saved although saving was asked for.
    pub save_error: Option<String>,
    /// Why the bridge fell back to pi's default summary.
    pub reason: Option<String>,
    pub document_chars: Option<u64>,
    #[serde(default)]
    pub read_files: u32,
    #[serde(default)]
    pub modified_files: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRequest {
    /// pi's tool call id; answer with a `tool_reply` command carrying it.
    pub call_id: String,
    pub tool_name: String,
    #[serde(default)]
    pub args: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub idle: Option<bool>,
    pub pending_messages: Option<bool>,
    pub context_usage: Option<ContextUsage>,
    pub session_id: Option<String>,
    pub model: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEvent {
    /// "warning" or "error".
    pub level: String,
    pub message: String,
}
