//! Scripts and agents driving sessions, the client's side: each call is one request to the running
//! server (never started for these) and its answer, shared by the commands (`drive_cli.rs`) and the
//! MCP server (`mcp.rs`). A `pokeshell` run inside a session says who asks (`$POKESHELL_SESSION`):
//! the server bounds what agents do and the ledger names them. docs/driving.md.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::{connect, deadline};
use pokeshell_core::drive::{self, Event, Outcome, Transcript, Until};
use pokeshell_core::safe_text::escape;
use pokeshell_core::wire::{self, Down, Up};

/// The exit status of `wait` when the timeout passed first (as `timeout(1)`'s).
pub const TIMED_OUT: u8 = 124;
/// The exit status of `wait` when the session ended first.
pub const ENDED: u8 = 3;
/// The exit status of `wait --until idle` when the run stopped on something only the person can
/// answer (a question, a rule that gave up).
pub const STOPPED: u8 = 4;

/// How long pi may take to have a message: a session just started holds it until its bridge is up.
const SEND_LIMIT: Duration = Duration::from_secs(45);

/// The session this `pokeshell` runs inside of, if any (its agent is asking).
pub fn origin() -> Option<String> {
    std::env::var(drive::SESSION_ENV).ok().filter(|s| !s.is_empty())
}

/// Says so when no server runs (these calls never start one: there is nothing to drive without
/// it), else gives `e` back.
fn or_no_server(e: String) -> String {
    match connect::connect() {
        Err(_) => "no pokeshell server runs (start a session with `pokeshell new`)".to_string(),
        Ok(_) => e,
    }
}

/// A connection to the running server, the hello said.
fn connection() -> Result<(UnixStream, u32), String> {
    connect::session_with(false).map_err(or_no_server)
}

/// One request and its one answer within `limit`; the server's refusal is an error.
fn ask(up: &Up, what: &str, limit: Duration) -> Result<Down, String> {
    match super::ask(up, false, what, limit).map_err(or_no_server)? {
        Down::Error { message } => Err(message),
        other => Ok(other),
    }
}

/// Gives session `session` the text as the user's prompt; returns its marker once pi has it.
pub fn send(session: &str, text: String, steer: bool) -> Result<u64, String> {
    // Checked here too, so that nothing is even asked of the server.
    drive::check_text(&text)?;
    let up = Up::Send {
        session: session.to_string(),
        text,
        steer,
        from: origin(),
    };
    match ask(&up, "`send`", SEND_LIMIT)? {
        Down::Sent { marker, .. } => Ok(marker),
        other => Err(format!("unexpected answer {other:?}")),
    }
}

/// How a wait ended.
#[derive(Debug, Clone, PartialEq)]
pub enum WaitEnd {
    /// The server's word: reached, stopped on something that needs the person, or ended.
    Told {
        outcome: Outcome,
        /// `number:name`.
        session: String,
        attention: String,
        state: String,
        code: Option<i32>,
        /// When the session saw the change (Unix ms).
        at_ms: u64,
    },
    TimedOut,
}

impl WaitEnd {
    /// The exit status `pokeshell wait` ends with.
    pub fn status(&self) -> u8 {
        match self {
            WaitEnd::Told {
                outcome: Outcome::Reached,
                ..
            } => 0,
            WaitEnd::Told {
                outcome: Outcome::Stopped,
                ..
            } => STOPPED,
            WaitEnd::Told {
                outcome: Outcome::Ended,
                ..
            } => ENDED,
            WaitEnd::TimedOut => TIMED_OUT,
        }
    }
}

