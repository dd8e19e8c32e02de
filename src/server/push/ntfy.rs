//! Delivery to ntfy through its JSON publishing API: a POST of the notification to the server's root
//! URL naming the topic, with the access token as a bearer token (never over plain http to another
//! machine: it would cross the network in the clear). Each attempt has a deadline; a
//! failed one (no answer, a 5xx, a 429) is tried again after a growing pause, a bounded number of
//! times; every outcome is logged, without the topic or the token (both are secrets).

use std::time::{Duration, Instant};

use pokeshell_core::config::KeyId;
use pokeshell_core::config::warning::plain_http_elsewhere;
use pokeshell_core::server::away::Notification;
use pokeshell_core::server::away::notification::ntfy_json;

/// One attempt may take this long, connecting included.
pub const ATTEMPT_DEADLINE: Duration = Duration::from_secs(5);
/// At most this many attempts, with these pauses between them.
pub const ATTEMPTS: usize = 4;
const PAUSES: [Duration; ATTEMPTS - 1] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];

/// Where pushes go: the server's root URL, the topic, the token.
#[derive(Clone)]
pub struct Target {
    root: String,
    topic: String,
    /// For the log: the server's host, never the topic.
    host: String,
    token: Option<String>,
}

/// The HTTP client, made once (its connections are reused).
pub fn client() -> Option<reqwest::Client> {
    reqwest::Client::builder()
        .timeout(ATTEMPT_DEADLINE)
        .connect_timeout(ATTEMPT_DEADLINE)
        // A redirect could take the token elsewhere: ntfy answers a publish itself.
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("pokeshell/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| eprintln!("pokeshell server: ntfy: cannot make an HTTP client: {e}"))
        .ok()
}

/// `pokeshell.ntfyUrl` from the global settings as they are now, with the token; `None` when no
/// push is to go to ntfy (said in the log when the setting is wrong).
pub fn target() -> Option<Target> {
    let cli = crate::cli::Cli::try_parse_from_argv(&[]).ok()?;
    let settings = crate::cli::launch::settings_here(&cli).ok()?;
    let url = settings.get(KeyId::NtfyUrl).edit_text();
    if url.trim().is_empty() {
        return None;
    }
    let (root, topic, host) = match split(url.trim()) {
        Ok(parts) => parts,
        Err(why) => {
            eprintln!("pokeshell server: ntfy: pokeshell.ntfyUrl {why}; nothing is pushed");
            return None;
        }
    };
    let token = match super::token::read() {
        Ok(t) => t,
        Err(why) => {
            eprintln!("pokeshell server: ntfy: the access token {why}; pushing without one");
            None
        }
    };
    let token = token.filter(|_| match plain_http_elsewhere(url.trim()) {
        Some(other) => {
            eprintln!("{}", token_withheld(&other));
            false
        }
        None => true,
    });
    Some(Target {
        root,
        topic,
        host,
        token,
    })
}

/// The log's line when the token is kept from a plain-http ntfy on another machine, `host`.
fn token_withheld(host: &str) -> String {
    format!(
        "pokeshell server: ntfy: pokeshell.ntfyUrl is plain http:// to {host}: the access token \
         would cross the network in the clear, so it is not sent (use https://, or http:// to this \
         machine); pushing without it"
    )
}

/// `pokeshell.webPublicUrl` from the global settings as they are now, ending in `/`: the address
/// every link sent out starts with, when it is set.
pub fn public_url() -> Option<String> {
    let cli = crate::cli::Cli::try_parse_from_argv(&[]).ok()?;
    let settings = crate::cli::launch::settings_here(&cli).ok()?;
    let url = settings.get(KeyId::WebPublicUrl).edit_text();
    let url = url.trim();
    match url {
        "" => None,
        u if u.ends_with('/') => Some(u.to_string()),
        u => Some(format!("{u}/")),
    }
}

/// A topic's URL as the server's root (where JSON is published), the topic, and the host.
pub fn split(url: &str) -> Result<(String, String, String), String> {
    let rest = url
        .strip_prefix("https://")
        .map(|r| ("https://", r))
        .or_else(|| url.strip_prefix("http://").map(|r| ("http://", r)));
    let Some((scheme, rest)) = rest else {
        return Err("is not an http:// or https:// address".to_string());
    };
    if rest.contains(['?', '#']) {
        return Err("has a query or a fragment: give the topic's plain address".to_string());
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.contains('@') {
        return Err(
            "holds a user or password: keep credentials in the token file instead (docs/away.md)".to_string(),
        );
    }
    if authority.is_empty() {
        return Err("names no server".to_string());
    }
    let path = path.trim_end_matches('/');
    let (prefix, topic) = path.rsplit_once('/').unwrap_or(("", path));
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if topic.is_empty() || !topic.chars().all(valid) || topic.len() > 64 {
        return Err("names no topic (letters, digits, - and _, as ntfy takes them)".to_string());
    }
    let root = if prefix.is_empty() {
        format!("{scheme}{authority}/")
    } else {
        format!("{scheme}{authority}/{prefix}/")
    };
    Ok((root, topic.to_string(), authority.to_string()))
}

/// Delivers `note` (event `id`), retrying within the bounds; logs how it went.
pub async fn deliver(client: &reqwest::Client, target: &Target, note: &Notification, id: u64) {
    let body = ntfy_json(note, &target.topic).to_string();
    let started = Instant::now();
    for attempt in 1..=ATTEMPTS {
        let mut req = client
            .post(&target.root)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone());
        if let Some(token) = &target.token {
            req = req.bearer_auth(token);
        }
        let outcome = tokio::time::timeout(ATTEMPT_DEADLINE, req.send()).await;
        let (retry, why) = match outcome {
            Ok(Ok(res)) if res.status().is_success() => {
                eprintln!(
                    "pokeshell server: ntfy: event {id} pushed to {} in {} ms (attempt {attempt})",
                    target.host,
                    started.elapsed().as_millis()
                );
                return;
            }
            Ok(Ok(res)) => {
                let status = res.status();
                let retry = status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
                (retry, format!("answered {status}"))
            }
            // The error's text may hold the URL, and with it the topic: only its kind is said.
            Ok(Err(e)) if e.is_connect() => (true, "cannot be reached".to_string()),
            Ok(Err(e)) if e.is_timeout() => (true, "did not answer in time".to_string()),
            Ok(Err(_)) => (true, "failed".to_string()),
            Err(_) => (true, "did not answer in time".to_string()),
        };
        let last = !retry || attempt == ATTEMPTS;
        eprintln!(
            "pokeshell server: ntfy: event {id}: {} {why} (attempt {attempt} of {ATTEMPTS}){}",
            target.host,
            if last { "; given up" } else { "; trying again" }
        );
        if last {
            return;
        }
        tokio::time::sleep(PAUSES[attempt - 1]).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_url_splits_into_its_root_and_topic() {
        let (root, topic, host) = split("https://ntfy.sh/pokeshell-x7Q").unwrap();
        assert_eq!(
            (root.as_str(), topic.as_str(), host.as_str()),
            ("https://ntfy.sh/", "pokeshell-x7Q", "ntfy.sh")
        );
        let (root, topic, _) = split("http://10.0.0.2:8080/ntfy/alerts/").unwrap();
        assert_eq!(
            (root.as_str(), topic.as_str()),
            ("http://10.0.0.2:8080/ntfy/", "alerts")
        );
    }

    #[test]
    fn credentials_queries_and_odd_urls_are_refused() {
        assert!(
            split("https://me:pw@ntfy.sh/t")
                .unwrap_err()
                .contains("token file")
        );
        assert!(split("https://ntfy.sh/t?auth=x").is_err());
        assert!(split("ftp://ntfy.sh/t").is_err());
        assert!(split("https://ntfy.sh/").is_err());
        assert!(split("https:///t").is_err());
    }
}
