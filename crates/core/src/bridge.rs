//! Wire format between the bridge extension inside pi and pokeshell: one JSON object per line, UTF-8,
//! `\n`-terminated, at most [`MAX_LINE_BYTES`] per line. Every object has a `type`. Field names are
//! camelCase like pi's own; type tags are snake_case. docs/protocol.md describes every message.
//!
//! Versioning: the bridge sends [`PROTOCOL_VERSION`] in its hello; pokeshell refuses any other
//! version. Both sides ship in the same binary, so a mismatch means a stale extension file.

mod commands;
mod events;
mod heartbeat;
mod user_commands;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use commands::{
    Command, CompactRequest, DeliverAs, EntryScope, NotifyLevel, SendMessage, SendUserMessage, ToolReply,
};
pub use events::{
    AgentEnd, AgentSettled, BeforeAgentStart, Block, CompactReason, ContextUsage, CustomEntry,
    HandoffOutcome, HandoffReport, InputEvent, InputSource, LogEvent, MessageEnd, MessageSummary,
    ModelSelect, PiEvent, Progress, ProgressKind, Role, SessionBeforeCompact, SessionCompact,
    SessionCompactFailed, SessionInfoChanged, SessionReason, SessionShutdown, SessionStart, SessionTree,
    Snapshot, StopReason, TailEntry, TokenUsage, ToolCallRequest, ToolExecutionEnd, ToolExecutionStart,
    TurnEnd, TurnStart,
};
pub use heartbeat::{Heartbeat, SeqGaps};
pub use user_commands::{UserCommand, UserRequest};

/// What the session hears from the bridge server, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum BridgeEvent {
    /// A bridge said hello with the right token and was admitted; it is now the live connection.
    Connected { conn: u64, hello: Hello },
    /// The live connection ended (pi quit, replaced its runtime, or crashed), or a newer one from the same
    /// process replaced it.
    Disconnected { conn: u64, reason: String },
    /// An event from pi through the live connection.
    Event {
        conn: u64,
        seq: u64,
        at: u64,
        event: PiEvent,
    },
    /// The bridge's periodic sign of life, from the live connection. `missed` counts the lines missing
    /// from the connection's numbering since the previous heartbeat (lines the bridge dropped while
    /// its socket did not drain, or lines skipped here as malformed or oversized).
    Heartbeat {
        conn: u64,
        heartbeat: Heartbeat,
        missed: u64,
    },
    /// The one reply to the command `id` (sent through the bridge server of the binary crate). A command that was in
    /// flight when its connection ended gets an `Err` reply.
    Reply {
        id: u64,
        command: &'static str,
        result: Result<Value, String>,
    },
    /// A peer was refused: another uid, a wrong token, a wrong protocol version, no hello in time, or
    /// another process while a bridge is live.
    Rejected { reason: String },
    /// A line was skipped (malformed, oversized, cut off) or something odd happened; for the log.
    Warning { conn: u64, reason: String },
}

/// The protocol version both sides must speak.
pub const PROTOCOL_VERSION: u32 = 1;

/// Longest line either side accepts, newline excluded.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// Environment variable naming the socket the bridge connects to.
pub const ENV_SOCKET: &str = "POKESHELL_SOCKET";

/// Environment variable carrying the per-run token the bridge sends in its hello.
pub const ENV_TOKEN: &str = "POKESHELL_TOKEN";

/// Environment variable carrying the wakeup delay bounds in force at spawn, `"MIN,MAX"` in seconds,
/// which the `schedule_wakeup` tool's description names.
pub const ENV_WAKEUP_BOUNDS: &str = "POKESHELL_WAKEUP_BOUNDS";

/// A line sent by the bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromBridge {
    /// First line of every connection.
    Hello(Hello),
    /// Something happened inside pi. `seq` numbers every line after the hello, per extension instance
    /// (events, replies, heartbeats share one counter); `at` is pi's wall clock in milliseconds since
    /// the Unix epoch.
    Event { seq: u64, at: u64, event: PiEvent },
    /// The answer to one command.
    Reply(Reply),
    /// The bridge is alive; pi's state at that moment.
    Heartbeat(Heartbeat),
}

/// The bridge introduces itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    pub protocol: u32,
    pub token: String,
    pub pi_version: Option<String>,
    pub pid: u32,
    /// Random id of this extension instance; pi creates a new instance on /new, /resume, /fork, /reload.
    pub instance: String,
    /// True when this instance connected before (pokeshell's side of the socket went away meanwhile).
    #[serde(default)]
    pub reconnect: bool,
    /// Lines the bridge dropped from its bounded outbox since its previous hello.
    #[serde(default)]
    pub dropped: u64,
    pub session_id: Option<String>,
    pub session_file: Option<String>,
    pub session_name: Option<String>,
    /// pi's run mode: "tui", "rpc", "json" or "print".
    pub mode: Option<String>,
    /// "provider/model-id" of the active model.
    pub model: Option<String>,
    pub cwd: Option<String>,
}

/// The answer to the command with the same id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    /// The line's number in the bridge's one counter (see [`FromBridge::Event`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    pub id: u64,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub result: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Reply {
    /// The result on success, the error text otherwise.
    pub fn into_result(self) -> Result<Value, String> {
        if self.ok {
            Ok(self.result)
        } else {
            Err(self
                .error
                .unwrap_or_else(|| "the bridge reported a failure without a reason".to_owned()))
        }
    }
}

/// A line sent by pokeshell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToBridge {
    /// The hello was accepted; the bridge may now flush what it buffered.
    Welcome { protocol: u32 },
    /// The hello was refused; pokeshell closes the connection after this line and the bridge must not
    /// connect again.
    Rejected { reason: String },
    /// Carry out `command` and answer with a reply carrying `id`.
    Command { id: u64, command: Command },
}

/// Typed results of the commands whose reply carries data.
pub mod results {
    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    use super::{ContextUsage, HandoffReport};

    /// Reply of `send_message` and `send_user_message`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Sent {
        /// Whether pi was idle just before the message was handed over.
        pub idle_before: Option<bool>,
    }

    /// Reply of `compact`, sent when the compaction has finished.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Compacted {
        pub tokens_before: Option<u64>,
        pub first_kept_entry_id: Option<String>,
        pub summary_chars: Option<u64>,
        pub estimated_tokens_after: Option<u64>,
        /// What the handoff pass did, when the compaction asked for one.
        pub handoff: Option<HandoffReport>,
    }

    /// Reply of `context_usage`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Usage {
        pub usage: Option<ContextUsage>,
        pub idle: Option<bool>,
    }

    /// Reply of `is_idle`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Idle {
        pub idle: bool,
        pub pending_messages: Option<bool>,
    }

    /// One custom entry in the reply of `get_entries`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Entry {
        pub id: Option<String>,
        pub custom_type: String,
        #[serde(default)]
        pub data: Value,
        pub timestamp: Option<String>,
    }

    /// Reply of `get_entries`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Entries {
        pub entries: Vec<Entry>,
        /// True when older entries were left out to respect the limit or the line bound.
        #[serde(default)]
        pub truncated: bool,
    }
}

/// Parses one line from the bridge.
pub fn parse_from_bridge(line: &[u8]) -> Result<FromBridge, serde_json::Error> {
    serde_json::from_slice(line)
}

/// Encodes one line to the bridge, newline included.
pub fn encode_to_bridge(msg: &ToBridge) -> Result<String, serde_json::Error> {
    let mut line = serde_json::to_string(msg)?;
    line.push('\n');
    Ok(line)
}

#[cfg(test)]
mod tests;
