//! One event that needs the person, as the server's list keeps it: what happened to which session,
//! what to quote, and what may be answered from afar.

pub use crate::away::Act;
use crate::brief::{Need, NeedKind};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// pi waits in a dialog.
    Dialog,
    /// The run ended on a question or a hand-back to the person.
    Question { yes_no: bool },
    /// pokeshell gave up on a stall.
    GaveUp,
    /// A provider-limit wait began; pokeshell resumes on its own at this moment (wall ms).
    LimitBegan { until_wall_ms: u64 },
    /// The wait that was pushed is over: the agent runs again.
    LimitEnded,
    /// The session ended on its own (pi exited, nobody killed it) with this code.
    Ended { code: i32 },
    /// A run finished without asking anything (pushed only with `pokeshell.pushFinished`).
    Finished,
    /// A guard rail paused the session: it waits for the person to allow more or leave it stopped.
    Paused,
}

impl EventKind {
    /// The event a session's need makes.
    pub fn of(need: &Need) -> EventKind {
        match need.kind {
            NeedKind::Dialog => EventKind::Dialog,
            NeedKind::Answer { yes_no } => EventKind::Question { yes_no },
            NeedKind::GaveUp => EventKind::GaveUp,
            NeedKind::Limit { until_wall_ms } => EventKind::LimitBegan { until_wall_ms },
            NeedKind::Paused => EventKind::Paused,
        }
    }

    /// The kind as pushes are coalesced by (per session): a limit that began and one that ended are
    /// the same story.
    pub fn class(self) -> &'static str {
        match self {
            EventKind::Dialog => "dialog",
            EventKind::Question { .. } => "question",
            EventKind::GaveUp => "gave_up",
            EventKind::LimitBegan { .. } | EventKind::LimitEnded => "limit",
            EventKind::Ended { .. } => "ended",
            EventKind::Finished => "finished",
            EventKind::Paused => "paused",
        }
    }

    /// What may be answered from afar, best first (a notification shows three buttons at most, the
    /// last of them "open").
    pub fn acts(self) -> Vec<Act> {
        match self {
            EventKind::Question { yes_no: true } => vec![Act::Yes, Act::No],
            EventKind::Question { yes_no: false } | EventKind::GaveUp | EventKind::Finished => {
                vec![Act::Continue]
            }
            EventKind::Dialog => vec![Act::Stop],
            EventKind::LimitBegan { .. } => vec![Act::ResumeNow, Act::Stop],
            EventKind::LimitEnded => vec![Act::Stop],
            EventKind::Paused => vec![Act::Allow, Act::Leave],
            EventKind::Ended { .. } => Vec::new(),
        }
    }
}

/// One event of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwayEvent {
    /// Unique in this server's life, increasing: a newer event of a session has a higher id.
    pub id: u64,
    pub session: u32,
    /// "3:api", as `pokeshell ls` names the session.
    pub label: String,
    pub kind: EventKind,
    /// What the person needs to decide, a few lines at most.
    pub quote: String,
    pub at_wall_ms: u64,
    /// What the person may answer from afar with a capability link (none once the event is over).
    pub acts: Vec<Act>,
}
