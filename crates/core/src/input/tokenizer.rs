//! Splits the host's raw stdin stream into whole key sequences without changing a byte.
//!
//! pokeshell forwards input unchanged, so the tokenizer only has to find sequence boundaries: the
//! prefix key must be matched on a whole sequence, and a bracketed paste must pass through as one
//! opaque block (a pasted `Ctrl+]` byte is text, not the prefix).

const ESC: u8 = 0x1b;
const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// The longest partial sequence held back. Real keys and terminal replies are far shorter; a string
/// sequence that never ends (or garbage that looks like one) is passed on as it is once it gets this
/// long, so held bytes, and the cost of scanning them again on every read, stay bounded.
pub const MAX_PENDING_BYTES: usize = 8 * 1024;

/// One unit of input, carrying its exact bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A key or escape sequence: a UTF-8 character, a C0 byte, `ESC x`, CSI, SS3, or a string
    /// sequence (OSC, DCS, APC, PM, SOS).
    Key(Vec<u8>),
    /// `ESC [ 200 ~`.
    PasteStart,
    /// Pasted bytes between the markers; a long paste arrives in several pieces.
    PasteData(Vec<u8>),
    /// `ESC [ 201 ~`.
    PasteEnd,
}

#[derive(Debug, Default)]
pub struct Tokenizer {
    pending: Vec<u8>,
    in_paste: bool,
}

enum Scan {
    Complete(usize),
    Incomplete,
}

impl Tokenizer {
    pub fn new() -> Self {
        Self::default()
    }

    /// True while bytes are held back waiting for the rest of a sequence.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// How many bytes are held back (at most [`MAX_PENDING_BYTES`]).
    pub fn pending_bytes(&self) -> usize {
        self.pending.len()
    }

