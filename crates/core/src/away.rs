//! What the server's list of events that need the person (`server::away`) shares with the sessions
//! and the wire: the answers a capability link carries, a session's push settings, and an answer as
//! the session carries it out. Apart from `server` so that neither the session nor the wire imports
//! the server (docs/away.md).

pub mod policy;

use serde::{Deserialize, Serialize};

pub use self::policy::{Presence, PushPolicy, PushWhen};

/// An answer a capability link carries: each goes to pi the way the web view's buttons and the
/// prefix keys go (docs/away.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Act {
    /// The manual poke (prefix+p): the agent is asked to pick up its work.
    Continue,
    /// During a provider-limit wait: the manual poke, which resumes at once.
    ResumeNow,
    /// Stop the run (as Esc): nothing resumes on its own until the person acts.
    Stop,
    /// A quick answer to a yes-or-no question, sent as the person's own message.
    Yes,
    No,
    /// A guard rail's pause: allow what it offers more and let the agent go on (GUARD-A1).
    Allow,
    /// A guard rail's pause: leave the session stopped (GUARD-A2).
    Leave,
}

impl Act {
    /// The button's label.
    pub fn label(self) -> &'static str {
        match self {
            Act::Continue => "Continue",
            Act::ResumeNow => "Resume now",
            Act::Stop => "Stop the run",
            Act::Yes => "Yes",
            Act::No => "No",
            Act::Allow => "Allow more",
            Act::Leave => "Leave it stopped",
        }
    }

    /// Its name in a capability link's page and the ledger.
    pub fn keyword(self) -> &'static str {
        match self {
            Act::Continue => "continue",
            Act::ResumeNow => "resume_now",
            Act::Stop => "stop",
            Act::Yes => "yes",
            Act::No => "no",
            Act::Allow => "allow",
            Act::Leave => "leave",
        }
    }

    /// The person's message to the agent, for the quick answers.
    pub fn answer(self) -> Option<&'static str> {
        match self {
            Act::Yes => Some("Yes."),
            Act::No => Some("No."),
            _ => None,
        }
    }
}

/// A capability link's use, for the session to carry out and to record as the person's own action.
#[derive(Debug, Clone, PartialEq)]
pub struct AwayAnswer {
    pub act: Act,
    /// The event answered, as the list numbers them.
    pub event: u64,
    /// What the event was, in a few words ("the question: Should I …?").
    pub about: String,
    /// Why nothing was done, when the link was refused.
    pub refused: Option<String>,
}
