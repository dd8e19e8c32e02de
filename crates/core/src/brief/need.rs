//! Why a session needs its person now: the one definition that the lists' attention (a question, a
//! give-up, a provider limit, a guard rail's pause), the pushes to a phone (`server::away`) and anything else that
//! asks "does it need me?" read. A session says it of itself ([`crate::session::Session::need`]); its
//! end, which only the server sees, is told apart there.

/// What the session waits for the person about, with the words the person needs to decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub kind: NeedKind,
    /// What to quote: the question's last lines, the give-up's reason, the dialog's title, the
    /// provider's error. One or a few short lines.
    pub quote: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeedKind {
    /// pi waits in a dialog (its `blocked` status report).
    Dialog,
    /// The run ended handing the turn back: a question, "let me know", an offer (the cases the
    /// promise classifier calls "no" and that wait for the person). `yes_no`: a plain yes or no
    /// answers it.
    Answer { yes_no: bool },
    /// pokeshell gave up on a stall.
    GaveUp,
    /// A provider limit: pokeshell waits until this moment (wall ms) and then resumes on its own.
    Limit { until_wall_ms: u64 },
    /// A guard rail paused the session (its budget, the day's budget, the call cap, a runaway): it
    /// waits for the person to allow more or to leave it stopped.
    Paused,
}

impl NeedKind {
    /// Its keyword, for logs and the notification's tags.
    pub fn keyword(self) -> &'static str {
        match self {
            NeedKind::Dialog => "dialog",
            NeedKind::Answer { .. } => "question",
            NeedKind::GaveUp => "gave_up",
            NeedKind::Limit { .. } => "limit",
            NeedKind::Paused => "paused",
        }
    }
}

/// A run that settled well without asking anything (for "a run finished while nobody watched",
/// off by default): how many have so far, and the last one's final words.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Finished {
    pub runs: u64,
    pub quote: String,
}