    /// Feeds one read's worth of bytes. A lone ESC at the end of a read is taken as the Escape key at
    /// once (pi must see it within its 10 ms window); a longer partial sequence is held until the next
    /// read or [`Tokenizer::flush`].
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Token> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut i = 0;
        while i < buf.len() {
            if self.in_paste {
                match find(&buf[i..], PASTE_END) {
                    Some(pos) => {
                        if pos > 0 {
                            out.push(Token::PasteData(buf[i..i + pos].to_vec()));
                        }
                        out.push(Token::PasteEnd);
                        self.in_paste = false;
                        i += pos + PASTE_END.len();
                    }
                    None => {
                        // Keep back a tail that could be the start of the end marker.
                        let keep = partial_suffix(&buf[i..], PASTE_END);
                        let end = buf.len() - keep;
                        if end > i {
                            out.push(Token::PasteData(buf[i..end].to_vec()));
                        }
                        self.pending = buf[end..].to_vec();
                        return out;
                    }
                }
                continue;
            }
            match scan_one(&buf[i..]) {
                Scan::Complete(n) => {
                    let seq = &buf[i..i + n];
                    if seq == PASTE_START {
                        self.in_paste = true;
                        out.push(Token::PasteStart);
                    } else {
                        out.push(Token::Key(seq.to_vec()));
                    }
                    i += n;
                }
                Scan::Incomplete => {
                    if buf.len() - i == 1 && buf[i] == ESC {
                        out.push(Token::Key(vec![ESC]));
                        i += 1;
                    } else if buf.len() - i > MAX_PENDING_BYTES {
                        out.push(Token::Key(buf[i..].to_vec()));
                        return out;
                    } else {
                        self.pending = buf[i..].to_vec();
                        return out;
                    }
                }
            }
        }
        out
    }

    /// Releases whatever is held back (called when no more bytes came for a short while): a partial
    /// sequence is passed on as it is.
    pub fn flush(&mut self) -> Vec<Token> {
        if self.pending.is_empty() {
            return Vec::new();
        }
        let bytes = std::mem::take(&mut self.pending);
        if self.in_paste {
            vec![Token::PasteData(bytes)]
        } else {
            vec![Token::Key(bytes)]
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Length of the longest suffix of `hay` that is a proper prefix of `needle`.
fn partial_suffix(hay: &[u8], needle: &[u8]) -> usize {
    (1..needle.len().min(hay.len() + 1))
        .rev()
        .find(|&k| hay[hay.len() - k..] == needle[..k])
        .unwrap_or(0)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

fn scan_one(b: &[u8]) -> Scan {
    let first = b[0];
    if first != ESC {
        let n = utf8_len(first);
        return if b.len() >= n {
            Scan::Complete(n)
        } else {
            Scan::Incomplete
        };
    }
    let Some(&second) = b.get(1) else {
        return Scan::Incomplete;
    };
    match second {
        b'[' => scan_csi(b),
        b'O' => {
            if b.len() >= 3 {
                Scan::Complete(3)
            } else {
                Scan::Incomplete
            }
        }
        b']' | b'P' | b'_' | b'^' | b'X' => scan_string(b),
        // A third ESC: the first is the Escape key on its own (Alt is not held twice), which also
        // keeps a long run of ESC bytes from recursing once per byte.
        ESC if b.get(2) == Some(&ESC) => Scan::Complete(1),
        // ESC ESC [ A and friends: Alt held with a special key.
        ESC => match scan_one(&b[1..]) {
            Scan::Complete(n) => Scan::Complete(n + 1),
            Scan::Incomplete => Scan::Incomplete,
        },
        _ => {
            let n = 1 + utf8_len(second);
            if b.len() >= n {
                Scan::Complete(n)
            } else {
                Scan::Incomplete
            }
        }
    }
}

fn scan_csi(b: &[u8]) -> Scan {
    for (i, &c) in b.iter().enumerate().skip(2) {
        if (0x40..=0x7e).contains(&c) {
            // Legacy mouse reports (CSI M b x y) carry three raw bytes after the final.
            if c == b'M' && i == 2 {
                return if b.len() >= 6 {
                    Scan::Complete(6)
                } else {
                    Scan::Incomplete
                };
            }
            return Scan::Complete(i + 1);
        }
        if !(0x20..=0x3f).contains(&c) {
            // Not a valid CSI body: end the sequence before the stray byte.
            return Scan::Complete(i);
        }
    }
    Scan::Incomplete
}

fn scan_string(b: &[u8]) -> Scan {
    let mut i = 2;
    while i < b.len() {
        match b[i] {
            0x07 => return Scan::Complete(i + 1),
            ESC => {
                return match b.get(i + 1) {
                    Some(b'\\') => Scan::Complete(i + 2),
                    Some(_) => Scan::Complete(i),
                    None => Scan::Incomplete,
                };
            }
            _ => i += 1,
        }
    }
    Scan::Incomplete
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(tokens: &[Token]) -> Vec<&[u8]> {
        tokens
            .iter()
            .map(|t| match t {
                Token::Key(b) => b.as_slice(),
                other => panic!("expected key, got {other:?}"),
            })
            .collect()
    }

    #[test]
    fn splits_text_controls_and_sequences() {
        let mut t = Tokenizer::new();
        let out = t.feed(b"a\x1b[A\x1bOB\x03\x1b[13;2u\x1bx\xc3\xa9");
        assert_eq!(
            keys(&out),
            vec![
                &b"a"[..],
                b"\x1b[A",
                b"\x1bOB",
                b"\x03",
                b"\x1b[13;2u",
                b"\x1bx",
                "é".as_bytes()
            ]
        );
        assert!(!t.has_pending());
    }

    #[test]
    fn lone_escape_is_emitted_at_once() {
        let mut t = Tokenizer::new();
        assert_eq!(keys(&t.feed(b"\x1b")), vec![&b"\x1b"[..]]);
        assert!(!t.has_pending());
    }

    #[test]
    fn sequence_split_across_reads_is_joined() {
        let mut t = Tokenizer::new();
        assert!(t.feed(b"\x1b[93;").is_empty());
        assert!(t.has_pending());
        assert_eq!(keys(&t.feed(b"5u")), vec![&b"\x1b[93;5u"[..]]);
    }

    #[test]
    fn utf8_split_across_reads_is_joined() {
        let mut t = Tokenizer::new();
        let bytes = "€".as_bytes();
        assert!(t.feed(&bytes[..1]).is_empty());
        assert_eq!(keys(&t.feed(&bytes[1..])), vec![bytes]);
    }

    #[test]
    fn flush_releases_a_partial_sequence_unchanged() {
        let mut t = Tokenizer::new();
        assert!(t.feed(b"\x1b[1;").is_empty());
        assert_eq!(keys(&t.flush()), vec![&b"\x1b[1;"[..]]);
        assert!(t.flush().is_empty());
    }

    #[test]
    fn paste_is_opaque_even_with_prefix_bytes_inside() {
        let mut t = Tokenizer::new();
        let out = t.feed(b"\x1b[200~a\x1db\x1b[A\x1b[201~c");
        assert_eq!(
            out,
            vec![
                Token::PasteStart,
                Token::PasteData(b"a\x1db\x1b[A".to_vec()),
                Token::PasteEnd,
                Token::Key(b"c".to_vec())
            ]
        );
    }

    #[test]
    fn paste_end_marker_split_across_reads() {
        let mut t = Tokenizer::new();
        let out = t.feed(b"\x1b[200~hello\x1b[20");
        assert_eq!(out, vec![Token::PasteStart, Token::PasteData(b"hello".to_vec())]);
        let out = t.feed(b"1~");
        assert_eq!(out, vec![Token::PasteEnd]);
    }

    #[test]
    fn long_paste_streams_in_pieces() {
        let mut t = Tokenizer::new();
        let mut all = Vec::new();
        for tok in t.feed(b"\x1b[200~").into_iter().chain(t.feed(&[b'x'; 5000])) {
            if let Token::PasteData(d) = tok {
                all.extend(d);
            }
        }
        assert_eq!(all.len(), 5000);
    }

    #[test]
    fn osc_and_dcs_strings_are_single_tokens() {
        let mut t = Tokenizer::new();
        let out = t.feed(b"\x1b]11;rgb:0000/0000/0000\x1b\\\x1b]10;?\x07\x1bP>|x\x1b\\");
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn legacy_mouse_report_keeps_its_raw_bytes() {
        let mut t = Tokenizer::new();
        let out = t.feed(b"\x1b[M !!a");
        assert_eq!(keys(&out), vec![&b"\x1b[M !!"[..], b"a"]);
    }

    #[test]
    fn alt_with_special_key() {
        let mut t = Tokenizer::new();
        assert_eq!(keys(&t.feed(b"\x1b\x1b[A")), vec![&b"\x1b\x1b[A"[..]]);
    }
}
