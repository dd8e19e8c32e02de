//! What pi's context holds, as the bridge reports it: the context's use and the last entries of the
//! conversation (messages reduced to their blocks).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StopReason;

/// `ctx.getContextUsage()`; `tokens` and `percent` are null after a compaction until the next reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    pub context_window: Option<u64>,
    /// 0 to 100.
    pub percent: Option<f64>,
}

/// One branch entry the stalled-agent rules look at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TailEntry {
    /// An entry of type "message".
    Message(MessageSummary),
    /// An entry of type "custom_message" (`pi.sendMessage`): never part of the message list the
    /// loop guard walks, but shown here so pokeshell can tell its own injections apart.
    CustomMessage {
        id: Option<String>,
        #[serde(rename = "customType")]
        custom_type: String,
        #[serde(default)]
        display: bool,
    },
    /// A compaction entry (marks where earlier history was summarized).
    Compaction {
        id: Option<String>,
        #[serde(rename = "tokensBefore")]
        tokens_before: Option<u64>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    Custom,
    BashExecution,
    System,
    BranchSummary,
    CompactionSummary,
    #[serde(other)]
    Other,
}

/// A message stripped down to what the rules need: no text, only whether there was any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSummary {
    /// The session entry id (absent in `message_end`, where the entry may not exist yet).
    pub id: Option<String>,
    pub role: Role,
    pub stop_reason: Option<StopReason>,
    /// Bounded to 500 characters.
    pub error_message: Option<String>,
    #[serde(default)]
    pub content: Vec<Block>,
    /// Tool results only.
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub is_error: Option<bool>,
    /// Custom messages only.
    pub custom_type: Option<String>,
}

/// One content block of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Block {
    /// `non_blank`: the text has something besides whitespace.
    Text {
        #[serde(rename = "nonBlank")]
        non_blank: bool,
    },
    Thinking {
        #[serde(rename = "nonBlank")]
        non_blank: bool,
    },
    /// Arguments are bounded: a string longer than 1000 characters is cut and ends with a marker that
    /// carries its full length and a hash, so two different long arguments stay different.
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
    },
    Image,
    Other {
        kind: String,
    },
}
