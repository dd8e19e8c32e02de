//! Decodes one input token into a key event, for the prefix key and for pokeshell's own dialogs.
//!
//! Understands the legacy encodings, xterm's modifyOtherKeys (`CSI 27;m;k~`) and the kitty keyboard
//! protocol (`CSI code[:alt];mods[:event]u`), because the host sends whichever one pi asked for.

use crate::input::key::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Parameters of a CSI sequence, split into numeric sub-parameters (`1;5:3` → [[1],[5,3]]).
struct Csi<'a> {
    private: Option<u8>,
    params: Vec<Vec<u32>>,
    intermediate: &'a [u8],
    fin: u8,
}

fn parse_csi(bytes: &[u8]) -> Option<Csi<'_>> {
    let body = bytes.strip_prefix(b"\x1b[")?;
    let (&fin, body) = body.split_last()?;
    let (private, body) = match body.first() {
        Some(&c @ (b'<' | b'=' | b'>' | b'?')) => (Some(c), &body[1..]),
        _ => (None, body),
    };
    let split = body
        .iter()
        .position(|c| (0x20..=0x2f).contains(c))
        .unwrap_or(body.len());
    let (digits, intermediate) = body.split_at(split);
    let text = std::str::from_utf8(digits).ok()?;
    let mut params = Vec::new();
    if !text.is_empty() {
        for p in text.split(';') {
            let subs = p
                .split(':')
                .map(|s| if s.is_empty() { Ok(0) } else { s.parse::<u32>() })
                .collect::<Result<Vec<_>, _>>()
                .ok()?;
            params.push(subs);
        }
    }
    Some(Csi {
        private,
        params,
        intermediate,
        fin,
    })
}

fn param(p: &[Vec<u32>], i: usize, sub: usize) -> Option<u32> {
    p.get(i).and_then(|v| v.get(sub)).copied()
}

/// Modifier parameter as sent on the wire: 1 + bit set. Lock keys (caps, num) are ignored.
fn modifiers(wire: u32) -> KeyModifiers {
    let bits = wire.saturating_sub(1);
    let mut m = KeyModifiers::NONE;
    if bits & 1 != 0 {
        m |= KeyModifiers::SHIFT;
    }
    if bits & 2 != 0 {
        m |= KeyModifiers::ALT;
    }
    if bits & 4 != 0 {
        m |= KeyModifiers::CONTROL;
    }
    if bits & 8 != 0 {
        m |= KeyModifiers::SUPER;
    }
    if bits & 16 != 0 {
        m |= KeyModifiers::HYPER;
    }
    if bits & 32 != 0 {
        m |= KeyModifiers::META;
    }
    m
}

fn kind(event: Option<u32>) -> KeyEventKind {
    match event {
        Some(2) => KeyEventKind::Repeat,
        Some(3) => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    }
}

fn event(code: KeyCode, mods: KeyModifiers, kind: KeyEventKind) -> KeyEvent {
    KeyEvent {
        code,
        modifiers: mods,
        kind,
    }
}

/// A C0 byte or DEL as the key a user pressed.
fn control_byte(b: u8) -> (KeyCode, KeyModifiers) {
    match b {
        b'\r' => (KeyCode::Enter, KeyModifiers::NONE),
        b'\t' => (KeyCode::Tab, KeyModifiers::NONE),
        0x7f | 0x08 => (KeyCode::Backspace, KeyModifiers::NONE),
        0x1b => (KeyCode::Esc, KeyModifiers::NONE),
        0x00 => (KeyCode::Char(' '), KeyModifiers::CONTROL),
        0x01..=0x1a => (KeyCode::Char((b - 1 + b'a') as char), KeyModifiers::CONTROL),
        _ => (KeyCode::Char((b + 0x40) as char), KeyModifiers::CONTROL),
    }
}

