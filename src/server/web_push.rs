//! Web Push (RFC 8030) to every browser that asked for it (`web::push`): the notification as JSON,
//! encrypted for each browser as RFC 8291 says (aes128gcm) and signed with this user's VAPID key as
//! RFC 8292 says, both by `web-push-native`; sent with hyper over rustls. A push service that
//! answers 404 or 410 has forgotten the subscription: it is dropped. Other failures are logged
//! (the endpoint's host, never the endpoint: it is as good as a key) and tried again a bounded
//! number of times; nothing here ever holds a session up.

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use serde::Serialize;
use web_push_native::jwt_simple::algorithms::ES256KeyPair;

use pokeshell_core::server::away::Notification;
use tokio::sync::broadcast;

use super::push::Pusher;
use crate::web::push::{self, Store, Subscription};

/// The notification a phone shows (the same fields an ntfy message carries).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PushPayload {
    pub title: String,
    pub body: String,
    /// Opened on a tap on the notification itself.
    pub url: String,
    /// Notifications of one tag replace each other (one per session and kind).
    pub tag: String,
    pub actions: Vec<PushAction>,
}

/// A button on the notification: `open` opens `url`; any other is POSTed to `url` (a capability
/// URL acts on a POST).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PushAction {
    pub action: String,
    pub title: String,
    pub url: String,
}

/// A push message carries at most 4096 bytes once encrypted: the JSON stays well under.
pub const MAX_PAYLOAD: usize = 3000;
/// How long a push service keeps a message for a phone that is off.
const TTL: Duration = Duration::from_secs(24 * 3600);
/// Tries per subscription, and the bound on each.
const ATTEMPTS: u32 = 3;
const EACH: Duration = Duration::from_secs(10);

/// What became of one push to one browser.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Sent,
    /// The push service forgot the subscription (404, 410): dropped.
    Gone,
    Failed(String),
}

/// The payload as JSON of at most [`MAX_PAYLOAD`] bytes (the body is cut to fit).
pub fn payload_bytes(payload: &PushPayload) -> Vec<u8> {
    let mut p = payload.clone();
    loop {
        let bytes = serde_json::to_vec(&p).unwrap_or_default();
        if bytes.len() <= MAX_PAYLOAD || p.body.is_empty() {
            return bytes;
        }
        let keep = p
            .body
            .chars()
            .count()
            .saturating_sub(bytes.len() - MAX_PAYLOAD + 1);
        p.body = p.body.chars().take(keep).collect::<String>() + "…";
    }
}

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

fn client() -> &'static Client<Https, Full<Bytes>> {
    static CLIENT: OnceLock<Client<Https, Full<Bytes>>> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .build();
        Client::builder(hyper_util::rt::TokioExecutor::new()).build(https)
    })
}

/// The endpoint's host, for the log.
fn host_of(endpoint: &str) -> String {
    endpoint
        .parse::<axum::http::Uri>()
        .ok()
        .and_then(|u| u.host().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// Who sends (RFC 8292's `sub`): the public address, else the page's origin the browser
/// subscribed from; push services want an https URL or a mailto.
fn contact(sub: &Subscription) -> String {
    crate::web::link_base()
        .filter(|b| b.starts_with("https://"))
        .or_else(|| Some(sub.origin.clone()).filter(|o| o.starts_with("https://")))
        .map(|u| u.trim_end_matches('/').to_string())
        .unwrap_or_else(|| "mailto:pokeshell@localhost".into())
}

/// One push to one browser, tried up to [`ATTEMPTS`] times while the service answers 429, 5xx or
/// nothing.
pub async fn send_one(key: &ES256KeyPair, sub: &Subscription, body: &[u8], topic: &str) -> Outcome {
    if let Err(e) = push::check(sub) {
        return Outcome::Failed(e);
    }
    let mut last = String::new();
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(1 << (2 * attempt))).await;
        }
        // Made anew each time: each try is encrypted with a fresh salt and key.
        let Some(request) = request(key, sub, body, topic) else {
            return Outcome::Failed("the subscription's keys do not make a push".into());
        };
        let req = request.map(|b| Full::new(Bytes::from(b)));
        match tokio::time::timeout(EACH, client().request(req)).await {
            Ok(Ok(res)) => match res.status().as_u16() {
                200..=299 => return Outcome::Sent,
                404 | 410 => return Outcome::Gone,
                s @ (429 | 500..=599) => last = format!("it answered {s}"),
                s => return Outcome::Failed(format!("it answered {s}")),
            },
            Ok(Err(e)) => last = format!("cannot reach it: {e}"),
            Err(_) => last = format!("no answer within {} s", EACH.as_secs()),
        }
    }
    Outcome::Failed(last)
}

fn request(
    key: &ES256KeyPair,
    sub: &Subscription,
    body: &[u8],
    topic: &str,
) -> Option<axum::http::Request<Vec<u8>>> {
    use base64::Engine;
    let decode = |s: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s.trim_end_matches('='))
            .ok()
    };
    let ua_public = web_push_native::p256::PublicKey::from_sec1_bytes(&decode(&sub.p256dh)?).ok()?;
    let auth = decode(&sub.auth).filter(|a| a.len() == 16)?;
    let contact = contact(sub);
    let mut req = web_push_native::WebPushBuilder::new(
        sub.endpoint.parse().ok()?,
        ua_public,
        web_push_native::Auth::clone_from_slice(&auth),
    )
    .with_valid_duration(TTL)
    .with_vapid(key, &contact)
    .build(body.to_vec())
    .ok()?;
    let headers = req.headers_mut();
    // A person is needed: wake the phone (RFC 8030 5.3); a newer push of the same topic replaces
    // one not delivered yet (5.4).
    headers.insert("urgency", axum::http::HeaderValue::from_static("high"));
    if let Ok(v) = axum::http::HeaderValue::from_str(topic) {
        headers.insert("topic", v);
    }
    Some(req)
}

