//! One frame of the session as one client sees it: the pane, the side pane, the footer, and that
//! client's prefix state and overlay.

use ratatui::Frame;

use super::keyboards::ClientId;
use super::{Overlay, Session};
use crate::core::supervisor::{Now, View};
use crate::core::ui::footer::FooterView;
use crate::core::ui::help::HelpView;
use crate::core::ui::pane;
use crate::core::ui::side::Section;

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

    pub(super) fn draw_frame(
        &self,
        frame: &mut Frame,
        screen: &vt100::Screen,
        now: Now,
        extra: Option<Section>,
        viewer: Option<ClientId>,
    ) {
        let areas = self.areas();
        self.pane_cache
            .borrow_mut()
            .render(screen, areas.pane, frame.buffer_mut());
        let view = self.supervisor_view(now);
        if let Some(side) = areas.side {
            frame.render_widget(&self.side_from(&view, areas.pane, now, extra), side);
        }
        if let Some(footer) = areas.footer {
            frame.render_widget(&self.footer_from(&view, viewer), footer);
        }
        let overlay = viewer
            .and_then(|c| self.keys.get(c))
            .and_then(|kb| kb.overlay.as_ref());
        match overlay {
            Some(Overlay::Help) => {
                let prefix = self.keys.prefix().to_string();
                frame.render_widget(HelpView { prefix: &prefix }, frame.area());
            }
            Some(Overlay::Settings(d)) => frame.render_widget(d.as_ref(), frame.area()),
            Some(Overlay::Status(s)) => frame.render_widget(s.as_ref(), frame.area()),
            Some(Overlay::Handoff(p) | Overlay::NewSession(p)) => frame.render_widget(p, frame.area()),
            Some(Overlay::Switcher(s)) => frame.render_widget(s.as_ref(), frame.area()),
            None => {
                if let Some(pos) = pane::cursor(screen, areas.pane) {
                    frame.set_cursor_position(pos);
                }
            }
        }
    }
}
