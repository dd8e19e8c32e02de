//! `pokeshell ls --json`: the versioned document scripts and other machines read (docs/machines.md).
//!
//! [`SCHEMA`] changes only when a field is renamed or removed or changes meaning; new fields are
//! added without a bump, and a reader ignores the fields it does not know.

use serde::{Deserialize, Serialize};

use pokeshell_core::wire::Listing;

/// The schema's version, the first field of every document.
pub const SCHEMA: u32 = 1;

/// The whole answer of `pokeshell ls --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LsJson {
    pub schema: u32,
    /// The pokeshell version that wrote it.
    #[serde(default)]
    pub version: String,
    /// The machine's host name.
    #[serde(default)]
    pub machine: String,
    /// Whether a pokeshell server runs there (without one there are no sessions).
    #[serde(default)]
    pub server: bool,
    #[serde(default)]
    pub sessions: Vec<SessionJson>,
}

/// One session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionJson {
    #[serde(default)]
    pub number: u32,
    #[serde(default)]
    pub name: String,
    /// `number:name`, as `ls` prints it.
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub state: String,
    /// How much it needs the user: one of [`ATTENTION`], or `starting`.
    #[serde(default)]
    pub attention: String,
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub last_intervention: Option<String>,
    #[serde(default)]
    pub age_secs: u64,
    #[serde(default)]
    pub attached: usize,
    #[serde(default)]
    pub dir: String,
    /// The branch checked out in `dir`, when it is in a git checkout on a branch.
    #[serde(default)]
    pub branch: Option<String>,
    /// Whether that checkout has uncommitted changes; null when not in a checkout.
    #[serde(default)]
    pub dirty: Option<bool>,
    /// The machine the session runs on, as the reader names it (its host name when written).
    #[serde(default)]
    pub machine: String,
    /// Tokens since the session started: prompt tokens not from the cache, output, cache reads.
    #[serde(default)]
    pub tokens_in: u64,
    #[serde(default)]
    pub tokens_out: u64,
    #[serde(default)]
    pub cache_read: u64,
    /// US dollars as pi priced the replies; null when pi has no prices for the model.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// While a guard rail pauses the session: what allowing more grants ("allow $25.00 more").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<String>,
}

/// The attention keywords, the ones needing the user first.
pub const ATTENTION: [&str; 8] = [
    "paused", "question", "gave_up", "limit", "stalled", "working", "idle", "exited",
];

/// Where a keyword sorts: needing the user first; `starting` with the working ones, a keyword from a
/// newer pokeshell after the idle ones.
pub fn attention_rank(keyword: &str) -> usize {
    match keyword {
        "starting" => 5,
        "exited" => 8,
        k => ATTENTION.iter().position(|a| *a == k).unwrap_or(7),
    }
}

impl SessionJson {
    /// A session of this machine's server, as `ls --json` writes it.
    pub fn from_listing(l: &Listing, machine: &str) -> SessionJson {
        let (number, name) = match l.name.split_once(':') {
            Some((n, rest)) => (n.parse().unwrap_or(0), rest.to_string()),
            None => (0, l.name.clone()),
        };
        SessionJson {
            number,
            name,
            label: l.name.clone(),
            state: l.state.clone(),
            attention: if l.attention.is_empty() {
                "starting".to_string()
            } else {
                l.attention.clone()
            },
            tool: l.tool.clone(),
            last_intervention: l.last_intervention.clone(),
            age_secs: l.age_secs,
            attached: l.attached,
            dir: l.dir.clone(),
            branch: l.branch.clone(),
            dirty: l.dirty,
            machine: machine.to_string(),
            tokens_in: l.tokens_in,
            tokens_out: l.tokens_out,
            cache_read: l.cache_read,
            cost_usd: l.cost_usd,
            offer: l.offer.clone(),
        }
    }
}

