//! Warnings about settings pokeshell could not use. Each names where the problem is, and for a value
//! the key and the value, so the user can fix it; the rest of the file still applies.

use std::fmt;
use std::path::PathBuf;

/// Where a warning's problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    File(PathBuf),
    /// The `pokeshell-config` entry restored from the pi session.
    SessionEntry,
    /// No single place: a clash between resolved values.
    Resolved,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::SessionEntry => f.write_str("session entry"),
            Origin::Resolved => f.write_str("settings"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum WarningKind {
    /// A value of the wrong type or out of range; the key keeps the value of a lower layer.
    InvalidValue {
        key: String,
        value: String,
        expected: String,
    },
    /// A key pokeshell does not know inside one of its blocks; left in the file untouched.
    UnknownKey { key: String },
    /// A block (or the whole file) that is not a JSON object.
    NotAnObject { what: String },
    /// The file is not valid JSON: it is ignored as a whole and never written.
    Malformed { error: String },
    /// The file exists but could not be read.
    Unreadable { error: String },
    /// `wakeupMinSeconds` above `wakeupMaxSeconds`: both fall back to their defaults.
    WakeupClampInverted { min: i64, max: i64 },
    /// pi's `toolTimeoutMs` ends tool calls at or before pokeshell's threshold (plus its 1 s tick).
    ToolTimeoutRace {
        tool_timeout_ms: u64,
        threshold_seconds: i64,
    },
    /// The session entry has a version this pokeshell does not know.
    UnsupportedSessionVersion { version: String },
    /// `ntfyUrl` is plain `http://` to another machine: ntfy's access token is not sent there.
    NtfyPlainHttp { host: String },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConfigWarning {
    pub origin: Origin,
    pub kind: WarningKind,
}

impl ConfigWarning {
    pub fn new(origin: Origin, kind: WarningKind) -> Self {
        ConfigWarning { origin, kind }
    }

    /// The key the warning is about, if any.
    pub fn key(&self) -> Option<&str> {
        match &self.kind {
            WarningKind::InvalidValue { key, .. } | WarningKind::UnknownKey { key } => Some(key),
            WarningKind::WakeupClampInverted { .. } => Some("pokeshell.wakeupMinSeconds"),
            WarningKind::ToolTimeoutRace { .. } => Some("poke.thresholdSeconds"),
            WarningKind::NtfyPlainHttp { .. } => Some("pokeshell.ntfyUrl"),
            _ => None,
        }
    }
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.origin;
        match &self.kind {
            WarningKind::InvalidValue { key, value, expected } => {
                write!(f, "{o}: ignored {key} = {value} ({expected})")
            }
            WarningKind::UnknownKey { key } => write!(f, "{o}: unknown key {key}, left as it is"),
            WarningKind::NotAnObject { what } => write!(f, "{o}: {what} is not a JSON object, ignored"),
            WarningKind::Malformed { error } => {
                write!(
                    f,
                    "{o}: not valid JSON ({error}); the whole file is ignored and left untouched"
                )
            }
            WarningKind::Unreadable { error } => write!(f, "{o}: cannot read ({error}); ignored"),
            WarningKind::WakeupClampInverted { min, max } => write!(
                f,
                "wakeupMinSeconds ({min}) is above wakeupMaxSeconds ({max}); using the defaults for both"
            ),
            WarningKind::ToolTimeoutRace {
                tool_timeout_ms,
                threshold_seconds,
            } => write!(
                f,
                "pi's toolTimeoutMs ({tool_timeout_ms} ms, {o}) ends tool calls at or before \
                 thresholdSeconds ({threshold_seconds}s) plus the 1 s watch tick: the long-tool warning \
                 and auto-abort may never fire"
            ),
            WarningKind::NtfyPlainHttp { host } => write!(
                f,
                "{o}: pokeshell.ntfyUrl is plain http:// to {host}: ntfy's access token is not sent \
                 there (only over https://, or http:// to this machine), and what each push says \
                 crosses the network unencrypted"
            ),
            WarningKind::UnsupportedSessionVersion { version } => {
                write!(
                    f,
                    "{o}: version {version} is not understood; session settings not restored"
                )
            }
        }
    }
}

/// A JSON value shortened for a one-line warning.
pub(crate) fn short_json(value: &serde_json::Value) -> String {
    let text = value.to_string();
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        text
    } else {
        let cut: String = text.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}

/// The host of an ntfy topic's URL that is plain `http://` to another machine, if it is: ntfy's
/// access token is not sent there, since it would cross the network in the clear (`https://`, or
/// `http://` to this machine's loopback: `localhost`, 127.0.0.0/8, `::1`, are fine). `None` for
/// anything else, a URL that is no http address included (its own check says so).
pub fn plain_http_elsewhere(url: &str) -> Option<String> {
    let rest = url.trim().strip_prefix("http://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    if host.is_empty() {
        return None;
    }
    (!crate::loopback::is_this_machine(host)).then(|| host.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Second red-team pass (issue 34, row 29): a token went over plain http to another host.
    #[test]
    fn plain_http_to_another_machine_is_told_apart_from_https_and_loopback() {
        let other = |u: &str| plain_http_elsewhere(u);
        assert_eq!(other("http://10.0.0.2:8080/ntfy/alerts"), Some("10.0.0.2".into()));
        assert_eq!(other("http://ntfy.example/t"), Some("ntfy.example".into()));
        assert_eq!(other("http://[2001:db8::1]:80/t"), Some("2001:db8::1".into()));
        assert_eq!(
            other(" http://127.0.0.1.example/t"),
            Some("127.0.0.1.example".into())
        );
        for fine in [
            "https://ntfy.example/t",
            "http://127.0.0.1:8080/t",
            "http://127.9.9.9/t",
            "http://localhost:80/t",
            "http://LOCALHOST/t",
            "http://[::1]:8080/t",
            "http://[::ffff:127.0.0.1]/t",
            "",
            "ftp://ntfy.example/t",
        ] {
            assert_eq!(other(fine), None, "{fine}");
        }
    }
}