/// Waits, pushed by the server (never polled), until session `session` is `until`, or `timeout`.
pub fn wait(session: &str, until: Until, timeout: Option<Duration>) -> Result<WaitEnd, String> {
    let (mut stream, _) = connection()?;
    let up = Up::Wait {
        session: session.to_string(),
        until,
        from: origin(),
    };
    stream
        .write_all(&wire::encode_up(&up))
        .map_err(|e| format!("cannot talk to the pokeshell server: {e}"))?;
    let end = timeout.map(|t| Instant::now() + t);
    loop {
        let left = end.map(|e| e.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return Ok(WaitEnd::TimedOut);
        }
        let _ = stream.set_read_timeout(left);
        let down = match wire::read_frame(&mut stream) {
            Ok(Some((kind, payload))) => wire::decode_down(kind, &payload).map_err(|e| e.to_string())?,
            Ok(None) => return Err("the pokeshell server ended before the wait did".to_string()),
            Err(e) => {
                let e = std::io::Error::from(e);
                if deadline::timed_out(&e) {
                    return Ok(WaitEnd::TimedOut);
                }
                return Err(format!("cannot hear the pokeshell server: {e}"));
            }
        };
        match down {
            Down::Reached {
                session,
                outcome,
                attention,
                state,
                code,
                at_ms,
            } => {
                return Ok(WaitEnd::Told {
                    outcome,
                    session,
                    attention,
                    state,
                    code,
                    at_ms,
                });
            }
            Down::Error { message } => return Err(message),
            Down::Notice { message } => eprintln!("pokeshell: {}", escape(&message)),
            _ => {}
        }
    }
}

/// Session `session`'s transcript: its last reply, or its last `last` messages.
pub fn read(session: &str, last: Option<u32>) -> Result<Transcript, String> {
    let up = Up::Read {
        session: session.to_string(),
        last,
    };
    match ask(&up, "`read`", deadline::ANSWER_LIMIT)? {
        Down::Transcript { transcript } => Ok(transcript),
        other => Err(format!("unexpected answer {other:?}")),
    }
}

/// Follows the events of `sessions` (all when empty), handing each to `each` until it returns
/// false or the server ends (`Ok`).
pub fn events(sessions: &[String], mut each: impl FnMut(Event) -> bool) -> Result<(), String> {
    let (mut stream, _) = connection()?;
    // The hello's deadline is over: events come when they come.
    let _ = stream.set_read_timeout(None);
    let up = Up::Events {
        sessions: sessions.to_vec(),
    };
    stream
        .write_all(&wire::encode_up(&up))
        .map_err(|e| format!("cannot talk to the pokeshell server: {e}"))?;
    loop {
        match connect::read_down(&mut stream) {
            Ok(Down::Event { event }) => {
                if !each(event) {
                    return Ok(());
                }
            }
            Ok(Down::Error { message }) => return Err(message),
            Ok(Down::Notice { message }) => eprintln!("pokeshell: {}", escape(&message)),
            Ok(_) => {}
            Err(e) if e == connect::CLOSED => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Ends session `session`, as `pokeshell kill` does, saying who asks.
pub fn kill(session: &str) -> Result<String, String> {
    let up = Up::Kill {
        name: session.to_string(),
        from: origin(),
    };
    match ask(&up, "`kill`", deadline::ANSWER_LIMIT)? {
        Down::Done { message } => Ok(message),
        other => Err(format!("unexpected answer {other:?}")),
    }
}

/// Text from a session for a terminal: its lines and tabs as they are, every other control
/// character written out (an agent's reply must not drive the terminal it is read in).
pub fn printable(text: &str) -> String {
    text.split('\n')
        .map(|line| line.split('\t').map(escape).collect::<Vec<_>>().join("\t"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_keeps_lines_and_tabs_and_writes_out_the_rest() {
        assert_eq!(printable("a\n\tb"), "a\n\tb");
        assert_eq!(printable("x\u{1b}[2Jy\r"), "x\\x1b[2Jy\\r");
        assert_eq!(printable("\u{202e}evil"), "\\u{202e}evil");
    }

    #[test]
    fn each_end_of_a_wait_has_its_status() {
        let told = |outcome| WaitEnd::Told {
            outcome,
            session: "1:w".into(),
            attention: "idle".into(),
            state: "idle".into(),
            code: None,
            at_ms: 0,
        };
        assert_eq!(told(Outcome::Reached).status(), 0);
        assert_eq!(told(Outcome::Stopped).status(), STOPPED);
        assert_eq!(told(Outcome::Ended).status(), ENDED);
        assert_eq!(WaitEnd::TimedOut.status(), TIMED_OUT);
    }
}
