//! One frame of the session: the pane, the side pane, the footer and any overlay.

use ratatui::Frame;

use super::{Overlay, Session};
use crate::supervisor::{FooterSuffix, Now, View};
use crate::ui::footer::FooterView;
use crate::ui::help::HelpView;
use crate::ui::pane::{self, PaneView};
use crate::ui::side::Section;
use crate::ui::theme::Tone;

impl Session {
    pub fn footer_view(&self, now: Now) -> FooterView {
        self.footer_from(&self.supervisor_view(now))
    }

    fn footer_from(&self, view: &View) -> FooterView {
        let footer = &view.footer;
        let suffix = footer.suffix.as_ref().map(|s| {
            let tone = match s {
                FooterSuffix::Running { .. } => Tone::Dim,
                FooterSuffix::Overdue { .. } | FooterSuffix::PostCompact => Tone::Warn,
                FooterSuffix::Resume => Tone::Accent,
            };
            // The suffix is the footer text after the base, exactly as the supervisor words it.
            let text = footer.text();
            let base_len = if footer.enabled {
                "📌 p:on ".len()
            } else {
                "📌 p:off ".len()
            };
            (text.get(base_len..).unwrap_or_default().to_string(), tone)
        });
        FooterView {
            poke_on: footer.enabled,
            suffix,
            message: self.flash.current(),
            armed: self.keys.is_armed(),
            prefix: self.keys.prefix().to_string(),
        }
    }

    pub(super) fn draw_frame(
        &self,
        frame: &mut Frame,
        screen: &vt100::Screen,
        now: Now,
        extra: Option<Section>,
    ) {
        let areas = self.areas();
        frame.render_widget(PaneView { screen }, areas.pane);
        let view = self.supervisor_view(now);
        if let Some(side) = areas.side {
            frame.render_widget(&self.side_from(&view, areas.pane, now, extra), side);
        }
        if let Some(footer) = areas.footer {
            frame.render_widget(&self.footer_from(&view), footer);
        }
        match &self.overlay {
            Some(Overlay::Help) => {
                let prefix = self.keys.prefix().to_string();
                frame.render_widget(HelpView { prefix: &prefix }, frame.area());
            }
            Some(Overlay::Settings(d)) => frame.render_widget(d.as_ref(), frame.area()),
            Some(Overlay::Status(s)) => frame.render_widget(s.as_ref(), frame.area()),
            Some(Overlay::Handoff(p)) => frame.render_widget(p, frame.area()),
            None => {
                if let Some(pos) = pane::cursor(screen, areas.pane) {
                    frame.set_cursor_position(pos);
                }
            }
        }
    }
}
