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
#[cfg(test)]
mod drive_tests;
mod error;
pub mod frame;
#[cfg(test)]
mod kind_tests;
mod listing;
#[cfg(test)]
mod message_strategies;
#[cfg(test)]
mod talk_strategies;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use error::WireError;
pub use frame::{FrameBuf, read_frame};
pub use listing::Listing;

/// The largest N a frame header may announce (kind byte plus payload).
pub const MAX_FRAME: usize = 1 << 20;

/// The protocol version a client announces in its hello; the server accepts only its own. 1: the
/// first; 2: the server may hold the client's terminal; 3: the kinds the away, guards, drive and
/// review work added (a server of 2 does not know them).
pub const PROTOCOL: u32 = 3;

/// What a server speaking `server` says to a client whose hello speaks `client` (another version of
/// pokeshell), and what to do about it; `server_pid` is the server's process. A client that hears
/// an older server's own words says this too ([`older_server_refusal`]).
pub fn protocol_mismatch(client: u32, server: u32, server_pid: u32) -> String {
    let end = format!(
        "end the server with `kill {server_pid}` (its sessions are saved, and the next server \
         brings them back), then run the command again"
    );
    if client < server {
        format!(
            "this pokeshell is older than the server that runs (pid {server_pid}): it speaks \
             protocol {client}, the server {server}; run the pokeshell that started the server, or \
             {end}"
        )
    } else {
        format!(
            "the pokeshell server that runs (pid {server_pid}) is older than this pokeshell: it \
             speaks protocol {server}, this pokeshell {client}; {end}"
        )
    }
}

/// The protocol of a server that refused our hello in the words of servers of protocol 1 and 2
/// ("the client speaks protocol 3, this server 2: …"), when those are its words.
pub fn older_server_refusal(message: &str) -> Option<u32> {
    let rest = message.strip_prefix("the client speaks protocol ")?;
    let (_, server) = rest.split_once(", this server ")?;
    let digits: String = server.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Every message's kind byte and its name, the one place either is given.
pub mod kind;

/// Client to server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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
        #[serde(default)]
        caps_follow: bool,
        env: Vec<(String, String)>,
        /// Only watching: this client's size never shrinks the pane while a client that is not
        /// watching is attached (a phone looking in on a desktop's session).
        #[serde(default)]
        watch: bool,
        /// The path of the client's terminal (its input and its output alike): the server may read
        /// keys from it and write frames to it itself, and says whether it does ([`Down::Terminal`]).
        #[serde(default)]
        terminal: Option<String>,
    },
    /// Raw bytes typed in the terminal.
    #[serde(skip)]
    Input(Vec<u8>),
    /// The terminal's raw answers to the capability probe, after an [`Up::Open`] that said they
    /// would follow.
    #[serde(skip)]
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
        /// The session whose agent asks ([`crate::drive::SESSION_ENV`]): the ledger names it.
        #[serde(default)]
        from: Option<String>,
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
    /// This client (a page) is visible to its person, or no longer: a visible page showing a
    /// session keeps pushes about it away (docs/away.md).
    Visible {
        visible: bool,
    },
    /// A capability link was used: answer `event` of session `session` with `act` (the web view
    /// checked the link; the server checks that the event is still the session's open one).
    Act {
        session: u32,
        event: u64,
        act: crate::away::Act,
    },
    /// End every login to the web view (every browser's, and the login links not used yet); every
    /// open page's socket closes. Answered with [`Down::Done`] (how many ended) or an error.
    WebLogoutAll,
    /// Tell this client the conversation of `session` (a name or number): the items after `since`
    /// of the log named `epoch` (everything kept when the log is another), then each new item as it
    /// comes ([`Down::Said`]), until another `talk` or the end of the connection.
    Talk {
        session: String,
        #[serde(default)]
        epoch: u64,
        #[serde(default)]
        since: u64,
    },
    /// What happened in each session after the item this client saw last ([`Down::Meanwhile`]).
    Away {
        seen: Vec<Seen>,
    },
    /// The text as the user's prompt for a session's agent (`pokeshell send`): answered by
    /// [`Down::Sent`] once pi has it, or an error.
    Send {
        /// A name, a number or `number:name`.
        session: String,
        text: String,
        /// While the agent works: steer it in at once rather than after the run's current work.
        #[serde(default)]
        steer: bool,
        /// The session whose agent sends ([`crate::drive::SESSION_ENV`]), if one does.
        #[serde(default)]
        from: Option<String>,
    },
    /// Tell me when a session is in this state (`pokeshell wait`), for the run the last message
    /// started: answered by [`Down::Reached`] when it is, or an error.
    Wait {
        session: String,
        until: crate::drive::Until,
        #[serde(default)]
        from: Option<String>,
    },
    /// A session's transcript (`pokeshell read`): answered by [`Down::Transcript`].
    Read {
        session: String,
        /// The last this many messages; `None`: the last reply.
        #[serde(default)]
        last: Option<u32>,
    },
    /// Tell me every state change and intervention (`pokeshell events`), of these sessions (all,
    /// those to come included, when empty), as [`Down::Event`]s until the connection ends.
    Events {
        #[serde(default)]
        sessions: Vec<String>,
    },
    /// A review of session `session`'s changes (a name or a number): its comments go to the agent
    /// as one message, through the supervisor (a follow-up while the agent works). Answered with
    /// [`Down::Done`] or [`Down::Error`].
    Review {
        session: String,
        comments: Vec<crate::diff::review::Comment>,
    },
    /// Answer a guard rail's pause in `session` (a name or number), whoever follows it: the web
    /// view's buttons, a notification's action (GUARD-A1, GUARD-A2). Answered with [`Down::Done`].
    Guard {
        session: String,
        answer: GuardAnswer,
    },
}

