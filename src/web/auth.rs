//! Who may use the web view, and the one check every route that needs a login calls
//! ([`logged_in`], or the [`LoggedIn`] extractor built on it).
//!
//! A one-time login token, printed by `pokeshell web`, is exchanged by the login page's script for a
//! *credential*: a fresh random value the page keeps in its own storage (`localStorage`), which the
//! browser keeps per origin, port included, and sends nowhere by itself. The page sends it on
//! purpose: as `Authorization: Bearer …` on its requests, and as a second WebSocket subprotocol
//! (`pokeshell.login.…`) when it opens its socket, since a browser's WebSocket carries no other
//! header. A cookie would not do: cookies are kept per host, not per port, so every other service on
//! 127.0.0.1 (a dev server an agent started, the far end of an `ssh -L` tunnel) would receive it and
//! could replay it (docs/web.md, "Security model").
//!
//! Tokens and credentials are compared in constant time and never logged. Ending a login (the page's
//! Log out) or every login (`pokeshell web --logout-all`, the page's Log out everywhere) is told to
//! every open socket, which ends if its login did.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;
use tokio::sync::watch;

use super::listener::ConnTag;

/// How long a login token printed by `pokeshell web` stays good.
pub const LOGIN_TTL: Duration = Duration::from_secs(15 * 60);
/// How long a browser stays logged in without coming back.
pub const SESSION_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// At most this many logins wait to be used, and this many browsers stay logged in (the oldest go).
const MAX_LOGINS: usize = 16;
const MAX_SESSIONS: usize = 64;

/// The WebSocket subprotocol the page asks for and the web view answers with.
pub const PROTOCOL: &str = "pokeshell";
/// The page's credential rides as a second subprotocol, `pokeshell.login.<credential>`.
pub const PROTOCOL_LOGIN_PREFIX: &str = "pokeshell.login.";

/// What the page says when it has no login.
pub const LOG_IN_FIRST: &str =
    "pokeshell: log in first: run `pokeshell web` in a terminal and open the link it prints.";

/// One logged-in browser (one origin's storage), known by a number that reveals nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LoginId(u64);

#[derive(Debug)]
struct Kept {
    id: LoginId,
    credential: String,
    used: Instant,
    /// The Web Push subscriptions this login's pages handed over: its Log out forgets them.
    pushes: Vec<String>,
}

/// At most this many subscriptions are remembered per login (as many as are kept at all).
const MAX_PUSHES: usize = super::push::MAX_SUBSCRIPTIONS;

/// The logins waiting to be used and the browsers logged in. Pure state: no I/O, no clock.
#[derive(Debug, Default)]
pub struct Auth {
    logins: Vec<(String, Instant)>,
    sessions: Vec<Kept>,
    next: u64,
}

/// Why a login was refused (the page says it; the token itself is never repeated).
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Unknown, already used or too old: they look the same from outside.
    BadToken,
}

fn equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// 32 random bytes from the system's generator, as hex.
pub fn random_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Auth {
    /// A new one-time login token.
    pub fn add_login(&mut self, token: String, now: Instant) {
        self.logins.retain(|(_, t)| now.duration_since(*t) < LOGIN_TTL);
        if self.logins.len() >= MAX_LOGINS {
            self.logins.remove(0);
        }
        self.logins.push((token, now));
    }

    /// Uses a login token: `credential` (fresh and random) becomes a login when the token was good.
    /// Every waiting token is compared, so the time taken says nothing of which one came close.
    pub fn log_in(&mut self, token: &str, credential: String, now: Instant) -> Result<LoginId, Refused> {
        let mut found = None;
        for (i, (t, at)) in self.logins.iter().enumerate() {
            if equal(t, token) && now.duration_since(*at) < LOGIN_TTL {
                found = Some(i);
            }
        }
        let Some(i) = found else {
            return Err(Refused::BadToken);
        };
        self.logins.remove(i);
        self.sessions.retain(|k| now.duration_since(k.used) < SESSION_TTL);
        if self.sessions.len() >= MAX_SESSIONS {
            self.sessions.remove(0);
        }
        self.next += 1;
        let id = LoginId(self.next);
        self.sessions.push(Kept {
            id,
            credential,
            used: now,
            pushes: Vec::new(),
        });
        Ok(id)
    }

    /// The login a credential belongs to (which then stays logged in longer). Every login is
    /// compared, whatever matched.
    pub fn check(&mut self, credential: &str, now: Instant) -> Option<LoginId> {
        let mut found = None;
        for k in &mut self.sessions {
            if equal(&k.credential, credential) && now.duration_since(k.used) < SESSION_TTL {
                k.used = now;
                found = Some(k.id);
            }
        }
        found
    }

    /// Whether login `id` still holds (an open socket asks; it counts as use).
    pub fn holds(&mut self, id: LoginId, now: Instant) -> bool {
        match self.sessions.iter_mut().find(|k| k.id == id) {
            Some(k) if now.duration_since(k.used) < SESSION_TTL => {
                k.used = now;
                true
            }
            _ => false,
        }
    }

    /// Remembers that a page of login `id` handed over the push subscription `endpoint`.
    pub fn note_push(&mut self, id: LoginId, endpoint: &str) {
        if let Some(k) = self.sessions.iter_mut().find(|k| k.id == id) {
            k.pushes.retain(|e| e != endpoint);
            k.pushes.push(endpoint.to_string());
            let extra = k.pushes.len().saturating_sub(MAX_PUSHES);
            k.pushes.drain(..extra);
        }
    }

    /// Ends login `id`; the push subscriptions its pages handed over, to forget with it.
    pub fn log_out(&mut self, id: LoginId) -> Vec<String> {
        let pushes = self
            .sessions
            .iter_mut()
            .find(|k| k.id == id)
            .map(|k| std::mem::take(&mut k.pushes))
            .unwrap_or_default();
        self.sessions.retain(|k| k.id != id);
        pushes
    }

    /// Ends every login, and every token not used yet; how many logins there were.
    pub fn log_out_all(&mut self) -> usize {
        self.logins.clear();
        std::mem::take(&mut self.sessions).len()
    }
}

