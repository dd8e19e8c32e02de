//! Who may use the web view: one-time login tokens, printed by `pokeshell web`, turn into session
//! cookies. Pure state, no I/O: the routes ask it and set the cookie it gives. Tokens and cookies are
//! compared in constant time and never logged.

use std::time::{Duration, Instant};

use subtle::ConstantTimeEq;

/// How long a login token printed by `pokeshell web` stays good.
pub const LOGIN_TTL: Duration = Duration::from_secs(15 * 60);
/// How long a browser stays logged in without coming back.
pub const SESSION_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// At most this many logins wait to be used, and this many browsers stay logged in (the oldest go).
const MAX_LOGINS: usize = 16;
const MAX_SESSIONS: usize = 64;

/// The cookie's name.
pub const COOKIE: &str = "pokeshell_session";

#[derive(Debug, Default)]
pub struct Auth {
    logins: Vec<(String, Instant)>,
    sessions: Vec<(String, Instant)>,
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

/// 32 random bytes as hex.
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

    /// Uses a login token: the cookie value to set, `cookie` (fresh and random), when it was good.
    /// Every waiting token is compared, so the time taken says nothing of which one came close.
    pub fn log_in(&mut self, token: &str, cookie: String, now: Instant) -> Result<String, Refused> {
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
        self.sessions
            .retain(|(_, t)| now.duration_since(*t) < SESSION_TTL);
        if self.sessions.len() >= MAX_SESSIONS {
            self.sessions.remove(0);
        }
        self.sessions.push((cookie.clone(), now));
        Ok(cookie)
    }

    /// Whether a cookie value belongs to a logged-in browser (which then stays logged in longer).
    pub fn check(&mut self, cookie: &str, now: Instant) -> bool {
        let mut ok = false;
        for (c, at) in &mut self.sessions {
            if equal(c, cookie) && now.duration_since(*at) < SESSION_TTL {
                *at = now;
                ok = true;
            }
        }
        ok
    }
}

/// The session cookie's value in a `Cookie` header, if any.
pub fn cookie_value(header: &str) -> Option<&str> {
    header
        .split(';')
        .map(str::trim)
        .find_map(|kv| kv.strip_prefix(COOKIE)?.strip_prefix('='))
}

/// The `Set-Cookie` header for a logged-in browser: not readable by scripts, never sent by another
/// site's request.
pub fn set_cookie(value: &str) -> String {
    format!(
        "{COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        SESSION_TTL.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_token_works_once() {
        let mut a = Auth::default();
        let now = Instant::now();
        a.add_login("tok".into(), now);
        assert_eq!(a.log_in("tok", "c1".into(), now), Ok("c1".into()));
        assert_eq!(a.log_in("tok", "c2".into(), now), Err(Refused::BadToken), "used");
        assert!(a.check("c1", now));
        assert!(!a.check("c2", now));
        assert!(!a.check("c", now), "a prefix is not the cookie");
    }

    #[test]
    fn wrong_and_old_tokens_are_refused() {
        let mut a = Auth::default();
        let now = Instant::now();
        a.add_login("tok".into(), now);
        assert_eq!(a.log_in("tom", "c".into(), now), Err(Refused::BadToken));
        assert_eq!(a.log_in("", "c".into(), now), Err(Refused::BadToken));
        assert_eq!(
            a.log_in("tok", "c".into(), now + LOGIN_TTL),
            Err(Refused::BadToken),
            "too old"
        );
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        assert_eq!(cookie_value("a=b; pokeshell_session=xyz; c=d"), Some("xyz"));
        assert_eq!(cookie_value("pokeshell_sessionx=1"), None);
        assert_eq!(cookie_value(""), None);
        let set = set_cookie("v");
        assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict"));
    }

    #[test]
    fn random_tokens_differ() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
