//! What the server's state hears and what it asks for.

use super::AwayNote;
use super::SessionMsg;
use crate::brief::{Finished, Need};
use crate::server::away::{Push, PushPolicy};
use crate::server::restore_plan::Found;
use crate::server::saved_session::SavedSession;
use crate::session::{SessionBrief, WorkspaceRequest};
use crate::spec::SessionSpec;
use crate::wire::{Down, Up};

/// What happened, as the server's state hears it.
// A report (the largest) goes only when something changed; boxing it would allocate each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum ServerEvent {
    /// A client passed the socket's checks and said hello.
    Connected {
        id: u64,
    },
    Up {
        id: u64,
        up: Up,
    },
    /// Client `id` typed into the session it follows (its keys went the short way, straight to
    /// the session; said at most about once a second).
    Typed {
        id: u64,
    },
    /// Keys typed in a client ([`Up::Input`] as its connection sends it), counted against the
    /// client's input bound until the session's loop takes them.
    Input {
        id: u64,
        bytes: Vec<u8>,
    },
    /// The client sent something that is not a message: it is dropped.
    Garbage {
        id: u64,
        reason: String,
    },
    Gone {
        id: u64,
    },
    /// The user asked, from a session's keys, for something beyond it.
    Request {
        id: u64,
        req: WorkspaceRequest,
    },
    /// A session's screen let go of client `id`: it did not read what it was sent.
    Lagged {
        id: u64,
        /// How many bytes waited for it (the screen's bound), for the word it gets.
        bound: usize,
    },
    /// A session's thread is up (or could not start).
    Started {
        number: u32,
        result: Result<(), String>,
    },
    /// What a session says of itself, as it changes.
    Report {
        number: u32,
        report: Report,
    },
    Ended {
        number: u32,
        code: i32,
        shutdown: bool,
        farewell: Vec<u8>,
    },
    /// The list of saves up to `seq` is on disk (or failed, said in the log).
    Saved {
        seq: u64,
    },
    /// The server starts: the sessions a previous server left, and the server's own environment
    /// (for sessions started without a client's).
    Restore {
        /// Each with what was found on disk of its directory and session file.
        saved: Vec<(SavedSession, Found)>,
        env: Vec<(String, String)>,
        /// What the server found and did about the list itself (a list set aside, a newer
        /// pokeshell's left alone): logged, and told to the next client.
        news: Vec<String>,
    },
    /// SIGTERM or SIGINT: end every session, keep them saved, exit.
    Shutdown,
    /// The other machines' sessions, as the background asker found them (`remote_list`).
    Remote(Vec<crate::session::SessionBrief>),
    /// SIGUSR1: drop every session's bridge connection.
    DropBridges,
    /// A session answers those who drive it (`pokeshell send`, `read`, `events`).
    Drive {
        number: u32,
        out: crate::drive::FromSession,
    },
    /// How many sessions started by agents may run at once (`pokeshell.maxAgentSessions`, from the
    /// global settings as they are now).
    DriveBound(usize),
    /// The web view listens: a page may ask for a session at any time, so the server stays.
    WebListening,
    /// The time the list of events that need the person asked to be looked at again has come
    /// ([`ServerEffect::AwayTimer`]).
    AwayTick,
    /// What a session met that spans sessions: a priced reply, a provider failure, an answer to the
    /// day's pause (GUARD-B2, GUARD-K1..K3).
    Guard {
        number: u32,
        note: crate::server::guards::GuardNote,
    },
    /// What session `number`'s loop heard of its conversation (`crate::talk`).
    Talk {
        number: u32,
        said: Vec<crate::talk::Said>,
    },
    /// A session wants the user (its attached terminals were told by the session itself).
    Notify {
        number: u32,
        text: String,
        bell: bool,
        desktop: bool,
        /// `pokeshell.notifyCommand` as the session's settings have it.
        command: String,
    },
}

/// What a session tells the server about itself.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    pub brief: Option<SessionBrief>,
    /// The commit the session's changes are read against, once its thread looked it up.
    pub base: Option<String>,
    /// Where its directory led when it first started (`SessionSpec::real_dir`).
    pub real_dir: Option<String>,
    pub session_file: Option<String>,
    pub mid_run: bool,
    /// Where its runs stand, for `pokeshell wait`.
    pub drive: crate::drive::Marks,
    /// When the session saw what it reports (Unix ms), for measuring how soon a wait hears it.
    pub at_ms: u64,
    /// What it waits for its person about now (`Session::need`).
    pub need: Option<Need>,
    /// Its runs that finished without asking anything.
    pub finished: Finished,
    /// Its push settings and time zone.
    pub push: PushPolicy,
}

/// A session to start: who it is, and the terminal it starts for.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionStart {
    pub spec: SessionSpec,
    pub cols: u16,
    pub rows: u16,
    /// Terminal capabilities to give pi at once, for a session started with nobody attached.
    pub caps_now: Option<Vec<u8>>,
}

/// What the server's state wants done.
#[derive(Debug)]
pub enum ServerEffect {
    /// A message for a client's terminal.
    Tell { id: u64, down: Down },
    /// Client `id` shows session `number` from now on: its connection takes the session's frames,
    /// the session draws everything for it.
    Follow {
        id: u64,
        number: u32,
        cols: u16,
        rows: u16,
        /// `None`: the terminal's answers follow as [`ClientMsg::Caps`].
        caps: Option<Vec<u8>>,
        /// The client only watches: its size does not shrink the pane.
        watch: bool,
    },
    /// Client `id` no longer shows session `number`.
    Unfollow { id: u64, number: u32 },
    /// Something for a session's loop (never an attach: see [`ServerEffect::Follow`]).
    ToSession { number: u32, ev: SessionMsg },
    /// Start a session's thread; it answers with [`ServerEvent::Started`].
    Start(SessionStart),
    /// Replace the saved list with this one (in one step, durably); answered with
    /// [`ServerEvent::Saved`].
    SaveList { seq: u64, list: Vec<SavedSession> },
    /// Run `pokeshell.notifyCommand` for a note nobody sees.
    RunNotifyCommand(AwayNote),
    /// Close the client's connection once what was told is written.
    Forget { id: u64 },
    /// Start the web view (src/web) at `listen` (the default address when `None`), or say where
    /// it already listens; client `id` hears the login or the error, and the state hears
    /// [`ServerEvent::WebListening`].
    StartWeb { id: u64, listen: Option<String> },
    /// End every login to the web view and tell client `id` how many ended.
    WebLogoutAll { id: u64 },
    /// Something for the server's log.
    Log(String),
    /// This many saved sessions are still being brought back (a client's welcome says so).
    Restoring(u32),
    /// Push an event that needs the person to every way of telling (ntfy, Web Push).
    Push(Push),
    /// Send [`ServerEvent::AwayTick`] at this moment (mono ms), instead of any time asked before;
    /// `None`: at none.
    AwayTimer(Option<u64>),
}
