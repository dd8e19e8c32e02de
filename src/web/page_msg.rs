//! The page's messages over its WebSocket, and their translation to the server's wire messages.
//! Page to server: JSON text messages. Server to page: the pane's bytes as binary messages (the hot
//! path, untouched) and everything else as JSON text.

use serde::{Deserialize, Serialize};

use super::new_session::{self, Form, Plan};
use pokeshell_core::diff::Changes;
use pokeshell_core::diff::review::Comment;
use pokeshell_core::talk::Entry;
use pokeshell_core::wire::{AwayDigest, Down, GuardAnswer, Listing, Seen, SessionCommand, Target, Up};

/// The largest message the page may send. Typing and pasting fit; anything bigger is refused.
pub const MAX_PAGE_MESSAGE: usize = 64 << 10;

/// A message from the page.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromPage {
    /// Show a session (by name or number) at this size; `watch`: only look (see docs/web.md).
    Open {
        session: String,
        cols: u16,
        rows: u16,
        #[serde(default)]
        watch: bool,
    },
    /// Text typed: keys as the terminal widget encodes them.
    Input {
        data: String,
    },
    Resize {
        cols: u16,
        rows: u16,
    },
    Poke,
    Handoff {
        #[serde(default)]
        focus: Option<String>,
    },
    Supervision {
        on: bool,
    },
    /// A new session in `dir` with a fresh pi (and the server's options), shown at once; named
    /// `name`, in a worktree of branch `worktree` (as `pokeshell new --name --worktree`).
    New {
        dir: String,
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        worktree: Option<String>,
        cols: u16,
        rows: u16,
    },
    Kill {
        session: String,
    },
    /// A guard rail's pause in `session` answered: allow more (`usd`, else what it offered) and go on.
    Allow {
        session: String,
        #[serde(default)]
        usd: Option<f64>,
    },
    /// ... or leave it stopped.
    Leave {
        session: String,
    },
    /// Stop showing the session.
    Close,
    /// The page is visible to its person, or no longer (`document.visibilityState`): a visible page
    /// showing a session keeps pushes about it away.
    Visible {
        visible: bool,
    },
    /// Tell the page the conversation of `session` after item `since` of log `epoch`, then each new
    /// item (the conversation view).
    Talk {
        session: String,
        #[serde(default)]
        epoch: u64,
        #[serde(default)]
        since: u64,
    },
    /// What happened in each of these sessions after the item the page saw last.
    Away {
        seen: Vec<Seen>,
    },
    /// The changes of a session (by name or number) since it started, for the Changes view.
    Changes {
        session: String,
    },
    /// A review of a session's changes: its comments go to the agent as one message.
    Review {
        session: String,
        comments: Vec<Comment>,
    },
    /// The public key this server's pushes are signed with (`applicationServerKey`).
    PushKey,
    /// Keep this browser's push subscription (`PushSubscription.toJSON()`) and send it pushes.
    PushSubscribe {
        endpoint: String,
        keys: PushKeys,
        /// `location.origin` of the page.
        #[serde(default)]
        origin: String,
    },
    /// No more pushes to this subscription.
    PushUnsubscribe {
        endpoint: String,
    },
}

/// A subscription's keys, as the browser names them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushKeys {
    pub p256dh: String,
    pub auth: String,
}

/// A message to the page (besides the pane's bytes).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToPage {
    Sessions {
        sessions: Vec<Listing>,
    },
    Attached {
        name: String,
    },
    Size {
        cols: u16,
        rows: u16,
    },
    Exited {
        code: i32,
    },
    Detached {
        reason: String,
    },
    Done {
        message: String,
    },
    Error {
        message: String,
    },
    /// A session wants the user: the page raises a browser notification naming it.
    Note {
        session: String,
        text: String,
    },
    /// Items of a session's conversation: `fresh`, the page starts over from them.
    Said {
        session: String,
        epoch: u64,
        fresh: bool,
        entries: Vec<Entry>,
    },
    /// What happened in each session since the page saw it last.
    Meanwhile {
        digests: Vec<AwayDigest>,
    },
    /// A session's changes, as the Changes view asked (`session` as the list names it).
    Changes {
        session: String,
        changes: Changes,
    },
    /// Why a session's changes cannot be shown.
    ChangesError {
        session: String,
        message: String,
    },
    /// The review went to the session (`ok`), or why not.
    Reviewed {
        session: String,
        ok: bool,
        message: String,
    },
    /// The key to subscribe with.
    PushKey {
        key: String,
    },
    /// Whether this browser's subscription is kept now.
    Pushing {
        on: bool,
    },
}

/// What a page message asks of the server.
#[derive(Debug, PartialEq)]
pub enum Ask {
    Wire(Up),
    /// A new session: the directory and worktree are looked at first (off the page's task), then
    /// [`open_new`] makes the wire message.
    New {
        plan: Plan,
        cols: u16,
        rows: u16,
    },
    /// The Changes view's diff, read by the web view itself (`super::changes`).
    Changes {
        session: String,
    },
    /// A review, sent on a connection of its own so that the page's session stays as it is.
    Review {
        session: String,
        comments: Vec<Comment>,
    },
    /// Web Push's keys and subscriptions, kept by the web view itself (`web::push`).
    Push(PushAsk),
}

