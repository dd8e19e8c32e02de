//! The protocol between a terminal (the client) and the pokeshell server that owns the sessions.
//!
//! A frame is a 4-byte big-endian length N, then N bytes: one kind byte and N-1 bytes of payload.
//! N is at least 1 and at most [`MAX_FRAME`]; a reader checks N before it allocates anything, so a
//! peer cannot make us reserve gigabytes by lying in a header. Keystrokes ([`Up::Input`]) and screen
//! bytes ([`Down::Output`]) travel as raw payload: they are the hot path and need no escaping. Every
//! other message carries one JSON object of its fields (snake_case names, unknown fields ignored).
//! `docs/protocol.md` has the table of kinds and the JSON shapes.
//!
//! Client kinds are below 0x80 and server kinds above, so a frame sent the wrong way decodes as an
//! unknown kind instead of as some other message.

mod body;
mod frame;
#[cfg(test)]
mod tests;

use std::fmt;
use std::io;

use serde::{Deserialize, Serialize};

pub use frame::{FrameBuf, read_frame, read_frame_async};

/// The largest N a frame header may announce (kind byte plus payload).
pub const MAX_FRAME: usize = 1 << 20;

/// The protocol version a client announces in its hello; the server accepts only its own.
pub const PROTOCOL: u32 = 1;

/// The kind bytes of the messages.
pub mod kind {
    pub const HELLO: u8 = 0x01;
    pub const OPEN: u8 = 0x02;
    pub const INPUT: u8 = 0x03;
    pub const RESIZE: u8 = 0x04;
    pub const DETACH: u8 = 0x05;
    pub const RESUMED: u8 = 0x06;
    pub const LIST: u8 = 0x07;
    pub const KILL: u8 = 0x08;
    pub const CAPS: u8 = 0x09;
    pub const COMMAND: u8 = 0x0a;
    pub const WEB: u8 = 0x0b;
    pub const SUBSCRIBE: u8 = 0x0c;

    pub const WELCOME: u8 = 0x81;
    pub const OUTPUT: u8 = 0x82;
    pub const ATTACHED: u8 = 0x83;
    pub const DETACHED: u8 = 0x84;
    pub const EXITED: u8 = 0x85;
    pub const SUSPEND: u8 = 0x86;
    pub const LISTING: u8 = 0x87;
    pub const DONE: u8 = 0x88;
    pub const ERROR: u8 = 0x89;
    pub const HOP: u8 = 0x8a;
    pub const SIZE: u8 = 0x8b;
    pub const WEB_LOGIN: u8 = 0x8c;
    pub const NOTICE: u8 = 0x8d;
    pub const NOTE: u8 = 0x8e;

    /// The message's name, for error texts and logs.
    pub fn name(kind: u8) -> Option<&'static str> {
        Some(match kind {
            HELLO => "hello",
            OPEN => "open",
            INPUT => "input",
            RESIZE => "resize",
            DETACH => "detach",
            RESUMED => "resumed",
            LIST => "list",
            KILL => "kill",
            CAPS => "caps",
            COMMAND => "command",
            WEB => "web",
            SUBSCRIBE => "subscribe",
            WELCOME => "welcome",
            OUTPUT => "output",
            ATTACHED => "attached",
            DETACHED => "detached",
            EXITED => "exited",
            SUSPEND => "suspend",
            LISTING => "listing",
            DONE => "done",
            ERROR => "error",
            HOP => "hop",
            SIZE => "size",
            WEB_LOGIN => "web_login",
            NOTICE => "notice",
            NOTE => "note",
            _ => return None,
        })
    }
}

