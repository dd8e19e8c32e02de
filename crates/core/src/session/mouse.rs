//! Mouse reports from the host (always SGR) re-encoded for the child, in pane coordinates.

use ratatui_core::layout::Rect;
use vt100::{MouseProtocolEncoding, MouseProtocolMode};

use crate::input::keys::SgrMouse;

/// The report for the child, or `None` when it asked for no mouse or the pointer is outside the pane.
pub fn translate(
    m: SgrMouse,
    pane: Rect,
    mode: MouseProtocolMode,
    encoding: MouseProtocolEncoding,
) -> Option<Vec<u8>> {
    if mode == MouseProtocolMode::None {
        return None;
    }
    let (col0, row0) = (m.col.checked_sub(1)?, m.row.checked_sub(1)?);
    if col0 < pane.x || row0 < pane.y || col0 >= pane.right() || row0 >= pane.bottom() {
        return None;
    }
    let col = col0 - pane.x + 1;
    let row = row0 - pane.y + 1;
    match encoding {
        MouseProtocolEncoding::Sgr => {
            let fin = if m.release { 'm' } else { 'M' };
            Some(format!("\x1b[<{};{col};{row}{fin}", m.button).into_bytes())
        }
        MouseProtocolEncoding::Default | MouseProtocolEncoding::Utf8 => {
            // The legacy encoding has no release button number: release is button 3.
            let button = if m.release { 3 | (m.button & !3) } else { m.button };
            let mut out = b"\x1b[M".to_vec();
            for v in [button + 32, u32::from(col) + 32, u32::from(row) + 32] {
                if encoding == MouseProtocolEncoding::Utf8 {
                    let c = char::from_u32(v)?;
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                } else {
                    out.push(u8::try_from(v).ok()?);
                }
            }
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PANE: Rect = Rect {
        x: 0,
        y: 0,
        width: 80,
        height: 23,
    };

    fn click(col: u16, row: u16) -> SgrMouse {
        SgrMouse {
            button: 0,
            col,
            row,
            release: false,
        }
    }

    #[test]
    fn sgr_inside_the_pane_is_unchanged() {
        let out = translate(
            click(10, 5),
            PANE,
            MouseProtocolMode::AnyMotion,
            MouseProtocolEncoding::Sgr,
        );
        assert_eq!(out.unwrap(), b"\x1b[<0;10;5M");
    }

    #[test]
    fn outside_the_pane_or_unwanted_is_dropped() {
        assert!(
            translate(
                click(81, 5),
                PANE,
                MouseProtocolMode::AnyMotion,
                MouseProtocolEncoding::Sgr
            )
            .is_none()
        );
        assert!(
            translate(
                click(10, 24),
                PANE,
                MouseProtocolMode::AnyMotion,
                MouseProtocolEncoding::Sgr
            )
            .is_none()
        );
        assert!(
            translate(
                click(10, 5),
                PANE,
                MouseProtocolMode::None,
                MouseProtocolEncoding::Sgr
            )
            .is_none()
        );
    }

    #[test]
    fn offset_pane_and_legacy_encoding() {
        let pane = Rect::new(2, 1, 40, 10);
        let out = translate(
            click(5, 4),
            pane,
            MouseProtocolMode::PressRelease,
            MouseProtocolEncoding::Default,
        );
        assert_eq!(out.unwrap(), vec![0x1b, b'[', b'M', 32, 32 + 3, 32 + 3]);
        let release = SgrMouse {
            release: true,
            ..click(5, 4)
        };
        let out = translate(
            release,
            pane,
            MouseProtocolMode::PressRelease,
            MouseProtocolEncoding::Default,
        );
        assert_eq!(out.unwrap()[3], 32 + 3);
    }
}