/// The kitty protocol's key numbers for keys that are not characters.
fn kitty_code(n: u32) -> Option<KeyCode> {
    Some(match n {
        13 => KeyCode::Enter,
        9 => KeyCode::Tab,
        127 | 8 => KeyCode::Backspace,
        27 => KeyCode::Esc,
        57_348 => KeyCode::Insert,
        57_349 => KeyCode::Delete,
        57_350 => KeyCode::Left,
        57_351 => KeyCode::Right,
        57_352 => KeyCode::Up,
        57_353 => KeyCode::Down,
        57_354 => KeyCode::PageUp,
        57_355 => KeyCode::PageDown,
        57_356 => KeyCode::Home,
        57_357 => KeyCode::End,
        57_414 => KeyCode::Enter,
        _ => KeyCode::Char(char::from_u32(n)?),
    })
}

fn tilde_code(n: u32) -> Option<KeyCode> {
    Some(match n {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F((n - 10) as u8),
        17..=21 => KeyCode::F((n - 11) as u8),
        23 | 24 => KeyCode::F((n - 12) as u8),
        _ => return None,
    })
}

fn letter_code(c: u8) -> Option<KeyCode> {
    Some(match c {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        _ => return None,
    })
}

/// Decodes a whole token; `None` for anything that is not a key (mouse, focus, replies, garbage).
pub fn decode(bytes: &[u8]) -> Option<KeyEvent> {
    let press = KeyEventKind::Press;
    match bytes {
        [] => None,
        [b] if *b < 0x20 || *b == 0x7f => {
            let (code, mods) = control_byte(*b);
            Some(event(code, mods, press))
        }
        [0x1b, b'[', ..] => decode_csi(bytes),
        [0x1b, b'O', c] => letter_code(*c).map(|code| event(code, KeyModifiers::NONE, press)),
        // Alt is held once at most; refusing more also bounds the recursion below.
        [0x1b, 0x1b, 0x1b, ..] => None,
        [0x1b, rest @ ..] => {
            let mut inner = decode(rest)?;
            inner.modifiers |= KeyModifiers::ALT;
            Some(inner)
        }
        _ => {
            let s = std::str::from_utf8(bytes).ok()?;
            let mut chars = s.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            Some(event(KeyCode::Char(c), KeyModifiers::NONE, press))
        }
    }
}

fn decode_csi(bytes: &[u8]) -> Option<KeyEvent> {
    let csi = parse_csi(bytes)?;
    if csi.private.is_some() || !csi.intermediate.is_empty() {
        return None;
    }
    let p = &csi.params;
    let mods = modifiers(param(p, 1, 0).unwrap_or(1));
    let ev = kind(param(p, 1, 1));
    match csi.fin {
        b'u' => {
            let code = kitty_code(param(p, 0, 0)?)?;
            Some(event(code, mods, ev))
        }
        b'~' => {
            let first = param(p, 0, 0)?;
            if first == 27 {
                // modifyOtherKeys: CSI 27 ; mods ; code ~
                let code = kitty_code(param(p, 2, 0)?)?;
                return Some(event(code, mods, KeyEventKind::Press));
            }
            Some(event(tilde_code(first)?, mods, ev))
        }
        b'Z' => Some(event(KeyCode::BackTab, KeyModifiers::SHIFT, ev)),
        c => Some(event(letter_code(c)?, mods, ev)),
    }
}

/// An SGR mouse report (`CSI < b ; x ; y M|m`), coordinates 1-based as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SgrMouse {
    pub button: u32,
    pub col: u16,
    pub row: u16,
    pub release: bool,
}

pub fn decode_sgr_mouse(bytes: &[u8]) -> Option<SgrMouse> {
    let csi = parse_csi(bytes)?;
    if csi.private != Some(b'<') || !matches!(csi.fin, b'M' | b'm') {
        return None;
    }
    Some(SgrMouse {
        button: param(&csi.params, 0, 0)?,
        col: u16::try_from(param(&csi.params, 1, 0)?).ok()?,
        row: u16::try_from(param(&csi.params, 2, 0)?).ok()?,
        release: csi.fin == b'm',
    })
}

