//! A notification of a session, as the server's state hands it on: to the terminals that show
//! other sessions, or to `pokeshell.notifyCommand` when nobody would see it (run by the binary's
//! `server::away_note`).

/// A session wants the user, and nobody is attached to it.
#[derive(Debug, Clone, PartialEq)]
pub struct AwayNote {
    pub text: String,
    pub bell: bool,
    pub desktop: bool,
    /// `pokeshell.notifyCommand` as the session's settings had it when it notified.
    pub command: String,
    /// The session's name, for the command and the other terminals.
    pub session: String,
}

impl AwayNote {
    /// What a terminal showing another session shows: the text names this one.
    pub fn text_for_others(&self) -> String {
        format!("{}: {}", self.session, self.text)
    }
}
