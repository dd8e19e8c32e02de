//! The layers drawn over the panes that take the keyboard while open.

use crate::ui::changes_view::ChangesView;
use crate::ui::prompt::LinePrompt;
use crate::ui::settings_dialog::SettingsDialog;
use crate::ui::status_overlay::StatusOverlay;
use crate::ui::switcher::Switcher;

pub enum Overlay {
    Help,
    Settings(Box<SettingsDialog>),
    Status(Box<StatusOverlay>),
    /// The handoff's optional focus line.
    Handoff(LinePrompt),
    /// Every session, to choose the one to show.
    Switcher(Box<Switcher>),
    /// The new session's directory.
    NewSession(LinePrompt),
    /// What the agent changed since the session started.
    Changes(Box<ChangesView>),
}

/// Which overlay is open, for tests and the event loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayKind {
    Help,
    Settings,
    Status,
    Handoff,
    Switcher,
    NewSession,
    Changes,
}

impl Overlay {
    pub fn kind(&self) -> OverlayKind {
        match self {
            Overlay::Help => OverlayKind::Help,
            Overlay::Settings(_) => OverlayKind::Settings,
            Overlay::Status(_) => OverlayKind::Status,
            Overlay::Handoff(_) => OverlayKind::Handoff,
            Overlay::Switcher(_) => OverlayKind::Switcher,
            Overlay::NewSession(_) => OverlayKind::NewSession,
            Overlay::Changes(_) => OverlayKind::Changes,
        }
    }
}
