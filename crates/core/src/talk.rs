//! A session's conversation as a person reads it on a phone: the prompts, the agent's replies and
//! the tool calls they made, what each tool answered (a glimpse), what pokeshell did on its own and
//! where each run ended, with what it cost. The web view's conversation view shows it; opening a
//! session or the list after being away shows what happened meanwhile ([`Digest`]).
//!
//! [`Heard`] turns what a session's loop sees (the bridge's events, the intervention records) into
//! [`Said`] items; [`Talk`] keeps the last of them, numbered and bounded, in the server's core. No
//! I/O here: the times come from the callers.

mod heard;
mod log;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use heard::{Heard, call_line};
pub use log::{Digest, MAX_BYTES, MAX_ENTRIES, Talk};

/// The longest text of a prompt or a reply kept (characters; the bridge bounds it too).
pub const TEXT_MAX: usize = 4000;
/// The longest glimpse of a tool's result kept.
pub const RESULT_MAX: usize = 600;
/// The longest one-line form of a tool call's arguments.
pub const CALL_MAX: usize = 300;

/// Who wrote a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum By {
    /// The person, in a terminal or a page.
    #[default]
    You,
    /// pokeshell's own message (a poke, a wakeup, a resume).
    Pokeshell,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    Done,
    /// Stopped: Esc, or pokeshell's abort.
    Aborted,
    /// The model's request failed (the error is said).
    Failed,
}

/// One tool call of a reply, in one line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    /// What it was asked to do, in one line: its command, its path, or its arguments.
    pub call: String,
}

/// One item of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Said {
    Prompt {
        by: By,
        text: String,
    },
    /// The agent's words and the tool calls of one reply.
    Reply {
        text: String,
        tools: Vec<ToolUse>,
    },
    /// A tool's answer to the call `id`.
    Result {
        id: String,
        name: String,
        ok: bool,
        text: String,
    },
    /// Something pokeshell did on its own (an action of the intervention log).
    Intervention {
        rule: String,
        text: String,
    },
    /// A run settled.
    RunEnd {
        ending: Ending,
        #[serde(default)]
        error: Option<String>,
        /// What the run's replies cost, as pi priced them; `None` when pi has no prices.
        #[serde(default)]
        cost_usd: Option<f64>,
        #[serde(default)]
        tokens_out: u64,
    },
}

impl Said {
    /// The bytes of text it holds (what the log's bound counts).
    pub fn weight(&self) -> usize {
        match self {
            Said::Prompt { text, .. } | Said::Intervention { text, .. } => text.len(),
            Said::Reply { text, tools } => {
                text.len()
                    + tools
                        .iter()
                        .map(|t| t.name.len() + t.call.len() + t.id.len())
                        .sum::<usize>()
            }
            Said::Result { text, id, .. } => text.len() + id.len(),
            Said::RunEnd { error, .. } => error.as_ref().map_or(0, String::len),
        }
    }
}

/// An item with its place in the session's log and its time (wall clock, Unix milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub seq: u64,
    pub at_ms: u64,
    #[serde(flatten)]
    pub said: Said,
}

/// `text` cut to at most `max` characters, its start and its end kept around a marker (the
/// bridge cuts the same way; this bounds what a bridge of another version sends).
pub fn bounded(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let head = max / 4;
    let tail = max - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start}\n…[{} characters left out]…\n{end}", count - head - tail)
}
