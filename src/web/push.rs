//! Web Push's side that stays on this machine: the VAPID key pair (RFC 8292) made once for this
//! user, and the browsers that asked to be told ("Notify me" on a page), both in pokeshell's state
//! directory (`$XDG_STATE_HOME/pokeshell/push/`, the directory 0700, each file 0600, written in
//! one step). A page asks for the public key and hands its subscription over its WebSocket;
//! `server::web_push` sends to them and drops those the push service says are gone.

use std::path::PathBuf;
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use web_push_native::jwt_simple::algorithms::{ECDSAP256PublicKeyLike, ES256KeyPair};

use crate::pi::private_file;

/// Browsers kept at most (the oldest go first): a person's phones and laptops.
pub const MAX_SUBSCRIPTIONS: usize = 32;
/// The longest push endpoint taken (the services' are a few hundred characters).
const MAX_ENDPOINT: usize = 2048;

/// Every read-change-write of the files, one at a time.
static FILES: Mutex<()> = Mutex::new(());

/// One browser's subscription, as `PushSubscription.toJSON()` gives it, and where it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    pub endpoint: String,
    /// The browser's P-256 public key, base64url (65 bytes: an uncompressed point).
    pub p256dh: String,
    /// Its 16-byte authentication secret, base64url.
    pub auth: String,
    /// The page's origin when it subscribed (the VAPID `sub` when no public address is set).
    #[serde(default)]
    pub origin: String,
}

#[derive(Serialize, Deserialize)]
struct KeyFile {
    /// The private scalar, base64url.
    private: String,
}

#[derive(Default, Serialize, Deserialize)]
struct SubscriptionFile {
    subscriptions: Vec<Subscription>,
}

/// The push files' directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// `$XDG_STATE_HOME/pokeshell/push` (else `~/.local/state/pokeshell/push`).
    pub fn here() -> Result<Store, String> {
        crate::pi::ledger::default_dir()
            .map(|d| Store { dir: d.join("push") })
            .ok_or_else(|| "no state directory: neither XDG_STATE_HOME nor HOME is set".to_string())
    }

    /// The files in `dir` (tests).
    pub fn at(dir: PathBuf) -> Store {
        Store { dir }
    }

    fn read<T: for<'de> Deserialize<'de>>(&self, name: &str) -> Result<Option<T>, String> {
        let path = self.dir.join(name);
        match private_file::read_no_follow(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| format!("{} is not what pokeshell wrote: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn write<T: Serialize>(&self, name: &str, value: &T) -> Result<(), String> {
        let dir = &self.dir;
        let path = dir.join(name);
        let fail = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
        private_file::ensure_state_dir(dir).map_err(|e| fail(&e))?;
        let body = serde_json::to_vec_pretty(value).map_err(|e| fail(&e))?;
        let tmp = dir.join(format!("{name}.tmp"));
        private_file::write_new(&tmp, &body).map_err(|e| fail(&e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            fail(&e)
        })
    }

    /// The VAPID key pair: read, or made (from the OS's randomness) and kept the first time.
    pub fn vapid_key(&self) -> Result<ES256KeyPair, String> {
        let _files = FILES
            .lock()
            .map_err(|_| "the push files' lock is broken".to_string())?;
        if let Some(KeyFile { private }) = self.read::<KeyFile>("vapid.json")? {
            let bytes = URL_SAFE_NO_PAD
                .decode(private.as_bytes())
                .map_err(|e| format!("the VAPID key is damaged: {e}"))?;
            return ES256KeyPair::from_bytes(&bytes).map_err(|e| format!("the VAPID key is damaged: {e}"));
        }
        let key = ES256KeyPair::generate();
        let file = KeyFile {
            private: URL_SAFE_NO_PAD.encode(key.to_bytes()),
        };
        self.write("vapid.json", &file)?;
        Ok(key)
    }

    /// The public key a page subscribes with (`applicationServerKey`), base64url.
    pub fn public_key(&self) -> Result<String, String> {
        let key = self.vapid_key()?;
        Ok(URL_SAFE_NO_PAD.encode(key.public_key().public_key().to_bytes_uncompressed()))
    }

    /// The browsers subscribed.
    pub fn subscriptions(&self) -> Result<Vec<Subscription>, String> {
        let _files = FILES
            .lock()
            .map_err(|_| "the push files' lock is broken".to_string())?;
        Ok(self
            .read::<SubscriptionFile>("subscriptions.json")?
            .unwrap_or_default()
            .subscriptions)
    }
}

/// The longest page origin kept with a subscription (a scheme and a host name, perhaps a port).
const MAX_ORIGIN: usize = 300;

/// Whether `ip` is an address of a network of one's own or of no network at all (private,
/// link-local, shared, unspecified, multicast, broadcast): never a push service's. Loopback is
/// this machine, allowed as a push service of one's own.
fn internal(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
        }
        std::net::IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if let Some(v4) = v6.to_ipv4_mapped() {
                return internal(std::net::IpAddr::V4(v4));
            }
            v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}

