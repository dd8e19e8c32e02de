//! Helpers shared by the overlays drawn over the main layout: the one frame they all draw, and the
//! text layout inside it.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::style::Style;
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;
use ratatui_widgets::{block::Block, clear::Clear};
use unicode_width::UnicodeWidthStr;

use super::theme;

/// The box an overlay draws over the panes: centred, cleared, bordered and titled.
#[derive(Debug, Clone, Copy)]
pub struct OverlayFrame<'a> {
    title: &'a str,
    border: Style,
    title_style: Style,
    /// Blank columns inside each side border.
    padding: u16,
}

impl<'a> OverlayFrame<'a> {
    /// A grey frame with a bold title, for the light overlays: the help and the prompts.
    pub fn quiet(title: &'a str) -> Self {
        Self {
            title,
            border: theme::border(),
            title_style: theme::title(),
            padding: 0,
        }
    }

    /// A frame in the accent colour with one blank column inside each side, for the dialogs.
    pub fn accent(title: &'a str) -> Self {
        Self {
            title,
            border: theme::accent(),
            title_style: Style::new(),
            padding: 1,
        }
    }

    /// Draws a box `width` columns wide with room for `content_height` lines, centred in `area` and
    /// shrunk to fit it; returns where the content goes.
    pub fn draw(&self, area: Rect, width: u16, content_height: usize, buf: &mut Buffer) -> Rect {
        let height = u16::try_from(content_height.saturating_add(2)).unwrap_or(u16::MAX);
        let rect = centered(area, width, height);
        Clear.render(rect, buf);
        let block = Block::bordered()
            .border_style(self.border)
            .title(Span::styled(format!(" {} ", self.title), self.title_style));
        let inner = block.inner(rect);
        block.render(rect, buf);
        Rect {
            x: inner.x + self.padding,
            width: inner.width.saturating_sub(2 * self.padding),
            ..inner
        }
    }
}

/// Writes `lines` into `inner` from its top, one per row, each cut to its width; lines past the
/// bottom are left out.
pub fn fill(inner: Rect, lines: &[Line], buf: &mut Buffer) {
    for (y, line) in (inner.y..inner.bottom()).zip(lines) {
        buf.set_line(inner.x, y, line, inner.width);
    }
}

/// A `width` × `height` box centred in `area`, shrunk to fit.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Greedy word wrap by display width; a word longer than the width is cut.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let needed = if line.is_empty() {
            word.width()
        } else {
            line.width() + 1 + word.width()
        };
        if needed > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.width() > width {
            let cut = cut_at_width(&line, width);
            let rest = line.split_off(cut);
            lines.push(std::mem::replace(&mut line, rest));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` cut to `width` columns, ending with `…` when something was cut. Control characters are
/// written out first ([`crate::safe_text::escape`]): names and directories come from outside.
pub fn ellipsize(text: &str, width: usize) -> String {
    let escaped = crate::safe_text::escape(text);
    let text = escaped.as_str();
    if text.width() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut cut = text[..cut_at_width(text, width - 1)].to_string();
    // A wide character may not fit in the last column: cut stops before it.
    while cut.width() > width - 1 {
        cut.pop();
    }
    cut.push('…');
    cut
}

fn cut_at_width(text: &str, width: usize) -> usize {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            return i.max(c.len_utf8());
        }
        used += w;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centered_fits_and_centres() {
        let area = Rect::new(0, 0, 100, 40);
        assert_eq!(centered(area, 60, 20), Rect::new(20, 10, 60, 20));
        assert_eq!(centered(Rect::new(5, 5, 10, 4), 60, 20), Rect::new(5, 5, 10, 4));
    }

    fn row(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
    }

    #[test]
    fn the_frame_clears_its_box_borders_it_and_pads_the_content() {
        let area = Rect::new(0, 0, 12, 6);
        let mut buf = Buffer::filled(area, ratatui_core::buffer::Cell::new("x"));
        let inner = OverlayFrame::accent("t").draw(area, 8, 2, &mut buf);
        assert_eq!(inner, Rect::new(4, 2, 4, 2));
        fill(
            inner,
            &[Line::from("abcdefg"), Line::from("b"), Line::from("never")],
            &mut buf,
        );
        let rows: Vec<String> = (0..6).map(|y| row(&buf, y)).collect();
        assert_eq!(
            rows,
            [
                "xxxxxxxxxxxx",
                "xx┌ t ───┐xx",
                "xx│ abcd │xx",
                "xx│ b    │xx",
                "xx└──────┘xx",
                "xxxxxxxxxxxx"
            ]
        );
        assert_eq!(buf[(2, 1)].style().fg, theme::accent().fg);
    }

    #[test]
    fn the_quiet_frame_has_no_padding_and_a_grey_border() {
        let area = Rect::new(0, 0, 10, 4);
        let mut buf = Buffer::empty(area);
        let inner = OverlayFrame::quiet("k").draw(area, 10, 2, &mut buf);
        assert_eq!(inner, Rect::new(1, 1, 8, 2));
        assert_eq!(row(&buf, 0), "┌ k ─────┐");
        assert_eq!(buf[(0, 0)].style().fg, theme::border().fg);
        assert!(
            buf[(2, 0)]
                .style()
                .add_modifier
                .contains(ratatui_core::style::Modifier::BOLD)
        );
    }

    #[test]
    fn ellipsize_cuts_to_the_width_with_a_mark() {
        assert_eq!(ellipsize("short", 8), "short");
        assert_eq!(ellipsize("a longer name", 8), "a longe…");
        assert_eq!(ellipsize("日本語の名前", 5), "日本…");
        assert_eq!(ellipsize("abc", 0), "");
    }

    /// Issue 21, item 7: the side pane and the switcher show a session's name and directory through
    /// ellipsize: a directory named with escapes is written out, not sent to the terminal.
    #[test]
    fn ellipsize_writes_controls_out() {
        assert_eq!(ellipsize("/w/a\x1b[2J\x07", 40), r"/w/a\x1b[2J\x07");
        assert_eq!(ellipsize("/w/a\x1b[2Jbcdef", 9), r"/w/a\x1b…");
    }

    #[test]
    fn wrap_breaks_on_words_and_cuts_long_ones() {
        assert_eq!(wrap("one two three", 7), vec!["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert!(wrap("   ", 5).is_empty());
    }
}
