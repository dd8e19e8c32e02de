//! Messages to frames and back: raw payload for Input and Output, one JSON object for the rest.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::frame::{push_frame, push_json_frame};
use super::{Down, Listing, MAX_FRAME, SessionCommand, Target, Up, WireError, kind};

#[derive(Serialize, Deserialize)]
struct Hello {
    token: String,
    protocol: u32,
}

#[derive(Serialize, Deserialize)]
struct Open {
    target: Target,
    cols: u16,
    rows: u16,
    caps: Vec<u8>,
    /// The answers are still coming, as an [`Up::Caps`].
    #[serde(default)]
    caps_follow: bool,
    env: Vec<(String, String)>,
    #[serde(default)]
    watch: bool,
}

#[derive(Serialize, Deserialize)]
struct Web {
    listen: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct WebLogin {
    url: String,
    login: String,
    exposed: bool,
}

/// Resize and Resumed.
#[derive(Serialize, Deserialize)]
struct Size {
    cols: u16,
    rows: u16,
}

/// Kill and Attached.
#[derive(Serialize, Deserialize)]
struct Name {
    name: String,
}

/// Detach, List and Suspend: `{}` (any object is accepted, so fields can be added later).
#[derive(Serialize, Deserialize)]
struct Nothing {}

#[derive(Serialize, Deserialize)]
struct Welcome {
    server_pid: u32,
    #[serde(default)]
    restoring: u32,
}

#[derive(Serialize, Deserialize)]
struct Reason {
    reason: String,
}

#[derive(Serialize, Deserialize)]
struct Exited {
    code: i32,
    farewell: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct Sessions {
    sessions: Vec<Listing>,
}

/// Done, Error and Notice.
#[derive(Serialize, Deserialize)]
struct Message {
    message: String,
}

#[derive(Serialize, Deserialize)]
struct Note {
    session: String,
    text: String,
}

#[derive(Serialize, Deserialize)]
struct Hop {
    dest: String,
    name: String,
}

pub(super) fn encode_up(message: &Up) -> Vec<u8> {
    let mut out = Vec::new();
    match message {
        Up::Hello { token, protocol } => {
            let body = Hello {
                token: token.clone(),
                protocol: *protocol,
            };
            push_json_frame(&mut out, kind::HELLO, &body);
        }
        Up::Open {
            target,
            cols,
            rows,
            caps,
            caps_follow,
            env,
            watch,
        } => {
            let body = Open {
                target: target.clone(),
                cols: *cols,
                rows: *rows,
                caps: caps.clone(),
                caps_follow: *caps_follow,
                env: env.clone(),
                watch: *watch,
            };
            push_json_frame(&mut out, kind::OPEN, &body);
        }
        Up::Input(bytes) => push_raw(&mut out, kind::INPUT, bytes),
        Up::Caps(bytes) => push_raw(&mut out, kind::CAPS, bytes),
        Up::Resize { cols, rows } => {
            let body = Size {
                cols: *cols,
                rows: *rows,
            };
            push_json_frame(&mut out, kind::RESIZE, &body);
        }
        Up::Detach => push_json_frame(&mut out, kind::DETACH, &Nothing {}),
        Up::Resumed { cols, rows } => {
            let body = Size {
                cols: *cols,
                rows: *rows,
            };
            push_json_frame(&mut out, kind::RESUMED, &body);
        }
        Up::List => push_json_frame(&mut out, kind::LIST, &Nothing {}),
        Up::Subscribe => push_json_frame(&mut out, kind::SUBSCRIBE, &Nothing {}),
        Up::Kill { name } => push_json_frame(&mut out, kind::KILL, &Name { name: name.clone() }),
        Up::Command(command) => push_json_frame(&mut out, kind::COMMAND, command),
        Up::Web { listen } => push_json_frame(
            &mut out,
            kind::WEB,
            &Web {
                listen: listen.clone(),
            },
        ),
    }
    out
}

pub(super) fn encode_down(message: &Down) -> Vec<u8> {
    let mut out = Vec::new();
    match message {
        Down::Welcome {
            server_pid,
            restoring,
        } => {
            let body = Welcome {
                server_pid: *server_pid,
                restoring: *restoring,
            };
            push_json_frame(&mut out, kind::WELCOME, &body);
        }
        Down::Output(bytes) => push_raw(&mut out, kind::OUTPUT, bytes),
        Down::Attached { name } => push_json_frame(&mut out, kind::ATTACHED, &Name { name: name.clone() }),
        Down::Detached { reason } => {
            let body = Reason {
                reason: reason.clone(),
            };
            push_json_frame(&mut out, kind::DETACHED, &body);
        }
        Down::Exited { code, farewell } => {
            let body = Exited {
                code: *code,
                farewell: farewell.clone(),
            };
            push_json_frame(&mut out, kind::EXITED, &body);
        }
        Down::Suspend => push_json_frame(&mut out, kind::SUSPEND, &Nothing {}),
        Down::Listing(sessions) => {
            let body = Sessions {
                sessions: sessions.clone(),
            };
            push_json_frame(&mut out, kind::LISTING, &body);
        }
        Down::Done { message } => {
            let body = Message {
                message: message.clone(),
            };
            push_json_frame(&mut out, kind::DONE, &body);
        }
        Down::Hop { dest, name } => {
            let body = Hop {
                dest: dest.clone(),
                name: name.clone(),
            };
            push_json_frame(&mut out, kind::HOP, &body);
        }
        Down::Error { message } => {
            let body = Message {
                message: message.clone(),
            };
            push_json_frame(&mut out, kind::ERROR, &body);
        }
        Down::Notice { message } => {
            let body = Message {
                message: message.clone(),
            };
            push_json_frame(&mut out, kind::NOTICE, &body);
        }
        Down::Size { cols, rows } => push_json_frame(
            &mut out,
            kind::SIZE,
            &Size {
                cols: *cols,
                rows: *rows,
            },
        ),
        Down::WebLogin { url, login, exposed } => {
            let body = WebLogin {
                url: url.clone(),
                login: login.clone(),
                exposed: *exposed,
            };
            push_json_frame(&mut out, kind::WEB_LOGIN, &body);
        }
        Down::Note { session, text } => {
            let body = Note {
                session: session.clone(),
                text: text.clone(),
            };
            push_json_frame(&mut out, kind::NOTE, &body);
        }
    }
    out
}

/// Raw bytes in as many frames as they need (one, also when empty).
pub(super) fn push_raw(out: &mut Vec<u8>, kind: u8, bytes: &[u8]) {
    if bytes.is_empty() {
        push_frame(out, kind, bytes);
    }
    for chunk in bytes.chunks(MAX_FRAME - 1) {
        push_frame(out, kind, chunk);
    }
}

pub(super) fn decode_up(kind: u8, payload: &[u8]) -> Result<Up, WireError> {
    Ok(match kind {
        kind::HELLO => {
            let Hello { token, protocol } = json(kind, payload)?;
            Up::Hello { token, protocol }
        }
        kind::OPEN => {
            let Open {
                target,
                cols,
                rows,
                caps,
                caps_follow,
                env,
                watch,
            } = json(kind, payload)?;
            Up::Open {
                target,
                cols,
                rows,
                caps,
                caps_follow,
                env,
                watch,
            }
        }
        kind::INPUT => Up::Input(payload.to_vec()),
        kind::CAPS => Up::Caps(payload.to_vec()),
        kind::RESIZE => {
            let Size { cols, rows } = json(kind, payload)?;
            Up::Resize { cols, rows }
        }
        kind::DETACH => {
            json::<Nothing>(kind, payload)?;
            Up::Detach
        }
        kind::RESUMED => {
            let Size { cols, rows } = json(kind, payload)?;
            Up::Resumed { cols, rows }
        }
        kind::LIST => {
            json::<Nothing>(kind, payload)?;
            Up::List
        }
        kind::KILL => {
            let Name { name } = json(kind, payload)?;
            Up::Kill { name }
        }
        kind::SUBSCRIBE => {
            json::<Nothing>(kind, payload)?;
            Up::Subscribe
        }
        kind::COMMAND => Up::Command(json::<SessionCommand>(kind, payload)?),
        kind::WEB => {
            let Web { listen } = json(kind, payload)?;
            Up::Web { listen }
        }
        _ => return Err(WireError::UnknownKind { kind }),
    })
}

pub(super) fn decode_down(kind: u8, payload: &[u8]) -> Result<Down, WireError> {
    Ok(match kind {
        kind::WELCOME => {
            let Welcome {
                server_pid,
                restoring,
            } = json(kind, payload)?;
            Down::Welcome {
                server_pid,
                restoring,
            }
        }
        kind::OUTPUT => Down::Output(payload.to_vec()),
        kind::ATTACHED => {
            let Name { name } = json(kind, payload)?;
            Down::Attached { name }
        }
        kind::DETACHED => {
            let Reason { reason } = json(kind, payload)?;
            Down::Detached { reason }
        }
        kind::EXITED => {
            let Exited { code, farewell } = json(kind, payload)?;
            Down::Exited { code, farewell }
        }
        kind::SUSPEND => {
            json::<Nothing>(kind, payload)?;
            Down::Suspend
        }
        kind::LISTING => {
            let Sessions { sessions } = json(kind, payload)?;
            Down::Listing(sessions)
        }
        kind::DONE => {
            let Message { message } = json(kind, payload)?;
            Down::Done { message }
        }
        kind::ERROR => {
            let Message { message } = json(kind, payload)?;
            Down::Error { message }
        }
        kind::HOP => {
            let Hop { dest, name } = json(kind, payload)?;
            Down::Hop { dest, name }
        }
        kind::NOTICE => {
            let Message { message } = json(kind, payload)?;
            Down::Notice { message }
        }
        kind::SIZE => {
            let Size { cols, rows } = json(kind, payload)?;
            Down::Size { cols, rows }
        }
        kind::WEB_LOGIN => {
            let WebLogin { url, login, exposed } = json(kind, payload)?;
            Down::WebLogin { url, login, exposed }
        }
        kind::NOTE => {
            let Note { session, text } = json(kind, payload)?;
            Down::Note { session, text }
        }
        _ => return Err(WireError::UnknownKind { kind }),
    })
}

fn json<T: DeserializeOwned>(kind: u8, payload: &[u8]) -> Result<T, WireError> {
    serde_json::from_slice(payload).map_err(|e| WireError::BadMessage {
        kind,
        reason: e.to_string(),
    })
}
