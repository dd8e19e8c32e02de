//! The sessions pokeshell holds and which one the terminal shows. Today there is one; the event
//! loop talks to the workspace, so more can come without the loop changing.

use ratatui_core::buffer::Buffer;

use crate::session::{Drawn, Effect, Input, Painted, Session};
use crate::supervisor::Now;
use crate::ui::pane::PaneScreen;
use crate::ui::side::Section;

pub struct Workspace {
    sessions: Vec<Session>,
    shown: usize,
}

impl Workspace {
    pub fn new(first: Session) -> Self {
        Self {
            sessions: vec![first],
            shown: 0,
        }
    }

    /// The session the terminal shows.
    pub fn shown(&self) -> &Session {
        &self.sessions[self.shown]
    }

    /// Every input goes to the shown session: there is one session, and the terminal is its own.
    pub fn handle(&mut self, input: Input, now: Now) -> Vec<Effect> {
        self.sessions[self.shown].handle(input, now)
    }

    /// The earliest time any session needs a tick (mono ms).
    pub fn next_deadline(&self, now: Now) -> Option<u64> {
        self.sessions.iter().filter_map(|s| s.next_deadline(now)).min()
    }

    /// Draws the shown session as `viewer` sees it into `buf`, which holds what `drawn` says.
    pub fn draw(
        &self,
        buf: &mut Buffer,
        drawn: &mut Drawn,
        screen: PaneScreen<'_>,
        now: Now,
        extra: Option<Section>,
        viewer: Option<crate::session::ClientId>,
    ) -> Painted {
        self.shown().draw(buf, drawn, screen, now, extra, viewer)
    }
}
