//! What the host terminal answered to pokeshell's start-up probe. The child's queries are answered from
//! this, so pi sees the capabilities of the user's real terminal.

use pokeshell_core::input::tokenizer::{Token, Tokenizer};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostCaps {
    /// The host's own DA1 answer, replayed verbatim.
    pub da1: Option<Vec<u8>>,
    /// The host answered the kitty keyboard query.
    pub kitty: bool,
    /// `rgb:rrrr/gggg/bbbb` as the host reported them.
    pub fg: Option<String>,
    pub bg: Option<String>,
    pub palette: Vec<Option<String>>,
    /// The host answered the program-status query (OSC 7501): pi's reports are passed on to it.
    pub program_status: bool,
}

/// What the probe read back: the capabilities, and any user keystrokes that arrived meanwhile.
#[derive(Debug, Default)]
pub struct ProbeReading {
    pub caps: HostCaps,
    pub leftover: Vec<u8>,
    pub complete: bool,
}

impl HostCaps {
    /// A VT220-class answer for hosts that did not answer DA1 themselves.
    pub const FALLBACK_DA1: &'static [u8] = b"\x1b[?62;22c";

    /// The probe sent to the host: kitty flags, program status, colours, palette, and DA1 last as
    /// the end marker (a host answers in order, so every other answer comes before it).
    pub fn probe_query() -> Vec<u8> {
        let mut q = String::from("\x1b[?u\x1b]7501;?\x1b\\\x1b]10;?\x1b\\\x1b]11;?\x1b\\");
        for i in 0..16 {
            q.push_str(&format!("\x1b]4;{i};?\x1b\\"));
        }
        q.push_str("\x1b[c");
        q.into_bytes()
    }

    pub fn parse_probe(bytes: &[u8]) -> ProbeReading {
        let mut reading = ProbeReading {
            caps: HostCaps {
                palette: vec![None; 16],
                ..HostCaps::default()
            },
            ..ProbeReading::default()
        };
        let mut tok = Tokenizer::new();
        let mut tokens = tok.feed(bytes);
        tokens.extend(tok.flush());
        for t in tokens {
            let Token::Key(b) = t else {
                reading.leftover.extend(token_bytes(&t));
                continue;
            };
            if !reading.caps.absorb(&b) {
                reading.leftover.extend_from_slice(&b);
            }
            if is_da1(&b) {
                reading.complete = true;
            }
        }
        reading
    }

    /// Takes one reply into the capabilities; false when the bytes were not a reply.
    fn absorb(&mut self, b: &[u8]) -> bool {
        if is_da1(b) {
            self.da1 = Some(b.to_vec());
            return true;
        }
        if b.starts_with(b"\x1b[?") && b.ends_with(b"u") {
            self.kitty = true;
            return true;
        }
        let Some(body) = osc_body(b) else {
            return false;
        };
        // Any later revision of the answer (`7501;?` plus pairs) means the same.
        if body.starts_with("7501;?") {
            self.program_status = true;
            return true;
        }
        let mut parts = body.splitn(3, ';');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("10"), Some(c), None) => self.fg = Some(c.to_string()),
            (Some("11"), Some(c), None) => self.bg = Some(c.to_string()),
            (Some("4"), Some(i), Some(c)) => {
                if let Some(slot) = i.parse::<usize>().ok().and_then(|i| self.palette.get_mut(i)) {
                    *slot = Some(c.to_string());
                }
            }
            _ => return false,
        }
        true
    }
}

fn is_da1(b: &[u8]) -> bool {
    b.starts_with(b"\x1b[?") && b.ends_with(b"c")
}

fn osc_body(b: &[u8]) -> Option<&str> {
    let body = b.strip_prefix(b"\x1b]")?;
    let body = body
        .strip_suffix(b"\x1b\\")
        .or_else(|| body.strip_suffix(b"\x07"))?;
    std::str::from_utf8(body).ok()
}

fn token_bytes(t: &Token) -> Vec<u8> {
    match t {
        Token::Key(b) | Token::PasteData(b) => b.clone(),
        Token::PasteStart => b"\x1b[200~".to_vec(),
        Token::PasteEnd => b"\x1b[201~".to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_kitty_like_host() {
        let r = HostCaps::parse_probe(
            b"\x1b[?0u\x1b]10;rgb:ffff/ffff/ffff\x1b\\\x1b]11;rgb:0000/0000/0000\x07\x1b]4;1;rgb:cccc/0000/0000\x1b\\\x1b[?62;22;52c",
        );
        assert!(r.complete);
        assert!(r.caps.kitty);
        assert_eq!(r.caps.fg.as_deref(), Some("rgb:ffff/ffff/ffff"));
        assert_eq!(r.caps.bg.as_deref(), Some("rgb:0000/0000/0000"));
        assert_eq!(r.caps.palette[1].as_deref(), Some("rgb:cccc/0000/0000"));
        assert_eq!(r.caps.da1.as_deref(), Some(&b"\x1b[?62;22;52c"[..]));
        assert!(r.leftover.is_empty());
    }

    #[test]
    fn keeps_user_typing_that_arrived_during_the_probe() {
        let r = HostCaps::parse_probe(b"ab\x1b[?1;2c\r");
        assert!(r.complete);
        assert!(!r.caps.kitty);
        assert_eq!(r.leftover, b"ab\r");
    }

    #[test]
    fn a_host_answering_the_program_status_query_is_noted() {
        let query = HostCaps::probe_query();
        let status_at = query
            .windows(9)
            .position(|w| w == b"\x1b]7501;?\x1b")
            .expect("queried");
        let da1_at = query.windows(3).position(|w| w == b"\x1b[c").expect("DA1");
        assert!(status_at < da1_at, "DA1 stays the end marker");

        let r = HostCaps::parse_probe(b"\x1b]7501;?\x1b\\\x1b[?62;22c");
        assert!(r.complete && r.caps.program_status);
        assert!(r.leftover.is_empty());
        let r = HostCaps::parse_probe(b"\x1b]7501;?v=2\x07\x1b[?62;22c");
        assert!(r.caps.program_status);
        let r = HostCaps::parse_probe(b"\x1b]7501;state=done\x1b\\\x1b[?62;22c");
        assert!(!r.caps.program_status, "only the query's answer counts");
        assert!(!HostCaps::parse_probe(b"\x1b[?62;22c").caps.program_status);
    }

    #[test]
    fn silent_host_is_incomplete() {
        let r = HostCaps::parse_probe(b"");
        assert!(!r.complete);
        assert_eq!(r.caps.da1, None);
    }
}
