//! What the server's state sends a session's loop (the binary turns each into the loop's own event).

pub use crate::away::AwayAnswer;
use crate::bridge::UserRequest;
use crate::session::SessionBrief;

/// A signal the server passes on to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// End the session: pi is asked to quit, and killed after a grace.
    Term,
    /// A debugging aid: drop the bridge connection (the bridge inside pi connects again).
    Usr1,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SessionMsg {
    Signal(Signal),
    /// Something the user should know, for the session's footer.
    Notice(String),
    /// Every session of the server, as it last reported itself.
    Sessions(Vec<SessionBrief>),
    /// A client asked for what a prefix key does (the web view's buttons).
    Request(UserRequest),
    /// A client that follows the session answered the probe, typed, resized, came back or left.
    Client(ClientMsg),
    /// For those who drive the session: a prompt to give pi, a transcript to read, an agent ending it.
    Drive(crate::drive::ToSession),
    /// The person answered one of its events from afar, with a capability link (or was refused).
    Away(AwayAnswer),
    /// The rails that span sessions: the day's budget, the circuit breaker.
    Guard(crate::server::guards::GuardOrder),
}

/// A following client's doing; its coming is `ServerEffect::Follow`, which the binary performs.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMsg {
    /// The client's terminal answered the probe.
    Caps {
        id: u64,
        caps: Vec<u8>,
    },
    Detach {
        id: u64,
    },
    Input {
        id: u64,
        bytes: Vec<u8>,
    },
    Resize {
        id: u64,
        cols: u16,
        rows: u16,
    },
    /// The client was suspended with pi and is back.
    Resumed {
        id: u64,
        cols: u16,
        rows: u16,
    },
}
