//! Scripts and agents driving sessions (`pokeshell send`, `wait`, `read`, `events`, `pokeshell
//! mcp`): the shapes both sides of the socket share, the checks every way in applies, and when a
//! wait is over. The server's part is `server::state::drive`, a session's `session::drive`.
//! docs/driving.md tells the whole story.

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::brief::Attention;

/// The variable pokeshell sets in pi's environment: the session's name. A `pokeshell` run from
/// inside the session (an agent's bash tool, `pokeshell mcp` started by pi) reads it to say who is
/// asking: the bounds and the ledger name that session.
pub const SESSION_ENV: &str = "POKESHELL_SESSION";

/// The longest text `send` takes, in bytes (UTF-8). Longer work belongs in a file the message names.
pub const MAX_TEXT_BYTES: usize = 128 << 10;

/// Sessions started by agents that may run at once, unless `pokeshell.maxAgentSessions` says
/// otherwise.
pub const DEFAULT_AGENT_SESSIONS: usize = 8;

/// The version of the documents `read --json` and `events --json` write. It changes only when a
/// field is renamed, removed or changes meaning; new fields come without a change.
pub const SCHEMA: u32 = 1;

/// The ledger's rule IDs for what agents do to sessions (docs/supervision.md, "Driven sessions").
pub mod rule {
    /// An agent started this session.
    pub const STARTED: &str = "DRIVE-N1";
    /// An agent sent this session a message.
    pub const MESSAGE: &str = "DRIVE-S1";
    /// An agent ended this session.
    pub const KILLED: &str = "DRIVE-K1";
}

/// What `wait --until` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    /// The agent's run is over and nothing carries it on by itself.
    Idle,
    /// The session needs the person ([`Attention::needs_you`]).
    NeedsYou,
    /// The session ended.
    Exited,
}

impl Until {
    /// As the command line writes it.
    pub fn word(self) -> &'static str {
        match self {
            Until::Idle => "idle",
            Until::NeedsYou => "needs-you",
            Until::Exited => "exited",
        }
    }
}

/// Why a text cannot be sent, if it cannot: empty (or only white space), or over [`MAX_TEXT_BYTES`].
pub fn check_text(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err("the text is empty: there is nothing to send".to_string());
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(format!(
            "the text has {} bytes; a message may have at most {} KiB (write the rest to a file and send its path)",
            text.len(),
            MAX_TEXT_BYTES >> 10
        ));
    }
    Ok(())
}

/// The text of a `send` as it goes to pi. pi draws a message's text on its screen as it is, so an
/// escape sequence in it would act on the terminal there (raise a notification naming the session,
/// clear the screen, write the clipboard where that is allowed): every character a terminal acts on
/// (C0 and C1 controls, DEL, the marks that reorder text) is written out as `\x1b`, `\u{202e}`.
/// Line ends and tabs stay; a CR LF is a line end.
pub fn defused(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    text.split('\n')
        .map(|line| crate::safe_text::escape_line(line, false))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a session says of its runs, for `wait`: messages are numbered by the server as they are
/// sent ("markers"); a session that was given a first prompt on its command line counts it as 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Marks {
    /// The highest marker whose run has begun (pi started a run after it, or settled after it).
    pub begun: u64,
    /// The highest marker whose run has settled for good: pi went idle with nothing queued.
    pub settled: u64,
    /// pokeshell is about to carry the run on itself (a resume sent or planned since the settle).
    pub going_on: bool,
}

/// Where a wait stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not yet.
    Waiting,
    /// The state asked for.
    Reached,
    /// Waiting for idle, the run stopped on something only the person can answer (a question, a
    /// rule that gave up): the wait ends, with its own status.
    Stopped,
}

/// Where a wait for `until` stands, for a session whose last brief says `attention` (`None` while it
/// starts), whose runs stand at `marks`, and to which messages up to `delivered` were sent.
/// [`Until::Exited`] is decided by the session's end alone.
pub fn verdict(until: Until, attention: Option<Attention>, marks: Marks, delivered: u64) -> Verdict {
    let Some(attention) = attention else {
        return Verdict::Waiting;
    };
    match until {
        Until::Exited => Verdict::Waiting,
        Until::NeedsYou if attention.needs_you() && marks.begun >= delivered => Verdict::Reached,
        Until::NeedsYou => Verdict::Waiting,
        Until::Idle if marks.settled < delivered || marks.going_on => Verdict::Waiting,
        Until::Idle => match attention {
            Attention::Idle => Verdict::Reached,
            Attention::Question | Attention::GaveUp => Verdict::Stopped,
            _ => Verdict::Waiting,
        },
    }
}

/// How a wait ended, as the server tells its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Reached,
    Stopped,
    /// The session ended first (or was ended).
    Ended,
}