/// The person's answer to a guard rail's pause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum GuardAnswer {
    /// Allow `usd` more (else what the pause offered) and let the agent go on.
    Allow {
        #[serde(default)]
        usd: Option<f64>,
    },
    /// Leave it stopped.
    Leave,
}

/// The item of a session's conversation a client saw last ([`Up::Away`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    /// "3:api", a name or a number.
    pub session: String,
    #[serde(default)]
    pub epoch: u64,
    #[serde(default)]
    pub seq: u64,
}

/// What happened in one session after what a client saw ([`Down::Meanwhile`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AwayDigest {
    /// "3:api", as the user sees a session named.
    pub session: String,
    #[serde(flatten)]
    pub digest: crate::talk::Digest,
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
        /// The commit the session's changes are read against, when the client knows it (the
        /// worktree `new --worktree` made or reused); else the server's session records the
        /// commit checked out as it starts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<String>,
    },
}

/// Server to client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Down {
    Welcome {
        server_pid: u32,
        /// Saved sessions the server is still bringing back: a client waiting for an answer can
        /// say why it is slow.
        #[serde(default)]
        restoring: u32,
    },
    /// Raw bytes for the terminal.
    #[serde(skip)]
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
    Listing {
        sessions: Vec<Listing>,
    },
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
    /// The answer to an [`Up::Open`] that named its terminal, before anything else about it: `taken`,
    /// the server reads the keys and writes the frames there itself (after the terminal's answers
    /// to the probe, [`Up::Caps`], when they follow); otherwise the client reads its keys and sends
    /// them as before.
    Terminal {
        taken: bool,
    },
    /// An [`Up::Act`] was carried out: what was sent, in words.
    Acted {
        message: String,
    },
    /// A session wants the user (the events that ring a terminal's bell), for a subscribed client.
    Note {
        /// "3:api", as the user sees a session named.
        session: String,
        text: String,
    },
    /// Items of a session's conversation ([`Up::Talk`]): `fresh`, the first part of the answer to
    /// the ask (the client starts over from it); else what was said since.
    Said {
        session: String,
        epoch: u64,
        fresh: bool,
        entries: Vec<crate::talk::Entry>,
    },
    /// The answer to [`Up::Away`]: one digest for each session asked about that exists.
    Meanwhile {
        digests: Vec<AwayDigest>,
    },
    /// pi has the message of an [`Up::Send`]; `marker` numbers it among the session's messages.
    Sent {
        session: String,
        marker: u64,
    },
    /// The end of an [`Up::Wait`].
    Reached {
        session: String,
        outcome: crate::drive::Outcome,
        /// The attention keyword and `ls`'s words when it ended.
        attention: String,
        state: String,
        /// The program's exit code, when the session ended.
        #[serde(default)]
        code: Option<i32>,
        /// When the session saw the change (Unix ms), for measuring how soon a wait hears it.
        #[serde(default)]
        at_ms: u64,
    },
    /// The answer to an [`Up::Read`].
    Transcript {
        transcript: crate::drive::Transcript,
    },
    /// One event for an [`Up::Events`] client.
    Event {
        event: crate::drive::Event,
    },
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
