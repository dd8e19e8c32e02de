//! One frame of the session as one client sees it: the pane, the side pane, the footer, and that
//! client's prefix state and overlay.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::{Position, Rect};
use ratatui_core::widgets::Widget;
use ratatui_widgets::clear::Clear;

use super::keyboards::ClientId;
use super::{Overlay, Session};
use crate::supervisor::{Now, View};
use crate::ui::footer::FooterView;
use crate::ui::help::HelpView;
use crate::ui::layout::Areas;
use crate::ui::pane;
use crate::ui::pane::{PaneDrawn, PaneScreen};
use crate::ui::side::Section;
use crate::ui::side::SideView;

impl Session {
    /// The footer as `viewer` sees it (its prefix armed or not); `None`: as a client that typed
    /// nothing sees it.
    pub fn footer_view(&self, now: Now, viewer: Option<ClientId>) -> FooterView {
        self.footer_from(&self.supervisor_view(now), viewer)
    }

    fn footer_from(&self, view: &View, viewer: Option<ClientId>) -> FooterView {
        let armed = viewer.is_some_and(|c| self.keys.is_armed(c));
        let mut footer = FooterView::new(&view.footer, self.flash.current(), armed, self.keys.prefix());
        if footer.suffix.is_none() {
            // Without the bridge, pi's own status report is the only word on its state.
            footer.suffix = self.reported_suffix();
        }
        footer
    }

    /// Draws the screen as `viewer` sees it into `buf`: `screen` in the pane, the side pane (with
    /// `extra` on top, if given), the footer, and the viewer's prefix state and overlay (`None`: no
    /// client's). `buf` holds what `drawn` says was drawn into it last: only what changed since is
    /// drawn again (a key's echo draws one row of the pane).
    pub fn draw(
        &self,
        buf: &mut Buffer,
        drawn: &mut Drawn,
        screen: PaneScreen<'_>,
        now: Now,
        extra: Option<Section>,
        viewer: Option<ClientId>,
    ) -> Painted {
        let areas = self.areas();
        let overlay = viewer
            .and_then(|c| self.keys.get(c))
            .and_then(|kb| kb.overlay.as_ref());
        let whole = buf.area;
        let mut rows = vec![false; usize::from(whole.height)];
        let mut mark = |area: Rect| {
            for y in area.top().max(whole.top())..area.bottom().min(whole.bottom()) {
                rows[usize::from(y - whole.y)] = true;
            }
        };
        // An overlay covers everything, and leaves nothing drawn that a frame could keep.
        if overlay.is_some() || drawn.overlay || drawn.at != Some((buf.area, areas)) {
            buf.reset();
            *drawn = Drawn {
                at: Some((buf.area, areas)),
                ..Drawn::default()
            };
            mark(whole);
        }
        let pane_rows = self
            .pane_cache
            .borrow_mut()
            .draw(screen, areas.pane, buf, &mut drawn.pane);
        for y in pane_rows {
            mark(Rect::new(0, y, 1, 1));
        }
        let view = self.supervisor_view(now);
        if let Some(side) = areas.side {
            let v = self.side_from(&view, areas.pane, now, extra);
            if drawn.side.as_ref() != Some(&v) {
                // The side pane's earlier text may be longer than this one's.
                Clear.render(side, buf);
                (&v).render(side, buf);
                mark(side);
                drawn.side = Some(v);
            }
        }
        if let Some(footer) = areas.footer {
            let v = self.footer_from(&view, viewer);
            if drawn.footer.as_ref() != Some(&v) {
                Clear.render(footer, buf);
                (&v).render(footer, buf);
                mark(footer);
                drawn.footer = Some(v);
            }
        }
        drawn.overlay = overlay.is_some();
        let mut cursor = None;
        match overlay {
            Some(Overlay::Help) => {
                let prefix = self.keys.prefix().to_string();
                HelpView { prefix: &prefix }.render(whole, buf);
            }
            Some(Overlay::Settings(d)) => d.as_ref().render(whole, buf),
            Some(Overlay::Status(s)) => s.as_ref().render(whole, buf),
            Some(Overlay::Handoff(p) | Overlay::NewSession(p)) => p.render(whole, buf),
            Some(Overlay::Switcher(s)) => s.as_ref().render(whole, buf),
            Some(Overlay::Changes(c)) => c.as_ref().render(whole, buf),
            None => cursor = pane::cursor(screen.screen, areas.pane),
        }
        Painted { rows, cursor }
    }

    /// Draws the whole screen into `frame`, as [`Session::draw`] does into a buffer that holds
    /// nothing yet.
    pub fn draw_whole(
        &self,
        frame: &mut ratatui_core::terminal::Frame,
        screen: &vt100::Screen,
        now: Now,
        extra: Option<Section>,
        viewer: Option<ClientId>,
    ) {
        let buf = frame.buffer_mut();
        let painted = self.draw(buf, &mut Drawn::default(), screen.into(), now, extra, viewer);
        if let Some(at) = painted.cursor {
            frame.set_cursor_position(at);
        }
    }
}

/// What a buffer holds of the frames drawn into it, for the next frame into the same buffer to draw
/// only what changed. A new one (`Drawn::default()`) knows of nothing: the frame is drawn whole.
#[derive(Debug, Clone, Default)]
pub struct Drawn {
    /// The buffer's area and the layout then.
    at: Option<(Rect, Areas)>,
    pane: PaneDrawn,
    side: Option<SideView>,
    footer: Option<FooterView>,
    overlay: bool,
}

/// What drawing a frame did: the rows it drew (by their index in the buffer), which are the only
/// ones that can differ from the frame before, and where the cursor is shown, if anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Painted {
    pub rows: Vec<bool>,
    pub cursor: Option<Position>,
}
