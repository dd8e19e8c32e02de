//! The help overlay: every command pokeshell adds on top of pi, as the command list declares them.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;

use super::commands::COMMANDS;
use super::overlay::{OverlayFrame, fill};
use super::theme;

/// What the help lists, for checking it: the key after the prefix and what it does, with `prefix`
/// standing for the prefix key; the command list's keys and summaries, in its order.
pub const KEYS: &[(&str, &str)] = &{
    let mut rows = [("", ""); COMMANDS.len()];
    let mut i = 0;
    while i < COMMANDS.len() {
        rows[i] = (COMMANDS[i].help_key(), COMMANDS[i].summary);
        i += 1;
    }
    rows
};

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
        for command in &COMMANDS {
            let key = command.key_label(self.prefix);
            lines.push(Line::from(vec![
                Span::styled(format!("  {key:<8}"), theme::key()),
                Span::raw(command.summary),
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
