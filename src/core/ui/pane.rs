//! Draws the mirrored child screen into the pane.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

pub struct PaneView<'a> {
    pub screen: &'a vt100::Screen,
}

fn colour(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

pub fn cell_style(cell: &vt100::Cell) -> Style {
    let mut m = Modifier::empty();
    if cell.bold() {
        m |= Modifier::BOLD;
    }
    if cell.dim() {
        m |= Modifier::DIM;
    }
    if cell.italic() {
        m |= Modifier::ITALIC;
    }
    if cell.underline() {
        m |= Modifier::UNDERLINED;
    }
    if cell.inverse() {
        m |= Modifier::REVERSED;
    }
    Style::new()
        .fg(colour(cell.fgcolor()))
        .bg(colour(cell.bgcolor()))
        .add_modifier(m)
}

impl Widget for PaneView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (rows, cols) = self.screen.size();
        let rows = rows.get().min(area.height);
        let cols = cols.get().min(area.width);
        for row in 0..rows {
            for col in 0..cols {
                let Some(cell) = self.screen.cell(row, col) else {
                    continue;
                };
                let Some(out) = buf.cell_mut(Position::new(area.x + col, area.y + row)) else {
                    continue;
                };
                if cell.is_wide_continuation() {
                    // The wide character to the left covers this cell; ratatui skips it when diffing.
                    out.reset();
                    continue;
                }
                // A wide character that would be cut by the pane's edge is shown as a blank.
                let contents = cell.contents();
                let cut_off = cell.is_wide() && col + 1 >= cols;
                let symbol = if contents.is_empty() || cut_off {
                    " "
                } else {
                    contents
                };
                // `set_style` adds modifiers to what the cell holds; the child's cell replaces it whole.
                out.reset();
                out.set_symbol(symbol);
                out.set_style(cell_style(cell));
            }
        }
    }
}

/// Where the child's cursor is, in host coordinates, when it should be shown.
pub fn cursor(screen: &vt100::Screen, area: Rect) -> Option<Position> {
    if screen.hide_cursor() {
        return None;
    }
    let (row, col) = screen.cursor_position();
    (row < area.height && col < area.width).then(|| Position::new(area.x + col, area.y + row))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(bytes: &[u8], w: u16, h: u16) -> Buffer {
        let mut p = vt100::Parser::new(
            std::num::NonZeroU16::new(h).unwrap(),
            std::num::NonZeroU16::new(w).unwrap(),
            0,
        );
        p.process(bytes);
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        PaneView { screen: p.screen() }.render(area, &mut buf);
        buf
    }

    #[test]
    fn colours_and_attributes_survive() {
        let buf = render(b"\x1b[1;31mR\x1b[0;2;38;5;200mD\x1b[0;3;4;7;48;2;1;2;3mX", 5, 1);
        let r = &buf[(0, 0)];
        assert_eq!(r.symbol(), "R");
        assert_eq!(r.fg, Color::Indexed(1));
        assert!(r.modifier.contains(Modifier::BOLD));
        let d = &buf[(1, 0)];
        assert_eq!(d.fg, Color::Indexed(200));
        assert!(d.modifier.contains(Modifier::DIM));
        let x = &buf[(2, 0)];
        assert_eq!(x.bg, Color::Rgb(1, 2, 3));
        assert!(
            x.modifier
                .contains(Modifier::ITALIC | Modifier::UNDERLINED | Modifier::REVERSED)
        );
    }

    #[test]
    fn nothing_of_what_the_buffer_held_stays_on_the_childs_cells() {
        let mut p = vt100::Parser::new(
            std::num::NonZeroU16::new(1).unwrap(),
            std::num::NonZeroU16::new(3).unwrap(),
            0,
        );
        p.process(b"a\x1b[1mb\x1b[0mc");
        let area = Rect::new(0, 0, 3, 1);
        let mut buf = Buffer::empty(area);
        buf.set_style(
            area,
            Style::new()
                .fg(Color::Red)
                .add_modifier(Modifier::DIM | Modifier::ITALIC),
        );
        PaneView { screen: p.screen() }.render(area, &mut buf);
        assert_eq!(buf[(0, 0)].modifier, Modifier::empty());
        assert_eq!(buf[(0, 0)].fg, Color::Reset);
        assert_eq!(buf[(1, 0)].modifier, Modifier::BOLD);
        assert_eq!(buf[(2, 0)].modifier, Modifier::empty());
    }

    #[test]
    fn wide_characters_take_two_cells() {
        let buf = render("a漢b".as_bytes(), 5, 1);
        assert_eq!(buf[(1, 0)].symbol(), "漢");
        assert_eq!(buf[(3, 0)].symbol(), "b");
    }

    #[test]
    fn cursor_follows_the_child_and_hides_with_it() {
        let mut p = vt100::Parser::new(
            std::num::NonZeroU16::new(5).unwrap(),
            std::num::NonZeroU16::new(10).unwrap(),
            0,
        );
        p.process(b"\x1b[3;4H");
        let area = Rect::new(0, 0, 10, 5);
        assert_eq!(cursor(p.screen(), area), Some(Position::new(3, 2)));
        p.process(b"\x1b[?25l");
        assert_eq!(cursor(p.screen(), area), None);
    }
}
