//! The input modes set on the host terminal, derived from what the child asked for.
//!
//! pokeshell forwards key bytes unchanged, so the host must encode keys the way pi asked: its kitty
//! flags, modifyOtherKeys level and cursor-key mode are copied onto the host. Mouse reporting is
//! copied too, always in SGR encoding, and translated for the child on the way in.

use vt100::MouseProtocolMode;

use crate::screen::ChildModes;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostModes {
    /// `None` until pokeshell has pushed its own entry on a kitty-capable host's flag stack.
    pub kitty_flags: Option<u16>,
    pub modify_other_keys: u16,
    pub mouse: MouseProtocolMode,
    pub focus_reports: bool,
    pub application_cursor: bool,
}

impl Default for HostModes {
    fn default() -> Self {
        Self {
            kitty_flags: None,
            modify_other_keys: 0,
            mouse: MouseProtocolMode::None,
            focus_reports: false,
            application_cursor: false,
        }
    }
}

fn mouse_code(m: MouseProtocolMode) -> Option<u16> {
    match m {
        MouseProtocolMode::None => None,
        MouseProtocolMode::Press => Some(9),
        MouseProtocolMode::PressRelease => Some(1000),
        MouseProtocolMode::ButtonMotion => Some(1002),
        MouseProtocolMode::AnyMotion => Some(1003),
    }
}

impl HostModes {
    pub fn for_child(child: &ChildModes, host_kitty: bool) -> Self {
        Self {
            // The probe may answer after the session started: the mirror then knows better.
            kitty_flags: (host_kitty || child.host_kitty).then_some(child.kitty_flags),
            modify_other_keys: child.modify_other_keys,
            mouse: child.mouse,
            focus_reports: child.focus_reports,
            application_cursor: child.application_cursor,
        }
    }

    /// Whether key releases arrive from the host (kitty flag 2, "report event types").
    pub fn reports_releases(&self) -> bool {
        self.kitty_flags.is_some_and(|f| f & 2 != 0)
    }

    /// The bytes that move the host from `self` to `to`.
    pub fn transition(&self, to: &Self) -> Vec<u8> {
        let mut s = String::new();
        match (self.kitty_flags, to.kitty_flags) {
            (None, Some(f)) => s.push_str(&format!("\x1b[>{f}u")),
            (Some(a), Some(b)) if a != b => s.push_str(&format!("\x1b[={b};1u")),
            _ => {}
        }
        if self.modify_other_keys != to.modify_other_keys {
            s.push_str(&format!("\x1b[>4;{}m", to.modify_other_keys));
        }
        if self.mouse != to.mouse {
            if let Some(code) = mouse_code(self.mouse) {
                s.push_str(&format!("\x1b[?{code}l"));
            }
            match mouse_code(to.mouse) {
                Some(code) => s.push_str(&format!("\x1b[?{code}h\x1b[?1006h")),
                None => s.push_str("\x1b[?1006l"),
            }
        }
        if self.focus_reports != to.focus_reports {
            s.push_str(if to.focus_reports {
                "\x1b[?1004h"
            } else {
                "\x1b[?1004l"
            });
        }
        if self.application_cursor != to.application_cursor {
            s.push_str(if to.application_cursor {
                "\x1b[?1h"
            } else {
                "\x1b[?1l"
            });
        }
        s.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_transition_pushes_a_kitty_entry_then_assigns() {
        let start = HostModes::default();
        let child = ChildModes {
            kitty_flags: 7,
            ..ChildModes::default()
        };
        let want = HostModes::for_child(&child, true);
        assert_eq!(start.transition(&want), b"\x1b[>7u");
        let later = HostModes::for_child(&ChildModes::default(), true);
        assert_eq!(want.transition(&later), b"\x1b[=0;1u");
        assert!(want.reports_releases());
        assert!(!later.reports_releases());
    }

    #[test]
    fn legacy_host_never_gets_kitty_sequences() {
        let child = ChildModes {
            kitty_flags: 7,
            modify_other_keys: 2,
            ..ChildModes::default()
        };
        let want = HostModes::for_child(&child, false);
        assert_eq!(HostModes::default().transition(&want), b"\x1b[>4;2m");
        assert!(!want.reports_releases());
    }

    #[test]
    fn mouse_is_switched_with_sgr_encoding() {
        let child = ChildModes {
            mouse: MouseProtocolMode::AnyMotion,
            ..ChildModes::default()
        };
        let want = HostModes::for_child(&child, false);
        assert_eq!(HostModes::default().transition(&want), b"\x1b[?1003h\x1b[?1006h");
        assert_eq!(want.transition(&HostModes::default()), b"\x1b[?1003l\x1b[?1006l");
    }

    #[test]
    fn unchanged_modes_write_nothing() {
        let m = HostModes::default();
        assert!(m.transition(&m).is_empty());
    }
}