/// A tag as an RFC 8030 topic: at most 32 characters of the base64url alphabet.
pub fn topic(tag: &str) -> String {
    tag.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(32)
        .collect()
}

/// Sends `payload` to every browser subscribed, each on its own; drops the gone ones.
pub async fn deliver(payload: PushPayload) -> Vec<Outcome> {
    let store = match Store::here() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pokeshell server: web push: {e}");
            return Vec::new();
        }
    };
    let read = {
        let store = store.clone();
        tokio::task::spawn_blocking(move || Ok::<_, String>((store.subscriptions()?, store.vapid_key()?)))
            .await
    };
    let (subs, key) = match read {
        Ok(Ok((subs, _))) if subs.is_empty() => return Vec::new(),
        Ok(Ok(found)) => found,
        Ok(Err(e)) => {
            eprintln!("pokeshell server: web push: {e}");
            return Vec::new();
        }
        Err(e) => {
            eprintln!("pokeshell server: web push: {e}");
            return Vec::new();
        }
    };
    let body = payload_bytes(&payload);
    let topic = topic(&payload.tag);
    let key = std::sync::Arc::new(key);
    let mut outcomes = Vec::new();
    let mut sends = tokio::task::JoinSet::new();
    for sub in subs {
        let (key, body, topic) = (key.clone(), body.clone(), topic.clone());
        sends.spawn(async move {
            let outcome = send_one(&key, &sub, &body, &topic).await;
            (sub, outcome)
        });
    }
    while let Some(Ok((sub, outcome))) = sends.join_next().await {
        let host = host_of(&sub.endpoint);
        match &outcome {
            Outcome::Sent => {}
            Outcome::Gone => {
                eprintln!("pokeshell server: web push: {host} forgot a subscription; dropped");
                let store = store.clone();
                let endpoint = sub.endpoint.clone();
                let _ = tokio::task::spawn_blocking(move || store.remove(&endpoint)).await;
            }
            Outcome::Failed(why) => eprintln!("pokeshell server: web push to {host} failed: {why}"),
        }
        outcomes.push(outcome);
    }
    outcomes
}

/// The notification the list of events that need the person built (`server::push`), as a Web Push
/// payload: the same title, words, click link and tag; "Open" stays `open`, every other button is
/// a POST to its capability link, named after its label.
pub fn payload_of(n: &Notification) -> PushPayload {
    let url = n.click.clone().unwrap_or_else(|| "/".into());
    let actions = n
        .actions
        .iter()
        .map(|a| PushAction {
            action: if a.open {
                "open".into()
            } else {
                action_name(&a.label)
            },
            title: a.label.clone(),
            url: a.url.clone(),
        })
        .collect();
    PushPayload {
        title: n.title.clone(),
        body: n.message.clone(),
        url,
        tag: n.tag.clone(),
        actions,
    }
}

/// A button's label as the service worker's action name: "Stop the run" is `stop-the-run`.
fn action_name(label: &str) -> String {
    label
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Every notification the pusher builds goes to every subscribed browser too, each on a task of
/// its own (nothing here holds the pusher or a session).
pub fn follow(pusher: &Pusher) {
    let mut built = pusher.subscribe();
    tokio::spawn(async move {
        loop {
            match built.recv().await {
                Ok(one) => {
                    tokio::spawn(deliver(payload_of(&one.1)));
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    eprintln!(
                        "pokeshell server: web push: {n} notifications were too many at once; not pushed"
                    )
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_fits_a_push_message() {
        let p = PushPayload {
            title: "pokeshell — 3:api".into(),
            body: "é".repeat(5000),
            url: "https://box/?session=3".into(),
            tag: "3:api-question".into(),
            actions: vec![],
        };
        let bytes = payload_bytes(&p);
        assert!(bytes.len() <= MAX_PAYLOAD, "{}", bytes.len());
        let back: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert!(back["body"].as_str().unwrap().ends_with('…'));
        assert_eq!(topic("3:api question/x"), "3-api-question-x");
        assert_eq!(topic(&"a".repeat(50)).len(), 32);
    }

    #[test]
    fn a_notification_becomes_a_payload_whose_buttons_post_their_links_and_open_opens() {
        use pokeshell_core::server::away::NoteAction;
        let button = |label: &str, url: &str, open: bool| NoteAction {
            label: label.into(),
            url: url.into(),
            open,
        };
        let n = Notification {
            title: "1:work: the agent asks you".into(),
            message: "Should I also migrate the old rows?".into(),
            priority: 4,
            tags: vec!["question".into()],
            click: Some("https://box/?session=1".into()),
            tag: "pokeshell-1-question".into(),
            actions: vec![
                button("Yes", "https://box/act/y", false),
                button("Stop the run", "https://box/act/s", false),
                button("Open", "https://box/?session=1", true),
            ],
        };
        let p = payload_of(&n);
        assert_eq!(
            (p.title.as_str(), p.body.as_str(), p.url.as_str(), p.tag.as_str()),
            (
                "1:work: the agent asks you",
                "Should I also migrate the old rows?",
                "https://box/?session=1",
                "pokeshell-1-question"
            )
        );
        let actions: Vec<(&str, &str, &str)> = p
            .actions
            .iter()
            .map(|a| (a.action.as_str(), a.title.as_str(), a.url.as_str()))
            .collect();
        assert_eq!(
            actions,
            [
                ("yes", "Yes", "https://box/act/y"),
                ("stop-the-run", "Stop the run", "https://box/act/s"),
                ("open", "Open", "https://box/?session=1"),
            ]
        );
    }
}
