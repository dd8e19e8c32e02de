//! The reference terminal's answers to the queries a program writes: its colours (OSC 10, 11 and the
//! 16-colour palette, OSC 4) and DA1, the way xterm or tmux with known colours answer. pi picks its
//! theme from the colours, so a terminal that answers them is needed to see what a real one shows.

use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const FOREGROUND: &str = "rgb:d0d0/d0d0/d0d0";
pub const BACKGROUND: &str = "rgb:1e1e/1e1e/1e1e";
pub const DA1: &[u8] = b"\x1b[?62;22c";

/// xterm's default palette, as `rgb:` answers.
const PALETTE: [&str; 16] = [
    "0000/0000/0000",
    "cdcd/0000/0000",
    "0000/cdcd/0000",
    "cdcd/cdcd/0000",
    "0000/0000/eeee",
    "cdcd/0000/cdcd",
    "0000/cdcd/cdcd",
    "e5e5/e5e5/e5e5",
    "7f7f/7f7f/7f7f",
    "ffff/0000/0000",
    "0000/ffff/0000",
    "ffff/ffff/0000",
    "5c5c/5c5c/ffff",
    "ffff/0000/ffff",
    "0000/ffff/ffff",
    "ffff/ffff/ffff",
];

/// Longest query kept from the end of one chunk, in case the next chunk completes it.
const CARRY: usize = 16;

/// Reads a program's output chunk by chunk and returns what a terminal would type back.
#[derive(Default)]
pub struct Answerer {
    /// The end of the previous chunk: a query may be split between two reads.
    carry: Mutex<Vec<u8>>,
    /// Colour queries before this moment go unanswered: the terminal learns its colours late (tmux
    /// asks its client's terminal for them when the client attaches).
    colours_from: Option<Instant>,
}

impl Answerer {
    pub fn learning_colours_after(delay: Duration) -> Answerer {
        Answerer {
            colours_from: Some(Instant::now() + delay),
            ..Answerer::default()
        }
    }

    /// What a terminal types back for the queries in `chunk`.
    pub fn answer(&self, chunk: &[u8]) -> Vec<u8> {
        let mut carry = self.carry.lock().unwrap_or_else(|p| p.into_inner());
        let mut bytes = std::mem::take(&mut *carry);
        let fresh_from = bytes.len();
        bytes.extend_from_slice(chunk);
        let mut out = Vec::new();
        let knows_colours = self.colours_from.is_none_or(|t| Instant::now() >= t);
        let mut i = 0;
        while i < bytes.len() {
            match query_at(&bytes[i..], knows_colours) {
                Some((len, reply)) => {
                    // A query wholly inside the carried bytes was answered with the last chunk.
                    if i + len > fresh_from {
                        out.extend_from_slice(&reply);
                    }
                    i += len;
                }
                None => i += 1,
            }
        }
        let keep = bytes.len().saturating_sub(CARRY);
        *carry = bytes[keep..].to_vec();
        out
    }
}

/// The query at the start of `b` (its length and the answer), if there is one; colour queries are
/// answered only when the terminal `knows_colours`.
fn query_at(b: &[u8], knows_colours: bool) -> Option<(usize, Vec<u8>)> {
    if b.starts_with(b"\x1b[c") {
        return Some((3, DA1.to_vec()));
    }
    if b.starts_with(b"\x1b[0c") {
        return Some((4, DA1.to_vec()));
    }
    let body = b.strip_prefix(b"\x1b]")?;
    let end = body.iter().position(|&c| c == 0x07 || c == 0x1b)?;
    let term: &[u8] = if body[end] == 0x07 {
        b"\x07"
    } else if body.get(end + 1) == Some(&b'\\') {
        b"\x1b\\"
    } else {
        return None;
    };
    let len = 2 + end + term.len();
    let text = std::str::from_utf8(&body[..end]).ok()?;
    if !knows_colours {
        return None;
    }
    let colour = match text {
        "10;?" => format!("10;{FOREGROUND}"),
        "11;?" => format!("11;{BACKGROUND}"),
        _ => {
            let index: usize = text.strip_prefix("4;")?.strip_suffix(";?")?.parse().ok()?;
            format!("4;{index};rgb:{}", PALETTE.get(index)?)
        }
    };
    let mut reply = b"\x1b]".to_vec();
    reply.extend_from_slice(colour.as_bytes());
    reply.extend_from_slice(term);
    Some((len, reply))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_colours_and_da1_in_order_even_across_chunks() {
        let a = Answerer::default();
        assert_eq!(
            a.answer(b"x\x1b]11;?\x07\x1b]1"),
            b"\x1b]11;rgb:1e1e/1e1e/1e1e\x07"
        );
        assert_eq!(
            a.answer(b"0;?\x1b\\\x1b]4;9;?\x07\x1b[c"),
            b"\x1b]10;rgb:d0d0/d0d0/d0d0\x1b\\\x1b]4;9;rgb:ffff/0000/0000\x07\x1b[?62;22c"
        );
        assert!(a.answer(b"\x1b[>c\x1b[?u plain").is_empty());
    }
}
