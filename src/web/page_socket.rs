//! One page's WebSocket: a client of the server like a terminal. The page's messages become wire
//! messages on a connection of its own to the server; the pane's bytes come back as binary
//! messages, the rest as JSON. The connection is made when the page first needs it and made again
//! after the server ended it (it does after an error, an exit or a detach).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{Message, WebSocket};

use super::auth::{LoginId, Logins};
use super::changes::Asks;
use super::listing::Feed;
use super::new_session::{self, Plan};
use super::page_msg::{self, Ask, MAX_PAGE_MESSAGE, PushAsk, ToPage};
use super::upstream::Upstream;
use pokeshell_core::wire::Target;
use pokeshell_core::wire::{Down, Up};

/// The login a page's socket was opened with: the socket ends when the login does.
pub struct Login {
    pub id: LoginId,
    pub logins: Arc<Logins>,
}

/// The close code a page hears when its login ended (the page then asks for a new login instead of
/// connecting again), and when it answered nothing for too long.
const LOGGED_OUT: u16 = 4401;
const SILENT: u16 = 4408;

/// How long a page may say nothing (not even the pong a browser answers every ping with) before its
/// socket is closed: a phone that left the network leaves a connection nobody will ever close.
/// `POKESHELL_TEST_WEB_SILENCE_SECS` shortens it for the tests.
fn silence_bound() -> Duration {
    static BOUND: std::sync::LazyLock<Duration> = std::sync::LazyLock::new(|| {
        std::env::var("POKESHELL_TEST_WEB_SILENCE_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(Duration::from_secs(60), Duration::from_secs)
    });
    *BOUND
}

/// Serves the page until it goes away, its login ends, or it falls silent.
pub async fn run(mut ws: WebSocket, feed: Feed, home: String, login: Login) {
    let mut up: Option<Upstream> = None;
    // Whether the page said it is visible (pushes about the session it shows wait while it is).
    let mut seen: Option<bool> = None;
    let mut sessions = feed.sessions.clone();
    let mut notes = feed.notes();
    sessions.mark_changed();
    let mut asks = Asks::default();
    let mut ended = login.logins.watch_ended();
    let silence = silence_bound();
    let mut beat = tokio::time::interval(silence / 3);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut heard = Instant::now();
    loop {
        let from_server = async {
            match up.as_mut() {
                Some(u) => u.read().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = ended.changed() => {
                if !login.logins.holds(login.id) {
                    close(&mut ws, LOGGED_OUT, "logged out").await;
                    break;
                }
            }
            _ = beat.tick() => {
                if heard.elapsed() > silence {
                    close(&mut ws, SILENT, "the page answered nothing").await;
                    break;
                }
                if !login.logins.holds(login.id) {
                    close(&mut ws, LOGGED_OUT, "logged out").await;
                    break;
                }
                if send(&mut ws, Message::Ping(Default::default())).await.is_err() {
                    break;
                }
            }
            msg = ws.recv() => {
                heard = Instant::now();
                let msg = match msg {
                    Some(Ok(m)) => m,
                    Some(Err(e)) => {
                        refuse(&mut ws, &e.to_string()).await;
                        break;
                    }
                    None => break,
                };
                let text = match msg {
                    Message::Text(t) if t.len() > MAX_PAGE_MESSAGE => {
                        refuse(&mut ws, "too big").await;
                        break;
                    }
                    Message::Text(t) => t,
                    Message::Close(_) => break,
                    Message::Binary(_) => {
                        if tell(&mut ws, error("the page sends text messages only")).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Message::Ping(_) | Message::Pong(_) => continue,
                };
                let ask = page_msg::parse(text.as_str()).and_then(|m| page_msg::to_wire(m, &home));
                let sent = match ask {
                    Ok(Ask::Changes { session }) => {
                        asks.changes(&feed, session);
                        Ok(())
                    }
                    Ok(Ask::Review { session, comments }) => asks.review(&feed, session, comments),
                    // Kept, and told on this connection and every later one: it belongs to the page.
                    Ok(Ask::Wire(Up::Visible { visible })) => {
                        seen = Some(visible);
                        match up.as_mut() {
                            Some(u) => u.send(&Up::Visible { visible }).await,
                            None => Ok(()),
                        }
                    }
                    Ok(Ask::Wire(wire)) => deliver(&mut up, &wire, seen).await,
                    Ok(Ask::New { plan, cols, rows }) => match prepare(plan).await {
                        Ok(target) => deliver(&mut up, &page_msg::open_new(target, cols, rows), seen).await,
                        Err(message) => Err(message),
                    },
                    Ok(Ask::Push(ask)) => {
                        let kept = match &ask {
                            PushAsk::Subscribe(sub) => Some(sub.endpoint.clone()),
                            _ => None,
                        };
                        match push(ask).await {
                            Ok(msg) => {
                                // This login's Log out forgets it.
                                if let Some(endpoint) = kept {
                                    login.logins.note_push(login.id, &endpoint);
                                }
                                tell(&mut ws, msg).await.map_err(|e| e.to_string())
                            }
                            Err(message) => Err(message),
                        }
                    }
                    Err(message) => Err(message),
                };
                if let Err(message) = sent
                    && tell(&mut ws, error(&message)).await.is_err()
                {
                    break;
                }
            }
            downs = from_server => {
                let downs = match downs {
                    Ok(d) if !d.is_empty() => d,
                    // The server ended this connection; the next page message opens another.
                    Ok(_) | Err(_) => {
                        up = None;
                        continue;
                    }
                };
                // The server ends a connection after these: the next page message must not go down
                // it (it would be lost), so it is dropped at once.
                let ended = downs
                    .iter()
                    .any(|d| matches!(d, Down::Error { .. } | Down::Exited { .. } | Down::Detached { .. }));
                if ended {
                    up = None;
                }
                if forward(&mut ws, downs).await.is_err() {
                    break;
                }
            }
            changed = sessions.changed() => {
                if changed.is_err() {
                    break;
                }
                let list = sessions.borrow_and_update().as_ref().clone();
                if tell(&mut ws, ToPage::Sessions { sessions: list }).await.is_err() {
                    break;
                }
            }
            answer = asks.next() => {
                if tell(&mut ws, answer).await.is_err() {
                    break;
                }
                asks.done(&feed);
            }
            note = notes.recv() => {
                let msg = match note {
                    Ok(n) => ToPage::Note { session: n.session, text: n.text },
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        error(&format!("this page missed {missed} notifications"))
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                if tell(&mut ws, msg).await.is_err() {
                    break;
                }
            }
        }
    }
    if let Some(mut u) = up {
        let _ = u.send(&Up::Detach).await;
    }
}

/// Looks at the new session's directory and worktree (git may run) without holding up the others.
async fn prepare(plan: Plan) -> Result<Target, String> {
    tokio::task::spawn_blocking(move || new_session::prepare(plan))
        .await
        .map_err(|e| format!("the new session could not be prepared: {e}"))?
}

/// Web Push's files, read and written off the page's task.
async fn push(ask: PushAsk) -> Result<ToPage, String> {
    tokio::task::spawn_blocking(move || {
        let store = super::push::Store::here()?;
        Ok(match ask {
            PushAsk::Key => ToPage::PushKey {
                key: store.public_key()?,
            },
            PushAsk::Subscribe(sub) => {
                store.add(sub)?;
                ToPage::Pushing { on: true }
            }
            PushAsk::Unsubscribe(endpoint) => {
                store.remove(&endpoint)?;
                ToPage::Pushing { on: false }
            }
        })
    })
    .await
    .map_err(|e| format!("Web Push's files: {e}"))?
}

/// Sends a wire message, connecting first when there is no connection (and then saying first
/// whether the page is visible, when it said).
async fn deliver(up: &mut Option<Upstream>, wire: &Up, seen: Option<bool>) -> Result<(), String> {
    if up.is_none() {
        if matches!(wire, Up::Detach) {
            return Ok(());
        }
        let mut fresh = Upstream::connect().await?;
        if let Some(visible) = seen {
            fresh.send(&Up::Visible { visible }).await?;
        }
        *up = Some(fresh);
    }
    let Some(u) = up.as_mut() else {
        return Ok(());
    };
    let sent = u.send(wire).await;
    // A detach ends the connection on the server's side too; the next open makes a new one.
    if sent.is_err() || matches!(wire, Up::Detach) {
        *up = None;
    }
    sent
}

/// The server's messages to the page: the pane's bytes of one read in one binary message.
async fn forward(ws: &mut WebSocket, downs: Vec<Down>) -> Result<(), axum::Error> {
    let mut bytes = Vec::new();
    for down in downs {
        match down {
            Down::Output(b) => bytes.extend_from_slice(&b),
            other => {
                if !bytes.is_empty() {
                    send(ws, Message::Binary(std::mem::take(&mut bytes).into())).await?;
                }
                if let Some(msg) = page_msg::from_wire(other) {
                    tell(ws, msg).await?;
                }
            }
        }
    }
    if !bytes.is_empty() {
        send(ws, Message::Binary(bytes.into())).await?;
    }
    Ok(())
}

/// Closes the socket after a message the WebSocket layer refused: too big (1009), or broken (1002).
async fn refuse(ws: &mut WebSocket, why: &str) {
    let too_big = why.contains("limit") || why.contains("too long") || why.contains("too big");
    if too_big {
        close(ws, 1009, "message too big: 64 KiB at most").await;
    } else {
        close(ws, 1002, "not a WebSocket message").await;
    }
}

async fn close(ws: &mut WebSocket, code: u16, reason: &str) {
    let frame = axum::extract::ws::CloseFrame {
        code,
        reason: reason.into(),
    };
    let _ = send(ws, Message::Close(Some(frame))).await;
}

/// Sends one message, within the silence bound: a page that takes nothing for that long is gone
/// (its socket is then closed, instead of this task waiting for ever with the server's connection).
async fn send(ws: &mut WebSocket, msg: Message) -> Result<(), axum::Error> {
    match tokio::time::timeout(silence_bound(), ws.send(msg)).await {
        Ok(sent) => sent,
        Err(_) => Err(axum::Error::new("the page took nothing within the bound")),
    }
}

fn error(message: &str) -> ToPage {
    ToPage::Error {
        message: message.to_string(),
    }
}

async fn tell(ws: &mut WebSocket, msg: ToPage) -> Result<(), axum::Error> {
    let text = serde_json::to_string(&msg).unwrap_or_else(|_| "{}".to_string());
    send(ws, Message::Text(text.into())).await
}
