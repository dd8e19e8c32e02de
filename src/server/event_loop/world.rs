//! What the loop hears from the world: one channel of [`WorldEvent`]s.

use super::ClientEvent;
use crate::pi::bridge::server::BridgeEvent;
use crate::term::pty::PtyEvent;
use pokeshell_core::config::{LoadedFile, SaveError};

pub use pokeshell_core::server::state::Signal;

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
    /// For a script or an agent driving the session (`pokeshell send`, `read`, an agent's kill).
    Drive(pokeshell_core::drive::ToSession),
    /// The person answered one of the session's events with a link from a push (or was refused).
    Away(pokeshell_core::server::state::AwayAnswer),
    /// The server's core on the rails that span sessions (the day's budget, the circuit breaker).
    Guard(pokeshell_core::server::guards::GuardOrder),
    /// The changes a client's overlay asked for, read off the loop's thread.
    Changes {
        client: u64,
        result: Result<pokeshell_core::diff::Changes, String>,
    },
}
