//! A Web Push service of the test's own on loopback (RFC 8030's push resource, as a browser's push
//! service would be): it keeps what is pushed to `/ok/…` (201) and answers 410 Gone on `/gone/…`.
//! The subscription is the test's own too: a P-256 key pair and an authentication secret made here,
//! so the test decrypts what the server sent (RFC 8291, aes128gcm) with ring alone, not with the
//! crate the server encrypts with, and checks the VAPID signature (RFC 8292) against the server's
//! public key. And a DevTools client (for `ServiceWorker.deliverPushMessage`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::{aead, agreement, hkdf, rand, signature};

/// One push as the service received it.
#[derive(Debug, Clone)]
pub struct Pushed {
    pub path: String,
    /// Header names lowercase.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    /// When its body was read in full (the speed figures of docs/away.md read it).
    #[allow(dead_code)]
    pub at: std::time::Instant,
}

pub struct PushService {
    pub port: u16,
    pub pushed: mpsc::Receiver<Pushed>,
}

impl PushService {
    pub fn start() -> PushService {
        let listener = TcpListener::bind("127.0.0.1:0").expect("the push service's port");
        let port = listener.local_addr().expect("its address").port();
        let (tx, pushed) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    continue;
                }
                let path = first.split_whitespace().nth(1).unwrap_or_default().to_string();
                let mut headers = HashMap::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.trim_end().split_once(':') {
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                    }
                }
                let len: usize = headers
                    .get("content-length")
                    .and_then(|l| l.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; len];
                let _ = reader.read_exact(&mut body);
                let at = std::time::Instant::now();
                let status = if path.starts_with("/gone/") {
                    "410 Gone"
                } else {
                    "201 Created"
                };
                let _ = stream.write_all(
                    format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").as_bytes(),
                );
                let _ = tx.send(Pushed {
                    path,
                    headers,
                    body,
                    at,
                });
            }
        });
        PushService { port, pushed }
    }

    pub fn endpoint(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// A browser's side of a subscription, made by the test: its key pair (used once, to decrypt one
/// push) and its secret.
pub struct TestSubscription {
    private: agreement::EphemeralPrivateKey,
    pub p256dh: Vec<u8>,
    pub auth: [u8; 16],
}

struct Len(usize);
impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

fn expand(prk: &hkdf::Prk, info: &[u8], len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    prk.expand(&[info], Len(len))
        .and_then(|okm| okm.fill(&mut out))
        .expect("HKDF-Expand");
    out
}

impl TestSubscription {
    pub fn new() -> TestSubscription {
        let rng = rand::SystemRandom::new();
        let private =
            agreement::EphemeralPrivateKey::generate(&agreement::ECDH_P256, &rng).expect("a P-256 key");
        let p256dh = private
            .compute_public_key()
            .expect("its public key")
            .as_ref()
            .to_vec();
        let mut auth = [0u8; 16];
        rand::SecureRandom::fill(&rng, &mut auth).expect("a secret");
        TestSubscription {
            private,
            p256dh,
            auth,
        }
    }

    /// `PushSubscription.toJSON()`'s keys.
    pub fn keys(&self) -> serde_json::Value {
        serde_json::json!({ "p256dh": URL_SAFE_NO_PAD.encode(&self.p256dh), "auth": URL_SAFE_NO_PAD.encode(self.auth) })
    }

    /// The plaintext of an aes128gcm body (RFC 8188 with RFC 8291's key derivation), one record.
    pub fn decrypt(self, body: &[u8]) -> Vec<u8> {
        assert!(
            body.len() > 21,
            "a body with RFC 8188's header: {} bytes",
            body.len()
        );
        let salt = &body[..16];
        let rs = u32::from_be_bytes(body[16..20].try_into().expect("4 bytes")) as usize;
        let idlen = body[20] as usize;
        assert_eq!(idlen, 65, "the key id is the server's P-256 public key");
        let as_public = &body[21..21 + idlen];
        let record = &body[21 + idlen..];
        assert!(record.len() <= rs, "one record: {} of at most {rs}", record.len());
        let ecdh = agreement::agree_ephemeral(
            self.private,
            &agreement::UnparsedPublicKey::new(&agreement::ECDH_P256, as_public),
            |s| s.to_vec(),
        )
        .expect("ECDH with the server's key");
        let mut key_info = b"WebPush: info\0".to_vec();
        key_info.extend_from_slice(&self.p256dh);
        key_info.extend_from_slice(as_public);
        let prk_key = hkdf::Salt::new(hkdf::HKDF_SHA256, &self.auth).extract(&ecdh);
        let ikm = expand(&prk_key, &key_info, 32);
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, salt).extract(&ikm);
        let cek = expand(&prk, b"Content-Encoding: aes128gcm\0", 16);
        let nonce = expand(&prk, b"Content-Encoding: nonce\0", 12);
        let key = aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_128_GCM, &cek).expect("a key"));
        let mut data = record.to_vec();
        let plain = key
            .open_in_place(
                aead::Nonce::try_assume_unique_for_key(&nonce).expect("a nonce"),
                aead::Aad::empty(),
                &mut data,
            )
            .expect("the record decrypts with the subscription's keys");
        // The last record: the text, then 0x02 and any zeros.
        let end = plain.iter().rposition(|&b| b != 0).expect("a padding delimiter");
        assert_eq!(plain[end], 2, "the last record's delimiter");
        plain[..end].to_vec()
    }
}

