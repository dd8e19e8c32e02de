//! Where the pane, the side pane and the footer go, and the user's choice of side pane.

use crate::config::{DisplaySettings, SidePaneMode};
use crate::ui::layout::{self, Areas, SideMode};

fn side_mode(m: SidePaneMode) -> SideMode {
    match m {
        SidePaneMode::Auto => SideMode::Auto,
        SidePaneMode::Shown => SideMode::Shown,
        SidePaneMode::Hidden => SideMode::Hidden,
    }
}

#[derive(Debug)]
pub struct Layout {
    /// Host terminal size, columns × rows.
    size: (u16, u16),
    side_width: u16,
    side_mode: SideMode,
    /// The side pane setting last applied, to tell a changed setting from a re-read of the same one.
    side_setting: SideMode,
    /// The pane size the PTY and the mirror were last given.
    pane_told: (u16, u16),
}

impl Layout {
    pub fn new(cols: u16, rows: u16, display: &DisplaySettings) -> Self {
        let mode = side_mode(display.side_pane);
        let mut l = Self {
            size: (cols, rows),
            side_width: display.side_pane_width,
            side_mode: mode,
            side_setting: mode,
            pane_told: (0, 0),
        };
        let pane = l.areas().pane;
        l.pane_told = (pane.width, pane.height);
        l
    }

    pub fn areas(&self) -> Areas {
        layout::areas(self.size.0, self.size.1, self.side_mode, self.side_width)
    }

    pub fn side_width(&self) -> u16 {
        self.side_width
    }

    pub fn set_size(&mut self, cols: u16, rows: u16) {
        self.size = (cols, rows);
    }

    /// prefix+s: show or hide the side pane for this run.
    pub fn toggle_side(&mut self) {
        let visible = self.areas().side.is_some();
        self.side_mode = self.side_mode.toggled(visible);
    }

    /// Takes display settings that may have changed. Only a changed setting overrides what the user
    /// chose with prefix+s during this run.
    pub fn apply(&mut self, display: &DisplaySettings) {
        self.side_width = display.side_pane_width;
        let configured = side_mode(display.side_pane);
        if configured != self.side_setting {
            self.side_setting = configured;
            self.side_mode = configured;
        }
    }

    /// The pane's new size (columns, rows) when it differs from what the PTY was last given.
    pub fn take_pane_change(&mut self) -> Option<(u16, u16)> {
        let pane = self.areas().pane;
        let now = (pane.width, pane.height);
        (now != self.pane_told).then(|| {
            self.pane_told = now;
            now
        })
    }
}
