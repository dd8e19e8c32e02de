//! The help overlay: every key pokeshell adds on top of pi.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::overlay::{OverlayFrame, fill};
use super::theme;

/// The key after the prefix and what it does; docs/keys.md lists the same.
pub const KEYS: &[(&str, &str)] = &[
    ("s", "show or hide the side pane"),
    ("p", "poke: ask the agent to pick up its work"),
    ("h", "handoff: compact now with a handoff document"),
    ("c", "settings"),
    ("i", "status: effective settings and live state"),
    ("?", "this help"),
    ("prefix", "send the prefix key itself to pi"),
    ("Esc", "cancel"),
];

pub struct HelpView<'a> {
    pub prefix: &'a str,
}

impl Widget for HelpView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let mut lines = vec![
            Line::from(vec![
                Span::raw("Press "),
                Span::styled(self.prefix.to_string(), theme::key()),
                Span::raw(", then:"),
            ]),
            Line::default(),
        ];
        for (k, what) in KEYS {
            let k = if *k == "prefix" { self.prefix } else { k };
            lines.push(Line::from(vec![
                Span::styled(format!("  {k:<8}"), theme::key()),
                Span::raw(*what),
            ]));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "Every other key goes to pi unchanged. Any key closes this help.",
            theme::dim(),
        )));
        let w = lines.iter().map(Line::width).max().unwrap_or(0) as u16 + 4;
        let inner = OverlayFrame::quiet("pokeshell keys").draw(area, w, lines.len(), buf);
        fill(inner, &lines, buf);
    }
}
