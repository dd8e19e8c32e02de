//! Commands pokeshell sends to the bridge. Every command gets exactly one reply with its id.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the bridge should do inside pi.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
    /// `pi.sendMessage`: a custom message (hidden unless `display`), which never fires pi's `input`.
    SendMessage(SendMessage),
    /// `pi.sendUserMessage`: a real user message (fires `input` with source "extension").
    SendUserMessage(SendUserMessage),
    /// `ctx.abort()`: aborts the run, any retry and any compaction.
    Abort,
    /// `ctx.compact()`. The reply comes when the compaction has finished or failed.
    Compact(CompactRequest),
    /// `pi.appendEntry(customType, data)`: persisted in the session, never sent to the model.
    AppendEntry {
        #[serde(rename = "customType")]
        custom_type: String,
        #[serde(default)]
        data: Value,
    },
    /// Custom entries (`type: "custom"`) of the session, oldest first.
    GetEntries {
        #[serde(rename = "customTypePrefix", default, skip_serializing_if = "Option::is_none")]
        custom_type_prefix: Option<String>,
        #[serde(default)]
        scope: EntryScope,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// `ctx.getContextUsage()` and `ctx.isIdle()`.
    ContextUsage,
    /// `ctx.isIdle()` and `ctx.hasPendingMessages()`.
    IsIdle,
    /// One short question to the session's model (PROM-A1): `registry.complete()` with `system` and
    /// `question`, aborted after `timeout_ms`. The reply: `{answer, inputTokens, outputTokens}`.
    AskModel {
        question: String,
        system: String,
        #[serde(rename = "timeoutMs")]
        timeout_ms: u64,
    },
    /// The result of a forwarded tool call (see the `tool_call_request` event).
    ToolReply(ToolReply),
    /// Lets pi go on after a held `turn_end` (sent after anything pokeshell steers in for that turn).
    ReleaseTurn {
        #[serde(rename = "holdId")]
        hold_id: u64,
    },
    /// `ctx.ui.notify`: pi's own notification.
    Notify {
        message: String,
        #[serde(default)]
        level: NotifyLevel,
    },
    /// The answer to a `user_command` event: the bridge shows `text` in pi and ends the command.
    CommandAnswer {
        #[serde(rename = "requestId")]
        request_id: u64,
        text: String,
        #[serde(default)]
        level: NotifyLevel,
    },
}

impl Command {
    /// The wire name of the command, for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Command::SendMessage(_) => "send_message",
            Command::SendUserMessage(_) => "send_user_message",
            Command::Abort => "abort",
            Command::Compact(_) => "compact",
            Command::AppendEntry { .. } => "append_entry",
            Command::GetEntries { .. } => "get_entries",
            Command::ContextUsage => "context_usage",
            Command::IsIdle => "is_idle",
            Command::AskModel { .. } => "ask_model",
            Command::ToolReply(_) => "tool_reply",
            Command::ReleaseTurn { .. } => "release_turn",
            Command::Notify { .. } => "notify",
            Command::CommandAnswer { .. } => "command_answer",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessage {
    pub custom_type: String,
    pub content: String,
    /// Show it in pi's transcript.
    #[serde(default)]
    pub display: bool,
    /// When pi is idle, start a run with it.
    #[serde(default)]
    pub trigger_turn: bool,
    /// How to queue it while pi is busy; pi's default is steer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver_as: Option<DeliverAs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendUserMessage {
    pub text: String,
    /// Required by pi while it is busy (otherwise pi drops the message with an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver_as: Option<DeliverAs>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactRequest {
    /// Passed to pi as the compaction's custom instructions; for a handoff it is the focus line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// Let the bridge write the summary as a handoff document (HO-G2..G7; docs/protocol.md, Handoff).
    #[serde(default)]
    pub handoff: bool,
    /// Save the handoff document as `handoff-<timestamp>.md` next to the session file.
    #[serde(default)]
    pub save: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolReply {
    pub call_id: String,
    /// Text the model sees as the tool's result.
    pub text: String,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DeliverAs {
    Steer,
    FollowUp,
    NextTurn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryScope {
    /// Entries on the current branch (root to leaf).
    #[default]
    Branch,
    /// Every entry of the session file.
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyLevel {
    #[default]
    Info,
    Warning,
    Error,
}