/// What the server's core asks of a session for those who drive it.
#[derive(Debug, Clone, PartialEq)]
pub enum ToSession {
    /// Give pi this prompt (a follow-up while it works, or steered in at once); answer with
    /// [`FromSession::Delivered`] under the same marker.
    Send {
        marker: u64,
        text: String,
        steer: bool,
        /// The session of the agent that sends, if an agent does (for the ledger).
        from: Option<String>,
    },
    /// Answer with [`FromSession::Transcript`] under this ticket.
    Read { ticket: u64, last: Option<u32> },
    /// An agent in session `by` is ending this session: the ledger says so before it ends.
    Killed { by: String },
    /// The person's review of the session's changes (`Up::Review`), as the message for the agent:
    /// the supervisor sends it; answer with [`FromSession::Reviewed`] under this ticket once it was
    /// sent, or could not be.
    Review { ticket: u64, text: String },
}

/// What a session tells the server's core for those who drive it.
#[derive(Debug, Clone, PartialEq)]
pub enum FromSession {
    /// pi took the message with this marker, or it could not be given (`error`).
    Delivered {
        marker: u64,
        error: Option<String>,
    },
    Transcript {
        ticket: u64,
        transcript: Transcript,
    },
    /// The review under this ticket was sent to pi, or not (`error`, why).
    Reviewed {
        ticket: u64,
        error: Option<String>,
    },
    /// pokeshell acted on the session (a ledger action): for `events`.
    Intervention {
        rule: String,
        text: String,
    },
}

/// Tokens as pi counted them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Tokens {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
}

/// A tool call an assistant message asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    /// Bounded as the bridge bounds them: strings cut at 1000 characters, marked.
    #[serde(default)]
    pub arguments: Value,
}

/// One message of a session's transcript, as `read --json` writes it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Message {
    /// `user`, `assistant`, `tool_result`, `custom` (pokeshell's own messages and other
    /// extensions'), or `other`.
    pub role: String,
    /// Its text blocks joined by newlines; a long one (over 32 000 characters, a tool result's over
    /// 2000) keeps its start and its end around `…[N characters left out]…`.
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// A tool result's tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// An assistant message's: `stop`, `length`, `tool_use`, `error`, `aborted`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// An assistant reply's tokens, and their cost when pi has prices for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// When pokeshell heard of it (Unix ms).
    #[serde(default)]
    pub at_ms: u64,
}

impl Message {
    /// An assistant message with something to read: the agent's reply.
    pub fn is_reply(&self) -> bool {
        self.role == "assistant" && !self.text.trim().is_empty()
    }
}

/// What `pokeshell read` gets: a session's last reply, its last messages, its state and spend.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Transcript {
    pub schema: u32,
    /// `number:name`.
    pub session: String,
    /// The attention keyword (docs/machines.md) and the few words of `ls`'s STATE.
    pub attention: String,
    pub state: String,
    /// The text of the last assistant message that had any, or null.
    pub reply: Option<String>,
    /// The last messages asked for (`--last N`), oldest first; the last reply's message alone
    /// without `--last`.
    pub messages: Vec<Message>,
    /// Older messages than these were heard but are no longer kept (or do not fit one answer).
    #[serde(default)]
    pub truncated: bool,
    /// Since the session started.
    pub tokens: Tokens,
    pub cost_usd: Option<f64>,
    pub context_percent: Option<f64>,
}

/// One line of `pokeshell events`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Event {
    pub schema: u32,
    /// Unix ms.
    pub at_ms: u64,
    /// `number:name`.
    pub session: String,
    pub number: u32,
    pub name: String,
    /// `started`, `state`, `intervention`, `message`, `ended`.
    pub kind: String,
    /// `state`: the attention keyword and `ls`'s words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// `intervention`: the ledger's rule ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// `intervention`: what was done; `message`: how long the message was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `started`, `message`: the session of the agent that did it, when an agent did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// `ended`: the program's exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

impl Event {
    /// One line of text: `state idle`, `intervention POKE-W4 resumed …`, `ended (code 0)`.
    pub fn line(&self) -> String {
        let mut out = self.kind.clone();
        let mut add = |v: &Option<String>| {
            if let Some(v) = v {
                out.push(' ');
                out.push_str(v);
            }
        };
        match self.kind.as_str() {
            "state" => {
                add(&self.attention);
                if self.state.as_deref() != self.attention.as_deref() {
                    add(&self.state.as_ref().map(|s| format!("({s})")));
                }
            }
            _ => {
                add(&self.rule);
                add(&self.text);
            }
        }
        if let Some(by) = &self.by {
            out.push_str(&format!(" by {by}"));
        }
        if let Some(code) = self.code {
            out.push_str(&format!(" (code {code})"));
        }
        out
    }
}