/// The web view's logins, shared by its routes and sockets: the state, and a signal each open
/// socket watches to hear that logins ended.
#[derive(Debug)]
pub struct Logins {
    auth: Mutex<Auth>,
    ended: watch::Sender<u64>,
}

impl Default for Logins {
    fn default() -> Self {
        Logins {
            auth: Mutex::new(Auth::default()),
            ended: watch::channel(0).0,
        }
    }
}

impl Logins {
    fn with<R>(&self, f: impl FnOnce(&mut Auth) -> R) -> Option<R> {
        self.auth.lock().ok().map(|mut a| f(&mut a))
    }

    pub fn add_login(&self, token: String) {
        self.with(|a| a.add_login(token, Instant::now()));
    }

    /// Exchanges a one-time token for a new credential.
    pub fn log_in(&self, token: &str) -> Result<String, Refused> {
        let credential = random_token().map_err(|_| Refused::BadToken)?;
        let stored = credential.clone();
        self.with(|a| a.log_in(token, stored, Instant::now()))
            .unwrap_or(Err(Refused::BadToken))?;
        Ok(credential)
    }

    pub fn holds(&self, id: LoginId) -> bool {
        self.with(|a| a.holds(id, Instant::now())).unwrap_or(false)
    }

    /// Ends login `id`; the push subscriptions its pages handed over.
    pub fn log_out(&self, id: LoginId) -> Vec<String> {
        let pushes = self.with(|a| a.log_out(id)).unwrap_or_default();
        self.ended.send_modify(|n| *n += 1);
        pushes
    }

    pub fn note_push(&self, id: LoginId, endpoint: &str) {
        self.with(|a| a.note_push(id, endpoint));
    }

    pub fn log_out_all(&self) -> usize {
        let ended = self.with(Auth::log_out_all).unwrap_or(0);
        self.ended.send_modify(|n| *n += 1);
        ended
    }

    /// Changes whenever a login ended: an open socket then asks whether its own still [`holds`].
    ///
    /// [`holds`]: Logins::holds
    pub fn watch_ended(&self) -> watch::Receiver<u64> {
        self.ended.subscribe()
    }
}

/// The credential a request carries: `Authorization: Bearer …`, or the WebSocket subprotocol
/// `pokeshell.login.…`. Never a cookie.
pub fn credential(headers: &HeaderMap) -> Option<&str> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    bearer.or_else(|| {
        headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .find_map(|p| p.trim().strip_prefix(PROTOCOL_LOGIN_PREFIX))
    })
}

/// The one check: the login a request proves, if any. A connection that proved one is never closed
/// to make room for others ([`super::listener`]).
pub fn logged_in(logins: &Logins, headers: &HeaderMap, conn: Option<&ConnTag>) -> Option<LoginId> {
    let credential = credential(headers)?;
    let id = logins.with(|a| a.check(credential, Instant::now()))??;
    if let Some(conn) = conn {
        conn.trust();
    }
    Some(id)
}

/// An extractor for the routes that need a login: refuses with 401 and [`LOG_IN_FIRST`] otherwise.
pub struct LoggedIn(pub LoginId);

impl<S> FromRequestParts<S> for LoggedIn
where
    Arc<Logins>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let logins = Arc::<Logins>::from_ref(state);
        let conn = parts.extensions.get::<ConnTag>();
        logged_in(&logins, &parts.headers, conn)
            .map(LoggedIn)
            .ok_or_else(|| {
                (
                    StatusCode::UNAUTHORIZED,
                    [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                    LOG_IN_FIRST,
                )
                    .into_response()
            })
    }
}

#[cfg(test)]
#[path = "auth/tests.rs"]
mod tests;
