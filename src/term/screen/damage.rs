//! Which rows a batch of the child's output may have changed, so that drawing the pane looks at
//! those rows alone (a key's echo changes one row; finding that by comparing every cell of the
//! screen with a copy was most of an echo's drawing time).
//!
//! vt100 keeps no record of what it changed, so the mirror feeds it one piece at a time (a run of
//! text, a control, an escape sequence) and reads the cursor before and after each. What a piece
//! changes follows from what it is and where the cursor went: text changes the cells it was
//! written to, which is one row when the cursor moved along that row by exactly the text's width
//! (any wrap or scroll moves it otherwise); a line feed changes nothing unless it scrolled, which
//! shows as the cursor not going one row down; cursor moves, colours and modes change nothing.
//! Whatever is not known for sure (a scroll, an erase of the screen, a string command, a sequence
//! with a control inside it, text that is not whole UTF-8, a character that joins the one before)
//! counts as changing every row, which is what comparing the whole screen found before.

use std::ops::Range;

use unicode_width::UnicodeWidthChar;

use super::Mirror;

const ESC: u8 = 0x1b;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
/// The most parameter and intermediate bytes kept of a sequence; a longer one counts as changing
/// every row.
const MAX_PARAMS: usize = 64;
/// The biggest batch followed piece by piece; a bigger one (a flood) counts as changing every row.
pub const TRACKED_BATCH: usize = 8192;

impl Mirror {
    /// Parses a batch one piece at a time, and marks the rows each piece changed.
    pub(super) fn process_tracked(&mut self, bytes: &[u8]) {
        let rows = self.parser.screen().size().0.get();
        let mut at = 0;
        while at < bytes.len() {
            let Piece { len: n, effect, .. } = self.follower.next(&bytes[at..]);
            let piece = &bytes[at..at + n];
            let before = self.parser.screen().cursor_position();
            self.parser.process(piece);
            at += n;
            let Some(effect) = effect else { continue };
            let after = self.parser.screen().cursor_position();
            match rows_changed(effect, piece, before, after, rows) {
                Some(changed) if changed.is_empty() => {}
                Some(changed) => self.changes.mark_rows(changed),
                None => self.changes.mark_all(),
            }
        }
    }
}

/// Where the byte stream stands between pieces: a coarse copy of the parser's own states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    Escape,
    EscapeIntermediate,
    Csi,
    Osc,
    /// DCS, SOS, PM, APC.
    Str,
}

/// What a piece may change, before the cursor's moves are looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Cursor moves, colours, modes, queries, sequences cut short.
    Nothing,
    /// Printed text.
    Text,
    /// The cursor's row (erasing, inserting or deleting within the line).
    Row,
    /// From the cursor's row down, or from the top down to it (erasing part of the screen).
    Below,
    Above,
    /// One row down or up (a line feed, an index): nothing unless it scrolled.
    Down,
    Up,
    /// Anything.
    All,
}

/// Follows the stream from piece to piece, across batches.
#[derive(Debug, Default)]
pub struct Follower {
    state: State,
    /// Of the sequence being read: its private marker (`?`, `>`, `<`, `=`), parameters and
    /// intermediates.
    marker: Option<u8>,
    params: Vec<u8>,
    inter: Vec<u8>,
    /// The sequence had the parser carry out a control inside it, or was longer than is kept.
    odd: bool,
    /// The piece being read began in this batch (its start is where the parser was at rest).
    began_here: bool,
}

/// One piece of the stream, as far as one batch holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    pub len: usize,
    /// What it may change; `None` while a sequence goes on past the end of the batch having
    /// changed nothing yet (its effect comes with the batch that ends it).
    pub effect: Option<Effect>,
    /// Printable ASCII, a carriage return, a line feed, or a whole colour change begun in this
    /// batch: what fast-forwarding may skip (`fast_forward.rs`).
    pub plain: bool,
}

impl Piece {
    fn new(len: usize, effect: Option<Effect>, plain: bool) -> Piece {
        Piece { len, effect, plain }
    }
}

fn text_byte(b: u8) -> bool {
    b >= 0x20 && b != 0x7f
}

impl Follower {
    /// The next piece of `bytes`. Its length is 0 only when a sequence begun in an earlier batch
    /// was cut short by an escape.
    pub fn next(&mut self, bytes: &[u8]) -> Piece {
        self.began_here = self.state == State::Ground;
        if self.state == State::Ground {
            let Some(&first) = bytes.first() else {
                return Piece::new(0, None, false);
            };
            if text_byte(first) {
                let n = bytes.iter().position(|b| !text_byte(*b)).unwrap_or(bytes.len());
                // Text bytes are neither controls nor DEL, so ASCII ones are printable.
                return Piece::new(n, Some(Effect::Text), bytes[..n].is_ascii());
            }
            if let Some(piece) = self.whole_csi(bytes) {
                return piece;
            }
            if first != ESC {
                let effect = if matches!(first, b'\n' | 0x0b | 0x0c) {
                    Effect::Down
                } else {
                    Effect::Nothing
                };
                return Piece::new(1, Some(effect), matches!(first, b'\r' | b'\n'));
            }
        }
        for (i, &b) in bytes.iter().enumerate() {
            if let Some(ended) = self.step(b, i) {
                return ended;
            }
        }
        // What the parser may already have done of a piece not followed is not left for later.
        Piece::new(bytes.len(), self.unsure().then_some(Effect::All), false)
    }

