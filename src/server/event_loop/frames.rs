//! Drawing the session's frame: when the next one is due (at most about 60 a second, sooner while a
//! typed key's echo is awaited) and the frame itself, one shared and one per client with a view of
//! its own.

use anyhow::Result;
use tokio::time::Instant;

use super::{Bridge, Child, ECHO_GAP, ECHO_WINDOW, FRAME, Layer, Loop, Screen, lock};
use pokeshell_core::ui::pane::PaneScreen;

impl<S: Screen, C: Child, B: Bridge, L: Layer> Loop<S, C, B, L> {
    /// When the next frame may be drawn, if one is needed.
    pub(super) fn draw_due(&self, now: Instant) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        let echoing = self
            .typed_at
            .is_some_and(|t| now.saturating_duration_since(t) <= ECHO_WINDOW);
        let earliest = self.last_draw + if echoing { ECHO_GAP } else { FRAME };
        let sync = lock(&self.mirror)
            .sync_deadline()
            .map(Instant::from_std)
            .filter(|d| *d > now);
        Some(sync.map_or(earliest, |s| s.max(earliest)))
    }

    pub fn draw(&mut self, now: Instant) -> Result<()> {
        self.dirty = false;
        self.last_draw = now;
        let at = self.clock.now(now);
        let extra = self.layer.section();
        let workspace = &self.workspace;
        let mirror = &self.mirror;
        // Clients with an overlay or an armed prefix see a frame of their own; the rest share one.
        let own = workspace.shown().own_views();
        let style = self.screen.frame(&own, |buf, drawn, viewer| {
            // The lock is held only while the frame is built, not while it is written out.
            let m = lock(mirror);
            let screen = PaneScreen {
                screen: m.screen(),
                changes: Some(m.changes()),
            };
            let painted = workspace.draw(buf, drawn, screen, at, extra.clone(), viewer);
            (painted, m.screen().cursor_style())
        })?;
        if self.cursor != Some(style) {
            self.cursor = Some(style);
            self.screen.cursor_style(style)?;
        }
        Ok(())
    }
}
