//! Decides, token by token, whether input goes to pi or to pokeshell (the key after the prefix).

use crate::input::key::{KeyCode, KeyEvent, KeyEventKind};

use super::keys;
use super::prefix::PrefixKey;
use crate::input::tokenizer::Token;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Routed {
    /// For the child, unchanged (the app may still adapt paste markers and mouse reports).
    Child(Token),
    /// The prefix was pressed; the next key belongs to pokeshell.
    PrefixArmed,
    /// The key pressed after the prefix, with its raw bytes (the prefix pressed twice sends them on).
    Command { key: KeyEvent, raw: Vec<u8> },
}

#[derive(Debug, Default)]
pub struct Router {
    prefix: PrefixKey,
    armed: bool,
    /// Keys whose press pokeshell consumed; their release reports must not reach pi either.
    swallow_release: Vec<KeyCode>,
    release_events: bool,
}

impl Router {
    pub fn new(prefix: PrefixKey) -> Self {
        Self {
            prefix,
            ..Self::default()
        }
    }

    pub fn prefix(&self) -> PrefixKey {
        self.prefix
    }

    pub fn is_armed(&self) -> bool {
        self.armed
    }

    /// Whether the host currently reports key releases (kitty flag 2 mirrored from pi).
    pub fn set_release_events(&mut self, on: bool) {
        self.release_events = on;
        if !on {
            self.swallow_release.clear();
        }
    }

    pub fn route(&mut self, token: Token) -> Option<Routed> {
        let Token::Key(bytes) = &token else {
            self.armed = false;
            return Some(Routed::Child(token));
        };
        let Some(ev) = keys::decode(bytes) else {
            // Mouse and focus reports are not keys: they pass through even while armed.
            return Some(Routed::Child(token));
        };
        if ev.kind == KeyEventKind::Release {
            if let Some(i) = self.swallow_release.iter().position(|c| *c == ev.code) {
                self.swallow_release.remove(i);
                return None;
            }
            return if self.armed {
                None
            } else {
                Some(Routed::Child(token))
            };
        }
        let is_prefix = self.prefix.matches(&ev);
        if ev.kind == KeyEventKind::Repeat && (self.armed || is_prefix) {
            return None;
        }
        if self.armed {
            self.armed = false;
            self.note_consumed(ev.code);
            return Some(Routed::Command {
                key: ev,
                raw: bytes.clone(),
            });
        }
        if is_prefix {
            self.armed = true;
            self.note_consumed(ev.code);
            return Some(Routed::PrefixArmed);
        }
        Some(Routed::Child(token))
    }

    fn note_consumed(&mut self, code: KeyCode) {
        if self.release_events && !self.swallow_release.contains(&code) {
            self.swallow_release.push(code);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::tokenizer::Tokenizer;

    fn run(router: &mut Router, bytes: &[u8]) -> Vec<Routed> {
        let mut t = Tokenizer::new();
        t.feed(bytes)
            .into_iter()
            .filter_map(|tok| router.route(tok))
            .collect()
    }

    fn child_bytes(out: &[Routed]) -> Vec<u8> {
        let mut v = Vec::new();
        for r in out {
            if let Routed::Child(Token::Key(b)) = r {
                v.extend(b);
            }
        }
        v
    }

    #[test]
    fn ordinary_input_goes_to_the_child_unchanged() {
        let mut r = Router::default();
        let input = b"hello\r\x1b[13;2u\x1b[A\x03";
        let out = run(&mut r, input);
        assert_eq!(child_bytes(&out), input.to_vec());
    }

    #[test]
    fn legacy_prefix_then_command() {
        let mut r = Router::default();
        let out = run(&mut r, b"\x1ds");
        assert_eq!(out[0], Routed::PrefixArmed);
        assert!(matches!(&out[1], Routed::Command { key, .. } if key.code == KeyCode::Char('s')));
        assert!(!r.is_armed());
    }

    #[test]
    fn kitty_prefix_with_release_events_swallows_releases() {
        let mut r = Router::default();
        r.set_release_events(true);
        let out = run(&mut r, b"\x1b[93;5u\x1b[93;5:3us\x1b[115;1:3ux\x1b[120;1:3u");
        assert_eq!(out[0], Routed::PrefixArmed);
        assert!(matches!(&out[1], Routed::Command { key, .. } if key.code == KeyCode::Char('s')));
        // Only the later key and its own release reach pi.
        assert_eq!(child_bytes(&out[2..]), b"x\x1b[120;1:3u".to_vec());
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn release_of_prefix_arriving_after_the_command_is_swallowed() {
        let mut r = Router::default();
        r.set_release_events(true);
        let out = run(&mut r, b"\x1b[93;5us\x1b[93;5:3u\x1b[115;1:3u");
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn prefix_twice_gives_a_command_carrying_the_raw_prefix() {
        let mut r = Router::default();
        let out = run(&mut r, b"\x1d\x1d");
        assert_eq!(
            out[1],
            Routed::Command {
                key: keys::decode(b"\x1d").unwrap(),
                raw: b"\x1d".to_vec()
            }
        );
    }

    #[test]
    fn lone_escape_after_prefix_is_a_command_not_forwarded() {
        let mut r = Router::default();
        let out = run(&mut r, b"\x1d\x1b");
        assert!(matches!(&out[1], Routed::Command { key, .. } if key.code == KeyCode::Esc));
        // And a lone Esc otherwise goes straight to the child.
        let out = run(&mut r, b"\x1b");
        assert_eq!(out, vec![Routed::Child(Token::Key(vec![0x1b]))]);
    }

    #[test]
    fn paste_cancels_an_armed_prefix_and_passes_through() {
        let mut r = Router::default();
        let out = run(&mut r, b"\x1d\x1b[200~\x1d\x1b[201~");
        assert_eq!(out[0], Routed::PrefixArmed);
        assert_eq!(out[1], Routed::Child(Token::PasteStart));
        assert_eq!(out[2], Routed::Child(Token::PasteData(vec![0x1d])));
        assert!(!r.is_armed());
    }

    #[test]
    fn mouse_reports_pass_while_armed() {
        let mut r = Router::default();
        let out = run(&mut r, b"\x1d\x1b[<0;3;4Mp");
        assert_eq!(out[1], Routed::Child(Token::Key(b"\x1b[<0;3;4M".to_vec())));
        assert!(matches!(&out[2], Routed::Command { key, .. } if key.code == KeyCode::Char('p')));
    }
}
