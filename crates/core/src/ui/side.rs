//! The side pane: sections of live state, each a title and a few lines.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;
use ratatui_widgets::block::Block;
use ratatui_widgets::borders::Borders;
use ratatui_widgets::paragraph::{Paragraph, Wrap};

use super::theme;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    pub title: String,
    pub lines: Vec<Line<'static>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideView {
    pub sections: Vec<Section>,
}

impl Widget for &SideView {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::new().borders(Borders::LEFT).border_style(theme::border());
        let inner = block.inner(area);
        block.render(area, buf);
        let mut lines: Vec<Line> = Vec::new();
        for (i, s) in self.sections.iter().enumerate() {
            if i > 0 {
                lines.push(Line::default());
            }
            lines.push(Line::from(Span::styled(s.title.clone(), theme::title())));
            lines.extend(s.lines.iter().cloned());
        }
        let inner = Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        };
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }
}