/// Client to server.
#[derive(Debug, Clone, PartialEq)]
pub enum Up {
    /// Always the first message of a connection.
    Hello {
        token: String,
        protocol: u32,
    },
    /// Attach to a session or start one, with what the server needs to know of this terminal.
    Open {
        target: Target,
        cols: u16,
        rows: u16,
        /// The terminal's raw answers to the capability probe.
        caps: Vec<u8>,
        /// The answers are still coming, as [`Up::Caps`]: pi's queries wait for them (a client sends
        /// this so that pi starts while its terminal is still being probed).
        caps_follow: bool,
        env: Vec<(String, String)>,
        /// Only watching: this client's size never shrinks the pane while a client that is not
        /// watching is attached (a phone looking in on a desktop's session).
        watch: bool,
    },
    /// Raw bytes typed in the terminal.
    Input(Vec<u8>),
    /// The terminal's raw answers to the capability probe, after an [`Up::Open`] that said they
    /// would follow.
    Caps(Vec<u8>),
    Resize {
        cols: u16,
        rows: u16,
    },
    Detach,
    /// The client was stopped (Ctrl+Z) and runs again, at this size.
    Resumed {
        cols: u16,
        rows: u16,
    },
    List,
    Kill {
        name: String,
    },
    /// What a prefix key does, for the session this client follows (a browser has no prefix key).
    Command(SessionCommand),
    /// Serve the web view (starting it on `listen`, or the default address, when it does not run
    /// yet) and give a one-time login for it.
    Web {
        listen: Option<String>,
    },
    /// Keep this client told: the session list now and whenever it changes ([`Down::Listing`]),
    /// and every session's notification ([`Down::Note`]). The web view asks it once for all its
    /// pages.
    Subscribe,
}

/// A prefix key's action, asked for by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum SessionCommand {
    /// prefix+p: a manual poke (during a limit wait: resume now).
    Poke,
    /// prefix+h with its focus line.
    Handoff {
        #[serde(default)]
        focus: Option<String>,
    },
    /// The settings dialog's master switch, `poke.enabled`, for this session.
    Supervision { on: bool },
}

/// Which session an [`Up::Open`] is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Target {
    /// An existing session; `None` = the one the server picks (the most recent).
    Attach { name: Option<String> },
    /// A new session in `dir`, run with pokeshell's command line `args` (pi's arguments after
    /// `--`, or `--command` for another program).
    New {
        name: Option<String>,
        dir: String,
        args: Vec<String>,
    },
}

/// Server to client.
#[derive(Debug, Clone, PartialEq)]
pub enum Down {
    Welcome {
        server_pid: u32,
        /// Saved sessions the server is still bringing back: a client waiting for an answer can
        /// say why it is slow.
        restoring: u32,
    },
    /// Raw bytes for the terminal.
    Output(Vec<u8>),
    Attached {
        name: String,
    },
    Detached {
        reason: String,
    },
    /// The session's program ended; `farewell` is printed after the terminal is restored.
    Exited {
        code: i32,
        farewell: Vec<u8>,
    },
    /// pi stopped itself (Ctrl+Z): the client stops until resumed, then sends [`Up::Resumed`].
    Suspend,
    Listing(Vec<Listing>),
    /// A request succeeded (a kill, say).
    Done {
        message: String,
    },
    Error {
        message: String,
    },
    /// The user chose a session on another machine: the client leaves this server and attaches
    /// there (`ssh -t DEST pokeshell attach NAME`).
    Hop {
        dest: String,
        name: String,
    },
    /// Something the user should know that happened without them (a saved list set aside, a session
    /// not brought back): told once, to the next client.
    Notice {
        message: String,
    },
    /// The size of the session's pane: sent at attach and whenever it changes (a watching client
    /// fits itself to it).
    Size {
        cols: u16,
        rows: u16,
    },
    /// The web view listens at `url`; `login` is a one-time token for it.
    WebLogin {
        url: String,
        login: String,
        /// It listens beyond loopback.
        exposed: bool,
    },
    /// A session wants the user (the events that ring a terminal's bell), for a subscribed client.
    Note {
        /// "3:api", as the user sees a session named.
        session: String,
        text: String,
    },
}

