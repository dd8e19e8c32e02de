//! What crosses the session's one boundary: an [`Input`] is a fact from the world, an [`Effect`] a
//! request to it. `Session::handle` takes the one and returns the others.

use super::{ClientId, SessionBrief, WorkspaceRequest};
use crate::bridge::BridgeEvent;
use crate::bridge::Command;
use crate::config::{Change, ConfigPaths, KeyId, LoadedFile, SaveError, SettingValue};
use crate::screen::ChildModes;
use crate::screen::HostModes;
use crate::supervisor::LedgerRecord;
use crate::ui::theme::Tone;

/// A fact from the world, for [`Session::handle`].
#[derive(Debug)]
pub enum Input {
    /// Bytes the user typed or pasted in a client's terminal.
    Stdin { client: ClientId, bytes: Vec<u8> },
    /// No more input came from this client for a while: its held partial sequence goes out as it is.
    InputIdle { client: ClientId },
    /// The client left: its keyboard (half-typed keys, prefix, overlay) goes with it.
    ClientLeft { client: ClientId },
    /// The child drew: its input modes now, and what it wrote for the host terminal itself
    /// (title, clipboard, bell, notifications).
    ChildOutput { modes: ChildModes, host_bytes: Vec<u8> },
    /// The child started with this pid.
    ChildStarted { pid: i32 },
    /// The child stopped itself (job control).
    ChildStopped,
    /// The child exited with this shell exit code, killed by `signal` if one did.
    ChildExited { code: i32, signal: Option<i32> },
    /// A relaunch asked for with [`Effect::Respawn`] did not start: its directory cannot be used
    /// (gone, or not a directory), and pi is never started anywhere else. Why, in words.
    ChildNotStarted { why: String },
    /// pokeshell itself did not run for this long (it was stopped, or its loop was held up): that
    /// time is not pi's silence.
    LoopAway { ms: u64 },
    /// pi sent a program-status report (OSC 7501); `None`: it withdrew its status.
    ProgramStatus(Option<crate::screen::ProgramStatus>),
    /// Anything the bridge server reports, replies to commands included.
    Bridge(BridgeEvent),
    /// The settings files as just read (after [`Effect::LoadSettings`]).
    SettingsLoaded(Vec<LoadedFile>),
    /// The outcome of [`Effect::SaveSettings`], with the files as read right after.
    SettingsSaved {
        result: Result<(), SaveError>,
        files: Vec<LoadedFile>,
    },
    /// Settings changed from outside the dialog, through the dialog's own path.
    ApplySettings(Vec<Change>),
    /// Text typed into pi on the user's behalf, past pokeshell's keys.
    TypeIntoChild(Vec<u8>),
    /// Something the user should read in the footer.
    Notice { text: String, tone: Tone },
    /// What a prefix key or a pi command does, asked for by a client without keys (the web view).
    Request(crate::bridge::UserRequest),
    /// For a script or an agent driving the session: a message for pi, a read, an agent ending it.
    Drive(crate::drive::ToSession),
    /// The person answered one of the session's events from afar (a link from a push), or the
    /// link was refused.
    Away(crate::away::AwayAnswer),
    /// The intervention ledger's state changed: why records are not written (or were not), or
    /// `None` when all is well.
    LedgerStatus(Option<String>),
    /// Time passed.
    Tick,
    /// Something drawn from outside the session changed (a layer's side pane section).
    Redraw,
    /// The host terminal has this size now.
    Resize { cols: u16, rows: u16 },
    /// pokeshell was suspended with pi and is back: the terminal's modes are gone.
    Resumed { cols: u16, rows: u16 },
    /// Every session's brief (this one's included), as the server last saw them.
    Sessions(Vec<SessionBrief>),
    /// The changes a client's overlay asked for ([`Effect::ReadChanges`]), or why there are none.
    Changes {
        client: ClientId,
        result: Result<crate::diff::Changes, String>,
    },
    /// The user's local time is this many seconds east of UTC (given at start and again when it
    /// changes, e.g. with daylight saving): times are shown in it, and provider reset times written
    /// without a zone are read in it.
    LocalTime { utc_offset_secs: i32 },
    /// The server's core on the rails that span sessions: the day's budget, a provider failure other
    /// sessions met too.
    Guard(crate::supervisor::guard::circuit::GuardOrder),
}

/// A request to the world, from [`Session::handle`].
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Bytes for the child's input.
    ToChild(Vec<u8>),
    /// The pane has this size now: resize the PTY and the mirror.
    ResizePane { cols: u16, rows: u16 },
    /// Set the host terminal's input modes (keyboard, mouse, focus) to these.
    HostModes(HostModes),
    /// Bytes the child meant for the host terminal itself: title, clipboard, bell, notifications.
    ToHost(Vec<u8>),
    /// A program-status report (OSC 7501) for the terminals that answered the status query in
    /// their start-up probe, and only those.
    StatusReport(Vec<u8>),
    /// Draw again.
    Redraw,
    /// Send a command to the bridge under this id; its reply (or the failure to send it) comes back
    /// as a [`BridgeEvent::Reply`] with the same id.
    Bridge { id: u64, command: Command },
    /// Ring the bell and/or send a desktop notification.
    Notify { text: String, bell: bool, desktop: bool },
    /// Append a record to the intervention ledger.
    Ledger(LedgerRecord),
    /// Read the settings files again; the result comes back as [`Input::SettingsLoaded`].
    LoadSettings(ConfigPaths),
    /// Write these values into the settings file at `path`, then read the files under `paths`
    /// again; the result comes back as [`Input::SettingsSaved`].
    SaveSettings {
        paths: ConfigPaths,
        path: std::path::PathBuf,
        values: Vec<(KeyId, SettingValue)>,
    },
    /// pi is suspending itself (Ctrl+Z): stop pokeshell with it until `fg`.
    Suspend,
    /// Relaunch pi with these arguments in the same pane: end the child first if it still runs
    /// (SIGTERM to its group, SIGKILL after a grace), then start the new one with a fresh mirror and
    /// report [`Input::ChildStarted`].
    Respawn { args: Vec<String> },
    /// Read the changes of the checkout `dir` is in against `base` (git, off the loop's thread); they
    /// come back as [`Input::Changes`] for `client`. No base: the commit checked out now, as git
    /// finds it.
    ReadChanges {
        client: ClientId,
        dir: String,
        base: Option<String>,
    },
    /// Something only the server holding every session can do (detach, switch, start another),
    /// asked from this client's keyboard: the server does it for that client.
    Workspace { client: ClientId, req: WorkspaceRequest },
    /// For the server's core: what spans sessions (a priced reply, a provider failure, an answer to
    /// the day's pause).
    Guard(crate::supervisor::guard::circuit::GuardNote),
    /// An answer for the server's core, for those who drive the session (the server's observer
    /// hands it on).
    Drive(crate::drive::FromSession),
}
