//! Capability links: one-tap answers from a push that need no login. Each link is a random token
//! from the OS (256 bits), bound to one session, one act and the one event it answers; it works
//! once, for [`LINK_TTL`], and the server still refuses it when the agent moved on. Tokens are
//! compared in constant time and never logged. Pure state behind a lock; the routes are `act.rs`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pokeshell_core::server::away::Act;
use subtle::ConstantTimeEq;

/// How long a link from a push stays good: a night and a morning (docs/away.md).
pub const LINK_TTL: Duration = Duration::from_secs(24 * 3600);
/// At most this many links are kept (the oldest go first).
const MAX_LINKS: usize = 1024;

/// What a good link answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub session: u32,
    /// "3:api", for the page.
    pub label: String,
    pub event: u64,
    pub act: Act,
    /// What the event was, a line or two, for the page.
    pub about: String,
}

/// Why a link does nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No link pokeshell made, or one so old it was forgotten.
    Unknown,
    Used,
    Expired,
}

impl Refused {
    pub fn words(self) -> &'static str {
        match self {
            Refused::Unknown => "This link is not one pokeshell made, or it is too old to be known any more.",
            Refused::Used => "This link was used already: each works once.",
            Refused::Expired => "This link has expired: links from a push work for 24 hours.",
        }
    }
}

struct Link {
    token: String,
    grant: Grant,
    made: Instant,
    ttl: Duration,
    used: bool,
}

#[derive(Default)]
pub struct Links {
    links: Vec<Link>,
}

fn equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

impl Links {
    /// Keeps `token` as a link for `grant`, good for `ttl`.
    pub fn add(&mut self, token: String, grant: Grant, now: Instant, ttl: Duration) {
        // Forgotten a while after they expire (until then, they are refused as expired).
        self.links
            .retain(|l| now.saturating_duration_since(l.made) < l.ttl * 2);
        if self.links.len() >= MAX_LINKS {
            self.links.remove(0);
        }
        self.links.push(Link {
            token,
            grant,
            made: now,
            ttl,
            used: false,
        });
    }

    /// The link `token`, every kept one compared so the time taken says nothing of which came close.
    fn find(&self, token: &str) -> Option<usize> {
        let mut found = None;
        for (i, l) in self.links.iter().enumerate() {
            if equal(&l.token, token) {
                found = Some(i);
            }
        }
        found
    }

    fn check(&self, token: &str, now: Instant) -> Result<usize, Refused> {
        let i = self.find(token).ok_or(Refused::Unknown)?;
        let l = &self.links[i];
        if l.used {
            Err(Refused::Used)
        } else if now.saturating_duration_since(l.made) >= l.ttl {
            Err(Refused::Expired)
        } else {
            Ok(i)
        }
    }

    /// What `token` would do, without using it (a GET: a link preview must not act).
    pub fn look(&self, token: &str, now: Instant) -> Result<Grant, Refused> {
        self.check(token, now).map(|i| self.links[i].grant.clone())
    }

    /// Forgets every link ("log out everywhere"): each is then refused as unknown. How many were
    /// still good.
    pub fn forget_all(&mut self) -> usize {
        let good = self.links.iter().filter(|l| !l.used).count();
        self.links.clear();
        good
    }

    /// Uses `token`: it never works again, whatever the server makes of the act.
    pub fn take(&mut self, token: &str, now: Instant) -> Result<Grant, Refused> {
        let i = self.check(token, now)?;
        self.links[i].used = true;
        Ok(self.links[i].grant.clone())
    }
}

/// The links of this server process (the web view serves them while it runs).
pub static LINKS: Mutex<Links> = Mutex::new(Links { links: Vec::new() });

/// A new link for `grant`: its token.
pub fn mint(grant: Grant) -> Result<String, String> {
    let token = super::auth::random_token().map_err(|e| format!("cannot make a link token: {e}"))?;
    LINKS
        .lock()
        .map_err(|_| "the links' state is broken".to_string())?
        .add(token.clone(), grant, Instant::now(), ttl());
    Ok(token)
}

/// [`LINK_TTL`], or for the end-to-end tests a shorter one (`POKESHELL_TEST_LINK_TTL_MS` in the
/// server's environment), so that an expired link can be tried without waiting a day.
fn ttl() -> Duration {
    std::env::var("POKESHELL_TEST_LINK_TTL_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(LINK_TTL, Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(event: u64, act: Act) -> Grant {
        Grant {
            session: 1,
            label: "1:api".into(),
            event,
            act,
            about: "the question".into(),
        }
    }

    #[test]
    fn a_link_is_looked_at_freely_and_used_once() {
        let mut l = Links::default();
        let now = Instant::now();
        l.add("a".repeat(64), grant(7, Act::Yes), now, LINK_TTL);
        assert_eq!(l.look(&"a".repeat(64), now), Ok(grant(7, Act::Yes)));
        assert_eq!(
            l.look(&"a".repeat(64), now),
            Ok(grant(7, Act::Yes)),
            "looking uses nothing"
        );
        assert_eq!(l.take(&"a".repeat(64), now), Ok(grant(7, Act::Yes)));
        assert_eq!(l.take(&"a".repeat(64), now), Err(Refused::Used));
        assert_eq!(l.look(&"a".repeat(64), now), Err(Refused::Used));
    }

    #[test]
    fn guesses_prefixes_and_old_links_are_refused() {
        let mut l = Links::default();
        let now = Instant::now();
        l.add("b".repeat(64), grant(7, Act::Yes), now, LINK_TTL);
        assert_eq!(l.take(&"b".repeat(63), now), Err(Refused::Unknown), "a prefix");
        assert_eq!(l.take(&"c".repeat(64), now), Err(Refused::Unknown));
        assert_eq!(l.take("", now), Err(Refused::Unknown));
        assert_eq!(l.take(&"b".repeat(64), now + LINK_TTL), Err(Refused::Expired));
    }

    #[test]
    fn each_link_is_bound_to_its_own_act_and_event() {
        let mut l = Links::default();
        let now = Instant::now();
        l.add("y".repeat(64), grant(7, Act::Yes), now, LINK_TTL);
        l.add("n".repeat(64), grant(7, Act::No), now, LINK_TTL);
        l.add("z".repeat(64), grant(8, Act::Continue), now, LINK_TTL);
        assert_eq!(l.take(&"n".repeat(64), now).map(|g| g.act), Ok(Act::No));
        assert_eq!(
            l.take(&"z".repeat(64), now).map(|g| (g.event, g.act)),
            Ok((8, Act::Continue))
        );
        assert_eq!(l.take(&"y".repeat(64), now).map(|g| g.act), Ok(Act::Yes));
    }

    #[test]
    fn forgetting_every_link_leaves_each_unknown() {
        let mut l = Links::default();
        let now = Instant::now();
        l.add("a".repeat(64), grant(7, Act::Yes), now, LINK_TTL);
        l.add("b".repeat(64), grant(7, Act::No), now, LINK_TTL);
        assert!(l.take(&"a".repeat(64), now).is_ok());
        assert_eq!(l.forget_all(), 1, "one was still good");
        assert_eq!(l.look(&"b".repeat(64), now), Err(Refused::Unknown));
        assert_eq!(l.take(&"a".repeat(64), now), Err(Refused::Unknown));
    }

    #[test]
    fn minted_tokens_are_long_random_and_different() {
        let g = grant(1, Act::Stop);
        let (a, b) = (mint(g.clone()).unwrap(), mint(g).unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