/// Why another machine's answer cannot be used.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadError {
    /// Not JSON, or JSON that is not a pokeshell listing.
    Garbage(String),
    /// A listing of another schema version.
    OtherVersion { schema: u64, version: String },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Garbage(why) => write!(f, "its `pokeshell ls --json` answered something else ({why})"),
            ReadError::OtherVersion { schema, version } => write!(
                f,
                "it runs pokeshell {} (listing schema {schema}), this one is {} (schema {SCHEMA}); \
                 install the same version on both",
                if version.is_empty() {
                    "of unknown version"
                } else {
                    version
                },
                env!("CARGO_PKG_VERSION"),
            ),
        }
    }
}

/// Reads another machine's `ls --json`, tolerant of fields it does not know.
pub fn read(bytes: &[u8]) -> Result<LsJson, ReadError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        let start: String = String::from_utf8_lossy(bytes).chars().take(60).collect();
        ReadError::Garbage(format!("not JSON: {e}; it began with {start:?}"))
    })?;
    let Some(schema) = value.get("schema").and_then(serde_json::Value::as_u64) else {
        return Err(ReadError::Garbage("no `schema` field".to_string()));
    };
    if schema != u64::from(SCHEMA) {
        let version = value
            .get("version")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .chars()
            .take(40)
            .collect();
        return Err(ReadError::OtherVersion { schema, version });
    }
    serde_json::from_value(value).map_err(|e| ReadError::Garbage(e.to_string()))
}

/// This machine's host name.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing() -> Listing {
        Listing {
            name: "3:api".into(),
            dir: "/w/api".into(),
            state: "waiting for you: deploy?".into(),
            tool: None,
            tool_secs: None,
            last_intervention: Some("poked".into()),
            age_secs: 90,
            attached: 1,
            attention: "question".into(),
            branch: Some("feat".into()),
            dirty: Some(true),
            tokens_in: 1200,
            tokens_out: 300,
            cache_read: 5000,
            cost_usd: Some(0.35),
            context_percent: None,
            offer: None,
        }
    }

    #[test]
    fn a_listing_round_trips_through_the_document() {
        let s = SessionJson::from_listing(&listing(), "box");
        assert_eq!((s.number, s.name.as_str(), s.label.as_str()), (3, "api", "3:api"));
        let doc = LsJson {
            schema: SCHEMA,
            version: "9.9.9".into(),
            machine: "box".into(),
            server: true,
            sessions: vec![s.clone()],
        };
        let text = serde_json::to_vec(&doc).unwrap();
        assert_eq!(read(&text).unwrap(), doc);
        assert!(String::from_utf8_lossy(&text).contains("\"last_intervention\":\"poked\""));
    }

    #[test]
    fn newer_fields_are_ignored_and_missing_ones_defaulted() {
        let text =
            br#"{"schema":1,"version":"2.0.0","future":[1],"sessions":[{"name":"x","cost":{"usd":3}}]}"#;
        let doc = read(text).unwrap();
        assert_eq!(doc.sessions[0].name, "x");
        assert_eq!(doc.sessions[0].branch, None);
    }

    #[test]
    fn garbage_and_other_versions_are_told_apart() {
        assert!(matches!(
            read(b"bash: pokeshell: not found"),
            Err(ReadError::Garbage(_))
        ));
        assert!(matches!(read(b"{\"sessions\":[]}"), Err(ReadError::Garbage(_))));
        let other = read(br#"{"schema":2,"version":"3.1.0"}"#).unwrap_err();
        assert_eq!(
            other,
            ReadError::OtherVersion {
                schema: 2,
                version: "3.1.0".into()
            }
        );
        assert!(other.to_string().contains("3.1.0"), "{other}");
    }

    #[test]
    fn attention_sorts_the_ones_needing_the_user_first() {
        assert!(attention_rank("question") < attention_rank("stalled"));
        assert!(attention_rank("stalled") < attention_rank("working"));
        assert_eq!(attention_rank("starting"), attention_rank("working"));
        assert!(attention_rank("from-the-future") < attention_rank("exited"));
        assert!(attention_rank("idle") < attention_rank("from-the-future"));
        assert_eq!(pokeshell_core::brief::Attention::GaveUp.keyword(), "gave_up");
    }
}
