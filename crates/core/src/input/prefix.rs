//! The prefix key: which key it is, and recognising it in any encoding the host may send.

use std::fmt;
use std::str::FromStr;

use crate::input::key::{KeyCode, KeyEvent, KeyModifiers};

use super::keys;

/// A `Ctrl+<key>` combination that has a legacy single-byte form, so it works in every keyboard mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefixKey {
    key: char,
    byte: u8,
}

impl Default for PrefixKey {
    fn default() -> Self {
        Self { key: ']', byte: 0x1d }
    }
}

impl PrefixKey {
    /// The byte a legacy terminal sends for this key.
    pub fn legacy_byte(&self) -> u8 {
        self.byte
    }

    /// The spelling used in settings files: `ctrl+]`, `ctrl+b`, `ctrl+space`.
    pub fn canonical(&self) -> String {
        match self.key {
            ' ' => "ctrl+space".to_string(),
            c => format!("ctrl+{c}"),
        }
    }

    pub fn matches(&self, ev: &KeyEvent) -> bool {
        ev.code == KeyCode::Char(self.key) && ev.modifiers == KeyModifiers::CONTROL
    }

    /// Recognises the prefix in a raw token: the legacy byte, or a CSI-u / modifyOtherKeys report.
    pub fn matches_bytes(&self, bytes: &[u8]) -> Option<KeyEvent> {
        let ev = keys::decode(bytes)?;
        self.matches(&ev).then_some(ev)
    }
}

impl fmt::Display for PrefixKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.key {
            ' ' => write!(f, "Ctrl+Space"),
            c => write!(f, "Ctrl+{}", c.to_ascii_uppercase()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixParseError(String);

impl fmt::Display for PrefixParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid prefix key '{}': use ctrl+<key> where <key> is a letter, space, or one of \\ ] ^ _",
            self.0
        )
    }
}

impl std::error::Error for PrefixParseError {}

impl FromStr for PrefixKey {
    type Err = PrefixParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || PrefixParseError(s.to_string());
        let lower = s.trim().to_ascii_lowercase();
        let rest = ["ctrl+", "ctrl-", "c-", "^"]
            .iter()
            .find_map(|p| lower.strip_prefix(p))
            .ok_or_else(err)?;
        let key = match rest {
            "space" | "@" => ' ',
            r if r.chars().count() == 1 => r.chars().next().ok_or_else(err)?,
            _ => return Err(err()),
        };
        let byte = match key {
            'a'..='z' => key as u8 - b'a' + 1,
            ' ' => 0,
            '\\' => 0x1c,
            ']' => 0x1d,
            '^' => 0x1e,
            '_' => 0x1f,
            _ => return Err(err()),
        };
        // Ctrl+M, Ctrl+I, Ctrl+H and Ctrl+J are Enter, Tab, Backspace and newline on the wire.
        if matches!(key, 'm' | 'i' | 'h' | 'j') {
            return Err(err());
        }
        Ok(Self { key, byte })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_ctrl_bracket_in_every_encoding() {
        let p = PrefixKey::default();
        assert!(p.matches_bytes(b"\x1d").is_some());
        assert!(p.matches_bytes(b"\x1b[93;5u").is_some());
        assert!(p.matches_bytes(b"\x1b[93;5:1u").is_some());
        assert!(p.matches_bytes(b"\x1b[93;5:3u").is_some());
        assert!(p.matches_bytes(b"\x1b[27;5;93~").is_some());
        assert!(p.matches_bytes(b"]").is_none());
        assert!(
            p.matches_bytes(b"\x1b[93;7u").is_none(),
            "ctrl+alt+] is not the prefix"
        );
        assert_eq!(p.to_string(), "Ctrl+]");
    }

    #[test]
    fn parses_other_keys() {
        let p: PrefixKey = "ctrl+b".parse().unwrap();
        assert_eq!(p.legacy_byte(), 2);
        assert!(p.matches_bytes(b"\x02").is_some());
        assert!(p.matches_bytes(b"\x1b[98;5u").is_some());
        assert_eq!(p.to_string(), "Ctrl+B");
        let p: PrefixKey = "C-a".parse().unwrap();
        assert_eq!(p.legacy_byte(), 1);
        let p: PrefixKey = "ctrl+space".parse().unwrap();
        assert!(p.matches_bytes(b"\x00").is_some());
        assert_eq!(p.canonical(), "ctrl+space");
        assert_eq!(" Ctrl+B ".parse::<PrefixKey>().unwrap().canonical(), "ctrl+b");
    }

    #[test]
    fn rejects_keys_without_a_safe_legacy_byte() {
        // Ctrl+[ is Escape itself: it would swallow every Esc meant for pi.
        for bad in [
            "b", "alt+x", "ctrl+", "ctrl+m", "ctrl+1", "ctrl+ab", "ctrl+[", "ctrl+é", "shift+a", "",
        ] {
            assert!(bad.parse::<PrefixKey>().is_err(), "{bad}");
        }
    }
}