/// True for the host's focus-in / focus-out reports (`CSI I`, `CSI O`).
pub fn is_focus_report(bytes: &[u8]) -> bool {
    bytes == b"\x1b[I" || bytes == b"\x1b[O"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode, mods: KeyModifiers) -> Option<KeyEvent> {
        Some(event(code, mods, KeyEventKind::Press))
    }

    #[test]
    fn legacy_bytes() {
        assert_eq!(decode(b"a"), k(KeyCode::Char('a'), KeyModifiers::NONE));
        assert_eq!(decode(b"\r"), k(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(decode(b"\x7f"), k(KeyCode::Backspace, KeyModifiers::NONE));
        assert_eq!(decode(b"\x1b"), k(KeyCode::Esc, KeyModifiers::NONE));
        assert_eq!(decode(b"\x1d"), k(KeyCode::Char(']'), KeyModifiers::CONTROL));
        assert_eq!(decode(b"\x02"), k(KeyCode::Char('b'), KeyModifiers::CONTROL));
        assert_eq!(decode(b"\x1bx"), k(KeyCode::Char('x'), KeyModifiers::ALT));
        assert_eq!(decode("é".as_bytes()), k(KeyCode::Char('é'), KeyModifiers::NONE));
    }

    #[test]
    fn cursor_keys_in_both_modes() {
        assert_eq!(decode(b"\x1b[A"), k(KeyCode::Up, KeyModifiers::NONE));
        assert_eq!(decode(b"\x1bOB"), k(KeyCode::Down, KeyModifiers::NONE));
        assert_eq!(decode(b"\x1b[1;5C"), k(KeyCode::Right, KeyModifiers::CONTROL));
        assert_eq!(decode(b"\x1b[5~"), k(KeyCode::PageUp, KeyModifiers::NONE));
    }

    #[test]
    fn kitty_press_repeat_release_and_alternates() {
        assert_eq!(
            decode(b"\x1b[93;5u"),
            k(KeyCode::Char(']'), KeyModifiers::CONTROL)
        );
        assert_eq!(
            decode(b"\x1b[93;5:1u"),
            k(KeyCode::Char(']'), KeyModifiers::CONTROL)
        );
        let rel = decode(b"\x1b[93;5:3u").unwrap();
        assert_eq!(rel.kind, KeyEventKind::Release);
        let alt = decode(b"\x1b[93:125;5u").unwrap();
        assert_eq!(alt.code, KeyCode::Char(']'));
        // Caps lock (64) must not change the key.
        assert_eq!(
            decode(b"\x1b[93;69u"),
            k(KeyCode::Char(']'), KeyModifiers::CONTROL)
        );
        assert_eq!(decode(b"\x1b[13;2u"), k(KeyCode::Enter, KeyModifiers::SHIFT));
        assert_eq!(decode(b"\x1b[27u"), k(KeyCode::Esc, KeyModifiers::NONE));
    }

    #[test]
    fn modify_other_keys() {
        assert_eq!(
            decode(b"\x1b[27;5;93~"),
            k(KeyCode::Char(']'), KeyModifiers::CONTROL)
        );
    }

    #[test]
    fn non_keys_are_none() {
        assert_eq!(decode(b"\x1b[<0;10;5M"), None);
        assert_eq!(decode(b"\x1b[?1;2c"), None);
        assert_eq!(decode(b"ab"), None);
    }

    #[test]
    fn sgr_mouse() {
        assert_eq!(
            decode_sgr_mouse(b"\x1b[<0;10;5M"),
            Some(SgrMouse {
                button: 0,
                col: 10,
                row: 5,
                release: false
            })
        );
        assert!(decode_sgr_mouse(b"\x1b[<0;10;5m").unwrap().release);
        assert_eq!(decode_sgr_mouse(b"\x1b[A"), None);
    }
}
