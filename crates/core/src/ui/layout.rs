//! Where the pi pane, the side pane and the footer go on the host terminal.

use ratatui_core::layout::Rect;

/// Width of the side pane, its separating border included.
pub const SIDE_WIDTH: u16 = 32;
/// Below this many host columns the side pane hides itself unless asked for.
pub const AUTO_HIDE_BELOW: u16 = 100;
/// The pi pane never gets narrower than this to make room for the side pane.
const MIN_PANE_WIDTH: u16 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SideMode {
    /// Shown when the terminal is wide enough.
    #[default]
    Auto,
    Shown,
    Hidden,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub pane: Rect,
    pub side: Option<Rect>,
    pub footer: Option<Rect>,
}

impl SideMode {
    /// What prefix+s does: flip whatever is on screen now.
    pub fn toggled(self, visible_now: bool) -> Self {
        if visible_now {
            SideMode::Hidden
        } else {
            SideMode::Shown
        }
    }
}

pub fn areas(width: u16, height: u16, mode: SideMode, side_width: u16) -> Areas {
    let footer_h = u16::from(height >= 2);
    let body_h = height - footer_h;
    let fits = width >= side_width.saturating_add(MIN_PANE_WIDTH);
    let show = fits
        && match mode {
            SideMode::Auto => width >= AUTO_HIDE_BELOW,
            SideMode::Shown => true,
            SideMode::Hidden => false,
        };
    let side_w = if show { side_width } else { 0 };
    let pane = Rect::new(0, 0, width - side_w, body_h);
    let side = show.then(|| Rect::new(width - side_w, 0, side_w, body_h));
    let footer = (footer_h == 1).then(|| Rect::new(0, body_h, width, 1));
    Areas { pane, side, footer }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_terminal_shows_the_side_pane() {
        let a = areas(120, 40, SideMode::Auto, SIDE_WIDTH);
        assert_eq!(a.pane, Rect::new(0, 0, 88, 39));
        assert_eq!(a.side, Some(Rect::new(88, 0, 32, 39)));
        assert_eq!(a.footer, Some(Rect::new(0, 39, 120, 1)));
    }

    #[test]
    fn narrow_terminal_hides_it_automatically() {
        let a = areas(99, 30, SideMode::Auto, SIDE_WIDTH);
        assert_eq!(a.pane, Rect::new(0, 0, 99, 29));
        assert_eq!(a.side, None);
    }

    #[test]
    fn toggling_shows_it_on_a_narrow_terminal_and_hides_it_on_a_wide_one() {
        let narrow = areas(80, 24, SideMode::Auto.toggled(false), SIDE_WIDTH);
        assert_eq!(narrow.side.map(|r| r.width), Some(32));
        assert_eq!(narrow.pane.width, 48);
        let wide = areas(120, 24, SideMode::Auto.toggled(true), SIDE_WIDTH);
        assert_eq!(wide.side, None);
        assert_eq!(wide.pane.width, 120);
    }

    #[test]
    fn tiny_terminals_keep_a_usable_pane() {
        let a = areas(40, 1, SideMode::Shown, SIDE_WIDTH);
        assert_eq!(a.side, None);
        assert_eq!(a.footer, None);
        assert_eq!(a.pane, Rect::new(0, 0, 40, 1));
    }
}