    /// A control sequence the batch holds whole, with plain parameters only (no private marker,
    /// no intermediates, nothing out of place), read in one go: what a flood's colour changes and
    /// most of a TUI's sequences are. Anything else goes byte by byte through [`Self::step`],
    /// which ends in the same piece for these.
    fn whole_csi(&mut self, bytes: &[u8]) -> Option<Piece> {
        let params = bytes.strip_prefix(b"\x1b[")?;
        let n = params.iter().position(|b| !matches!(b, 0x30..=0x3b))?;
        let last = params[n];
        if !(0x40..=0x7e).contains(&last) || n > MAX_PARAMS {
            return None;
        }
        self.begin_sequence();
        self.params.extend_from_slice(&params[..n]);
        let effect = self.csi_effect(last);
        // The final byte is at index n + 2; with no marker and no intermediates, `m` is a colour.
        self.end_plain(n + 2, effect, last == b'm')
    }

    /// Forgets the last sequence's marker, parameters and intermediates as a new one begins.
    fn begin_sequence(&mut self) {
        self.marker = None;
        self.params.clear();
        self.inter.clear();
        self.odd = false;
    }

    /// Whether the parser may have changed the screen in the piece read so far: it carried out a
    /// control inside a sequence, or it is a string command, which the parser may end where this
    /// does not.
    fn unsure(&self) -> bool {
        self.odd || matches!(self.state, State::Osc | State::Str)
    }

    /// Follows all of `bytes`, looking at none of its pieces.
    pub fn skip(&mut self, bytes: &[u8]) {
        let mut at = 0;
        while at < bytes.len() {
            at += self.next(&bytes[at..]).len;
        }
    }

    /// Takes byte `b`, the `i`th of this call; `Some` when the piece ended with it (or before it).
    fn step(&mut self, b: u8, i: usize) -> Option<Piece> {
        let cut_short = |s: &mut Self| {
            // The escape starts the next piece; what it cut short changed nothing, if it is sure.
            let effect = if s.unsure() { Effect::All } else { Effect::Nothing };
            s.state = State::Ground;
            Some(Piece::new(i, Some(effect), false))
        };
        match self.state {
            State::Ground => {
                // Only an escape gets here (see `next`).
                self.begin_sequence();
                self.state = State::Escape;
                None
            }
            State::Osc | State::Str => match b {
                0x07 if self.state == State::Osc => self.end(i, Effect::All),
                CAN | SUB => self.end(i, Effect::All),
                ESC => cut_short(self),
                _ => None,
            },
            _ if b == ESC => cut_short(self),
            _ if b == CAN || b == SUB => self.end(i, Effect::Nothing),
            _ if !(0x20..0x80).contains(&b) => {
                // The parser carries out a control in the middle of a sequence: not followed.
                self.odd = true;
                None
            }
            State::Escape => match b {
                b'[' => {
                    self.state = State::Csi;
                    None
                }
                b']' => {
                    self.state = State::Osc;
                    None
                }
                b'P' | b'X' | b'^' | b'_' => {
                    self.state = State::Str;
                    None
                }
                0x20..=0x2f => {
                    self.keep_inter(b);
                    self.state = State::EscapeIntermediate;
                    None
                }
                0x7f => None,
                _ => {
                    let effect = self.escape_effect(b);
                    self.end(i, effect)
                }
            },
            State::EscapeIntermediate => match b {
                0x20..=0x2f => {
                    self.keep_inter(b);
                    None
                }
                0x7f => None,
                _ => {
                    let effect = self.escape_effect(b);
                    self.end(i, effect)
                }
            },
            State::Csi => match b {
                0x3c..=0x3f if self.marker.is_none() && self.params.is_empty() && self.inter.is_empty() => {
                    self.marker = Some(b);
                    None
                }
                0x30..=0x3b if self.inter.is_empty() => {
                    if self.params.len() < MAX_PARAMS {
                        self.params.push(b);
                    } else {
                        self.odd = true;
                    }
                    None
                }
                0x20..=0x2f => {
                    self.keep_inter(b);
                    None
                }
                0x40..=0x7e => {
                    let effect = self.csi_effect(b);
                    let colour = b == b'm' && self.marker.is_none() && self.inter.is_empty();
                    self.end_plain(i, effect, colour && self.began_here)
                }
                0x7f => None,
                // A marker or parameter out of place: the parser ignores the sequence, but
                // whether it does is not followed here.
                _ => {
                    self.odd = true;
                    None
                }
            },
        }
    }

