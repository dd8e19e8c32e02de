//! What the loop hears from the world: one channel of [`WorldEvent`]s.

use super::ClientEvent;
use crate::pi::bridge::server::BridgeEvent;
use crate::term::pty::PtyEvent;
use pokeshell_core::config::{LoadedFile, SaveError};

/// A signal the server passes on to the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// End the session: pi is asked to quit, and killed after a grace.
    Term,
    /// A debugging aid: drop the bridge connection (the bridge inside pi connects again).
    Usr1,
}

/// Something that happened in the world.
#[derive(Debug)]
pub enum WorldEvent {
    Pty(PtyEvent),
    Bridge(BridgeEvent),
    Signal(Signal),
    /// Something the user should know, e.g. what `pi --version` said.
    Notice(String),
    SettingsLoaded(Vec<LoadedFile>),
    SettingsSaved {
        result: Result<(), SaveError>,
        files: Vec<LoadedFile>,
    },
    /// A client of the server attached, typed, resized or left.
    Client(ClientEvent),
    /// Every session of the server, as it last reported itself.
    Sessions(Vec<pokeshell_core::session::SessionBrief>),
    /// A client asked for what a prefix key does (the web view's buttons).
    Request(pokeshell_core::bridge::UserRequest),
}