/// Whether `endpoint` may be sent to: https to a name or a public address, or http or https to this
/// machine (a push service of one's own on loopback); never an address of a private network, a
/// link-local one (a cloud's metadata service) or none; no user or password; at most
/// [`MAX_ENDPOINT`] characters. A browser's push service is always a public https address.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("this push endpoint {why}"));
    if endpoint.len() > MAX_ENDPOINT {
        return bad("is too long");
    }
    let Ok(uri) = endpoint.parse::<axum::http::Uri>() else {
        return bad("is not an address");
    };
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return bad("holds a user or password");
    }
    let host = uri.host().unwrap_or_default();
    let ip = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .ok();
    if ip.is_some_and(internal) {
        return bad("is an address of a private network or of none, not a push service's");
    }
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok(()),
        Some("http") => {
            if pokeshell_core::loopback::is_this_machine(host) {
                Ok(())
            } else {
                bad("is not https")
            }
        }
        _ => bad("is not https"),
    }
}

/// Checks a subscription: its endpoint, its keys (a P-256 point and a 16-byte secret), and the
/// page's origin it names (empty, or an http or https origin of at most [`MAX_ORIGIN`] characters).
pub fn check(sub: &Subscription) -> Result<(), String> {
    check_endpoint(&sub.endpoint)?;
    let origin_ok = sub.origin.is_empty()
        || (sub.origin.len() <= MAX_ORIGIN
            && (sub.origin.starts_with("https://") || sub.origin.starts_with("http://"))
            && !sub.origin.chars().any(|c| c.is_control() || c.is_whitespace()));
    if !origin_ok {
        return Err("the subscription's origin is not a page's origin".to_string());
    }
    let p256dh = URL_SAFE_NO_PAD
        .decode(sub.p256dh.trim_end_matches('=').as_bytes())
        .map_err(|_| "the subscription's p256dh key is not base64url".to_string())?;
    web_push_native::p256::PublicKey::from_sec1_bytes(&p256dh)
        .map_err(|_| "the subscription's p256dh key is not a P-256 point".to_string())?;
    let auth = URL_SAFE_NO_PAD
        .decode(sub.auth.trim_end_matches('=').as_bytes())
        .map_err(|_| "the subscription's auth secret is not base64url".to_string())?;
    if auth.len() != 16 {
        return Err("the subscription's auth secret is not 16 bytes".to_string());
    }
    Ok(())
}

impl Store {
    /// Keeps a browser's subscription (a new one for the same endpoint replaces it).
    pub fn add(&self, sub: Subscription) -> Result<(), String> {
        check(&sub)?;
        let _files = FILES
            .lock()
            .map_err(|_| "the push files' lock is broken".to_string())?;
        let mut file = self
            .read::<SubscriptionFile>("subscriptions.json")?
            .unwrap_or_default();
        file.subscriptions.retain(|s| s.endpoint != sub.endpoint);
        file.subscriptions.push(sub);
        let extra = file.subscriptions.len().saturating_sub(MAX_SUBSCRIPTIONS);
        file.subscriptions.drain(..extra);
        self.write("subscriptions.json", &file)
    }

    /// Forgets every subscription ("log out everywhere"); how many there were.
    pub fn remove_all(&self) -> Result<usize, String> {
        let _files = FILES
            .lock()
            .map_err(|_| "the push files' lock is broken".to_string())?;
        let Some(file) = self.read::<SubscriptionFile>("subscriptions.json")? else {
            return Ok(0);
        };
        if file.subscriptions.is_empty() {
            return Ok(0);
        }
        self.write("subscriptions.json", &SubscriptionFile::default())?;
        Ok(file.subscriptions.len())
    }

    /// Forgets the subscription of `endpoint` (the browser asked, or its push service said it is gone);
    /// whether there was one.
    pub fn remove(&self, endpoint: &str) -> Result<bool, String> {
        let _files = FILES
            .lock()
            .map_err(|_| "the push files' lock is broken".to_string())?;
        let mut file = self
            .read::<SubscriptionFile>("subscriptions.json")?
            .unwrap_or_default();
        let before = file.subscriptions.len();
        file.subscriptions.retain(|s| s.endpoint != endpoint);
        if file.subscriptions.len() == before {
            return Ok(false);
        }
        self.write("subscriptions.json", &file)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