    fn keep_inter(&mut self, b: u8) {
        if self.inter.len() < MAX_PARAMS {
            self.inter.push(b);
        } else {
            self.odd = true;
        }
    }

    /// The piece ends with byte `i`.
    fn end(&mut self, i: usize, effect: Effect) -> Option<Piece> {
        self.end_plain(i, effect, false)
    }

    fn end_plain(&mut self, i: usize, effect: Effect, plain: bool) -> Option<Piece> {
        self.state = State::Ground;
        let (effect, plain) = if self.odd {
            (Effect::All, false)
        } else {
            (effect, plain)
        };
        Some(Piece::new(i + 1, Some(effect), plain))
    }

    fn escape_effect(&self, last: u8) -> Effect {
        match (self.inter.as_slice(), last) {
            // Save and restore the cursor, keypad modes, the string terminator, a tab stop.
            ([], b'7' | b'8' | b'=' | b'>' | b'\\' | b'H') => Effect::Nothing,
            // Index and next line.
            ([], b'D' | b'E') => Effect::Down,
            // Reverse index.
            ([], b'M') => Effect::Up,
            // Character sets.
            ([b'(' | b')' | b'*' | b'+'], _) => Effect::Nothing,
            _ => Effect::All,
        }
    }

    fn csi_effect(&self, last: u8) -> Effect {
        if !self.inter.is_empty() {
            // The cursor's shape.
            return if self.inter == b" " && last == b'q' && self.marker.is_none() {
                Effect::Nothing
            } else {
                Effect::All
            };
        }
        match (self.marker, last) {
            // Cursor moves and position, colours, modes, the scroll region, saving the cursor,
            // reports and window queries.
            (
                None,
                b'A' | b'B' | b'C' | b'D' | b'E' | b'F' | b'G' | b'H' | b'f' | b'd' | b'e' | b'a' | b'`'
                | b'm' | b'h' | b'l' | b'r' | b's' | b'u' | b'n' | b'c' | b't',
            ) => Effect::Nothing,
            (None, b'K' | b'X' | b'P' | b'@') => Effect::Row,
            (None, b'J') => match self.params.as_slice() {
                b"" | b"0" => Effect::Below,
                b"1" => Effect::Above,
                _ => Effect::All,
            },
            (Some(b'?'), b'h' | b'l') => {
                // Switching to or from the alternate screen shows another grid; the width and
                // reverse-video modes change every cell's look.
                let screen_wide = self
                    .params
                    .split(|b| *b == b';')
                    .any(|p| matches!(p, b"3" | b"5" | b"47" | b"1047" | b"1049"));
                if screen_wide { Effect::All } else { Effect::Nothing }
            }
            (Some(b'?'), b'u' | b'n' | b'm') => Effect::Nothing,
            // Key reporting modes and terminal queries.
            (Some(b'>' | b'<' | b'='), b'm' | b'u' | b'c' | b'q' | b'n' | b't') => Effect::Nothing,
            _ => Effect::All,
        }
    }
}

/// The rows a piece changed, from what it may change (`effect`), its bytes, and the cursor (row,
/// column) before and after it on a screen of `rows` × `cols`; `None`: every row.
pub fn rows_changed(
    effect: Effect,
    piece: &[u8],
    before: (u16, u16),
    after: (u16, u16),
    rows: u16,
) -> Option<Range<u16>> {
    let ((r0, c0), (r1, c1)) = (before, after);
    let unless = |ok: bool, range: Range<u16>| ok.then_some(range);
    match effect {
        Effect::Nothing => Some(0..0),
        Effect::Text => {
            // Any wrap brings the cursor back to column 0, so it cannot end the text's width
            // further along the row it started on.
            let width = text_width(piece)?;
            unless(r1 == r0 && Some(c1) == c0.checked_add(width), r0..r0 + 1)
        }
        Effect::Row => unless(r1 == r0, r0..r0 + 1),
        Effect::Below => Some(r0..rows),
        Effect::Above => Some(0..r0.saturating_add(1)),
        Effect::Down => unless(Some(r1) == r0.checked_add(1), 0..0),
        Effect::Up => unless(r1.checked_add(1) == Some(r0), 0..0),
        Effect::All => None,
    }
}

/// How many cells vt100 moves the cursor for `text` when nothing wraps; `None` when that is not
/// known: not whole UTF-8, or a character that joins or widens the one before it.
fn text_width(text: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(text).ok()?;
    let mut width = 0u16;
    for c in text.chars() {
        match c.width() {
            // vt100 draws no control character.
            None if u32::from(c) < 256 => {}
            Some(0) => return None,
            w => {
                let w = u16::try_from(w.unwrap_or(1).min(2)).ok()?;
                width = width.checked_add(w)?;
            }
        }
    }
    Some(width)
}

#[cfg(test)]
mod tests;
