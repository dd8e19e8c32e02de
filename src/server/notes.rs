//! A notification of a session, as the server's state hands it on: to the terminals that show
//! other sessions, or to `pokeshell.notifyCommand` when nobody would see it.

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
    /// Runs `pokeshell.notifyCommand`, if set.
    pub fn run_command(&self) {
        if self.command.trim().is_empty() {
            return;
        }
        if let Err(e) = crate::pi::notify_command::run(&self.command, &self.text, &self.session) {
            eprintln!("pokeshell: pokeshell.notifyCommand: {e}");
        }
    }

    /// The bell and desktop notification for a terminal that shows another session: the text
    /// names this one.
    pub fn bytes(&self) -> Vec<u8> {
        let text = format!("{}: {}", self.session, self.text);
        crate::pi::notify::desktop(&text, self.bell, self.desktop)
    }
}