/// One session in a [`Down::Listing`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    pub name: String,
    pub dir: String,
    pub state: String,
    pub tool: Option<String>,
    /// How long the running tool has run, in seconds, as `tool` says it (a page counts on from it).
    #[serde(default)]
    pub tool_secs: Option<u64>,
    pub last_intervention: Option<String>,
    pub age_secs: u64,
    /// How many clients are attached.
    pub attached: usize,
    /// Tokens since the session started: prompt tokens not from the cache, output, cache reads.
    #[serde(default)]
    pub tokens_in: u64,
    #[serde(default)]
    pub tokens_out: u64,
    #[serde(default)]
    pub cache_read: u64,
    /// US dollars, as pi priced the replies; `None` when pi has no prices for the model.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// How much it needs the user (`crate::machines::schema::ATTENTION`); empty while starting.
    #[serde(default)]
    pub attention: String,
    /// Filled by the client from `dir` (`crate::worktree`), never sent by the server.
    #[serde(default, skip)]
    pub branch: Option<String>,
    #[serde(default, skip)]
    pub dirty: Option<bool>,
    /// The share of pi's context window in use, 0–100.
    #[serde(default)]
    pub context_percent: Option<f64>,
}

/// Why a frame could not be read or a message not decoded. Any of them leaves the stream of frames
/// out of step or the peer untrustworthy: the connection should end.
#[derive(Debug)]
pub enum WireError {
    /// A header announced more than [`MAX_FRAME`] bytes.
    TooLong { len: usize },
    /// A header announced 0 bytes: not even a kind byte.
    Empty,
    /// The stream ended inside a frame.
    Truncated,
    /// No message of this direction has this kind.
    UnknownKind { kind: u8 },
    /// The payload does not fit the kind.
    BadMessage { kind: u8, reason: String },
    /// Reading failed.
    Io(io::Error),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::TooLong { len } => write!(f, "frame of {len} bytes exceeds the 1 MiB limit"),
            WireError::Empty => write!(f, "frame of 0 bytes: every frame has at least its kind byte"),
            WireError::Truncated => write!(f, "the peer closed the connection in the middle of a frame"),
            WireError::UnknownKind { kind } => {
                write!(
                    f,
                    "bad message of kind {kind:#04x}: no message of this kind goes this way"
                )
            }
            WireError::BadMessage { kind, reason } => match kind::name(*kind) {
                Some(name) => write!(f, "bad message of kind {kind:#04x} ({name}): {reason}"),
                None => write!(f, "bad message of kind {kind:#04x}: {reason}"),
            },
            WireError::Io(e) => write!(f, "reading the connection failed: {e}"),
        }
    }
}

impl std::error::Error for WireError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WireError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<WireError> for io::Error {
    fn from(e: WireError) -> io::Error {
        match e {
            WireError::Io(e) => e,
            WireError::Truncated => io::Error::new(io::ErrorKind::UnexpectedEof, e.to_string()),
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}

/// The whole frame (or frames) of a client message. Input longer than one frame holds is split into
/// several Input frames, which mean the same bytes.
pub fn encode_up(message: &Up) -> Vec<u8> {
    body::encode_up(message)
}

/// The whole frame (or frames) of a server message. Output longer than one frame holds is split into
/// several Output frames, which mean the same bytes.
pub fn encode_down(message: &Down) -> Vec<u8> {
    body::encode_down(message)
}

/// The frame(s) of `Up::Input(bytes)` without building the message: the client's hot path.
pub fn encode_input(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    body::push_raw(&mut out, kind::INPUT, bytes);
    out
}

/// The frame(s) of `Down::Output(bytes)` without building the message: the server's hot path.
pub fn encode_output(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    body::push_raw(&mut out, kind::OUTPUT, bytes);
    out
}

/// A client message from a frame's kind and payload.
pub fn decode_up(kind: u8, payload: &[u8]) -> Result<Up, WireError> {
    body::decode_up(kind, payload)
}

/// A server message from a frame's kind and payload.
pub fn decode_down(kind: u8, payload: &[u8]) -> Result<Down, WireError> {
    body::decode_down(kind, payload)
}