/// Checks `Authorization: vapid t=JWT, k=KEY` (RFC 8292): the key is `public_key`, the token is
/// signed with it (ES256), for the push service's origin, not expired and not valid past a day.
/// Its claims.
pub fn check_vapid(authorization: &str, public_key: &str, audience: &str) -> serde_json::Value {
    let rest = authorization
        .strip_prefix("vapid ")
        .unwrap_or_else(|| panic!("a vapid authorization: {authorization}"));
    let mut t = "";
    let mut k = "";
    for part in rest.split(',') {
        let part = part.trim();
        if let Some(v) = part.strip_prefix("t=") {
            t = v;
        } else if let Some(v) = part.strip_prefix("k=") {
            k = v;
        }
    }
    assert_eq!(k, public_key, "the key the page subscribed with");
    let (signed, sig) = t.rsplit_once('.').expect("a JWT");
    let key = URL_SAFE_NO_PAD.decode(k).expect("the key's base64url");
    signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, key)
        .verify(
            signed.as_bytes(),
            &URL_SAFE_NO_PAD.decode(sig).expect("the signature's base64url"),
        )
        .expect("the JWT is signed with the server's VAPID key");
    let (header, claims) = signed.split_once('.').expect("header.claims");
    let header: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).expect("base64url")).expect("JSON");
    assert_eq!(header["alg"], "ES256");
    let claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).expect("base64url")).expect("JSON");
    assert_eq!(claims["aud"], audience, "{claims}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock")
        .as_secs();
    let exp = claims["exp"].as_u64().expect("an expiry");
    assert!(exp > now && exp <= now + 24 * 3600 + 60, "exp {exp}, now {now}");
    let sub = claims["sub"].as_str().unwrap_or_default();
    assert!(
        sub.starts_with("mailto:") || sub.starts_with("https://"),
        "sub: {sub}"
    );
    claims
}

/// A DevTools protocol connection to one target (Chromium's `--remote-debugging-port`).
pub struct DevTools {
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    next: u64,
    /// Events read while waiting for answers.
    pub events: Vec<serde_json::Value>,
}

impl DevTools {
    /// The first target of `kind` ("page", "service_worker") whose URL starts with `url`.
    pub async fn attach(port: u16, kind: &str, url: &str) -> DevTools {
        let deadline = std::time::Instant::now() + super::support::WAIT;
        let ws_url = loop {
            let (_, text) = super::support::browser::raw_request(
                &format!("127.0.0.1:{port}"),
                &format!("GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
            );
            let json = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("[]");
            let targets: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
            let found = targets.as_array().and_then(|ts| {
                ts.iter()
                    .find(|t| t["type"] == kind && t["url"].as_str().is_some_and(|u| u.starts_with(url)))
            });
            if let Some(t) = found {
                break t["webSocketDebuggerUrl"]
                    .as_str()
                    .expect("a debugger URL")
                    .to_string();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {kind} target at {url}: {targets}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        };
        let (ws, _) = tokio_tungstenite::connect_async(ws_url)
            .await
            .expect("DevTools' WebSocket");
        DevTools {
            ws,
            next: 1,
            events: Vec::new(),
        }
    }

    /// Sends a command; its result (or a panic with its error).
    pub async fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use futures_util::{SinkExt, StreamExt};
        use tokio_tungstenite::tungstenite::Message;
        let id = self.next;
        self.next += 1;
        let msg = serde_json::json!({ "id": id, "method": method, "params": params });
        self.ws
            .send(Message::text(msg.to_string()))
            .await
            .expect("send to DevTools");
        let deadline = tokio::time::Instant::now() + super::support::WAIT;
        loop {
            let next = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            let Some(Ok(Message::Text(text))) = next else {
                continue;
            };
            let v: serde_json::Value = serde_json::from_str(&text).expect("DevTools' JSON");
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    /// Waits for an event `method` for which `done` holds.
    pub async fn event(
        &mut self,
        method: &str,
        done: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        use futures_util::StreamExt;
        use tokio_tungstenite::tungstenite::Message;
        if let Some(e) = self
            .events
            .iter()
            .find(|e| e["method"] == method && done(&e["params"]))
        {
            return e["params"].clone();
        }
        let deadline = tokio::time::Instant::now() + super::support::WAIT;
        loop {
            let next = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no {method} event; seen: {:?}", self.events));
            let Some(Ok(Message::Text(text))) = next else {
                continue;
            };
            let v: serde_json::Value = serde_json::from_str(&text).expect("DevTools' JSON");
            if v["method"] == method && done(&v["params"]) {
                return v["params"].clone();
            }
            self.events.push(v);
        }
    }
}