/// What a page asks of Web Push.
#[derive(Debug, PartialEq)]
pub enum PushAsk {
    Key,
    Subscribe(super::push::Subscription),
    Unsubscribe(String),
}

/// A page message as what to ask the server, or what to tell the page instead.
pub fn to_wire(msg: FromPage, home: &str) -> Result<Ask, String> {
    let sized = |c: u16, r: u16| -> Result<(u16, u16), String> {
        if (2..=1000).contains(&c) && (2..=1000).contains(&r) {
            Ok((c, r))
        } else {
            Err(format!("a size of {c}x{r} is out of range (2 to 1000)"))
        }
    };
    Ok(Ask::Wire(match msg {
        FromPage::Open {
            session,
            cols,
            rows,
            watch,
        } => {
            let (cols, rows) = sized(cols, rows)?;
            open(Target::Attach { name: Some(session) }, cols, rows, watch)
        }
        FromPage::Input { data } => Up::Input(data.into_bytes()),
        FromPage::Resize { cols, rows } => {
            let (cols, rows) = sized(cols, rows)?;
            Up::Resize { cols, rows }
        }
        FromPage::Poke => Up::Command(SessionCommand::Poke),
        FromPage::Handoff { focus } => Up::Command(SessionCommand::Handoff { focus }),
        FromPage::Supervision { on } => Up::Command(SessionCommand::Supervision { on }),
        FromPage::New {
            dir,
            name,
            worktree,
            cols,
            rows,
        } => {
            let (cols, rows) = sized(cols, rows)?;
            let plan = new_session::plan(&Form { dir, name, worktree }, home)?;
            return Ok(Ask::New { plan, cols, rows });
        }
        FromPage::Kill { session } => Up::Kill {
            name: session,
            from: None,
        },
        FromPage::Allow { session, usd } => Up::Guard {
            session,
            answer: GuardAnswer::Allow { usd },
        },
        FromPage::Leave { session } => Up::Guard {
            session,
            answer: GuardAnswer::Leave,
        },
        FromPage::Close => Up::Detach,
        FromPage::Visible { visible } => Up::Visible { visible },
        FromPage::Talk {
            session,
            epoch,
            since,
        } => Up::Talk {
            session,
            epoch,
            since,
        },
        FromPage::PushKey => return Ok(Ask::Push(PushAsk::Key)),
        FromPage::PushSubscribe {
            endpoint,
            keys,
            origin,
        } => {
            let sub = super::push::Subscription {
                endpoint,
                p256dh: keys.p256dh,
                auth: keys.auth,
                origin,
            };
            super::push::check(&sub)?;
            return Ok(Ask::Push(PushAsk::Subscribe(sub)));
        }
        FromPage::PushUnsubscribe { endpoint } => return Ok(Ask::Push(PushAsk::Unsubscribe(endpoint))),
        FromPage::Away { seen } => Up::Away { seen },
        FromPage::Changes { session } => return Ok(Ask::Changes { session }),
        FromPage::Review { session, comments } => return Ok(Ask::Review { session, comments }),
    }))
}

/// The wire message for a new session the page asked for, once prepared.
pub fn open_new(target: Target, cols: u16, rows: u16) -> Up {
    open(target, cols, rows, false)
}

fn open(target: Target, cols: u16, rows: u16, watch: bool) -> Up {
    Up::Open {
        target,
        cols,
        rows,
        caps: Vec::new(),
        caps_follow: false,
        env: Vec::new(),
        watch,
        terminal: None,
    }
}

/// A server message for the page; `None`: nothing the page needs.
pub fn from_wire(down: Down) -> Option<ToPage> {
    Some(match down {
        Down::Listing { sessions } => ToPage::Sessions { sessions },
        Down::Attached { name } => ToPage::Attached { name },
        Down::Size { cols, rows } => ToPage::Size { cols, rows },
        Down::Exited { code, .. } => ToPage::Exited { code },
        Down::Detached { reason } => ToPage::Detached { reason },
        // Said once to the next client: a page shows it as it shows an answer.
        Down::Done { message } | Down::Notice { message } | Down::Acted { message } => {
            ToPage::Done { message }
        }
        Down::Error { message } => ToPage::Error { message },
        Down::Note { session, text } => ToPage::Note { session, text },
        Down::Said {
            session,
            epoch,
            fresh,
            entries,
        } => ToPage::Said {
            session,
            epoch,
            fresh,
            entries,
        },
        Down::Meanwhile { digests } => ToPage::Meanwhile { digests },
        // The server already let go of this client: the page cannot follow it over SSH.
        Down::Hop { dest, name } => ToPage::Detached {
            reason: format!("session {name} runs on {dest}; the web view shows this machine's sessions"),
        },
        Down::Output(_)
        | Down::Welcome { .. }
        | Down::Suspend
        | Down::WebLogin { .. }
        | Down::Terminal { .. }
        | Down::Sent { .. }
        | Down::Reached { .. }
        | Down::Transcript { .. }
        | Down::Event { .. } => return None,
    })
}

/// A page's text message, decoded: a clear error for anything else.
pub fn parse(text: &str) -> Result<FromPage, String> {
    serde_json::from_str(text).map_err(|e| format!("the server did not understand that message: {e}"))
}

#[cfg(test)]
mod tests;
