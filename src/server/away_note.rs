//! What the performer does with a session's note that no terminal sees: runs
//! `pokeshell.notifyCommand` (the core itself tells the terminals showing other sessions).

use pokeshell_core::server::notes::AwayNote;

/// Runs `pokeshell.notifyCommand`, if set.
pub fn run_command(note: &AwayNote) {
    if note.command.trim().is_empty() {
        return;
    }
    if let Err(e) = crate::pi::notify_command::run(&note.command, &note.text, &note.session) {
        eprintln!("pokeshell: pokeshell.notifyCommand: {e}");
    }
}
