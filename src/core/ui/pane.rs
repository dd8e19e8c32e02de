//! Draws the mirrored child screen into the pane.

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};

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

/// Cell (`row`, `col`) of `screen` as the pane shows it, in a pane `cols` wide.
fn pane_cell(screen: &vt100::Screen, row: u16, col: u16, cols: u16, out: &mut Cell) {
    let Some(cell) = screen.cell(row, col) else {
        return;
    };
    if cell.is_wide_continuation() {
        // The wide character to the left covers this cell; ratatui skips it when diffing.
        out.reset();
        return;
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

/// Draws the child's screen into the pane, keeping the pane as it was last drawn so that the next
/// frame looks up again only the rows vt100 says changed: finding a cell in vt100 walks to its row
/// each time, the largest part of drawing the pane (docs/architecture.md, "Where a quiet key's time
/// goes"). A copy of what it shows, nothing more.
#[derive(Default)]
pub struct PaneCache {
    /// The child's screen when last drawn, and the pane's cells then, row by row.
    screen: Option<vt100::Screen>,
    cells: Vec<Cell>,
    size: (u16, u16),
}

impl PaneCache {
    /// Draws `screen` into `area` of `buf`: every cell of pi's screen, replacing whatever `buf`
    /// held there, looked up again only in the rows that changed since the last call.
    pub fn render(&mut self, screen: &vt100::Screen, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        let (rows, cols) = screen.size();
        let (rows, cols) = (rows.get().min(area.height), cols.get().min(area.width));
        let width = usize::from(cols);
        let changed: Vec<u16> = match &self.screen {
            Some(prev) if self.size == (cols, rows) && prev.size() == screen.size() => screen
                .rows_diff(prev, 0, cols)
                .zip(0..rows)
                .filter(|(diff, _)| !diff.is_empty())
                .map(|(_, row)| row)
                .collect(),
            _ => {
                self.cells = vec![Cell::EMPTY; usize::from(rows) * width];
                self.size = (cols, rows);
                (0..rows).collect()
            }
        };
        for row in changed {
            let start = usize::from(row) * width;
            for (col, out) in (0..cols).zip(&mut self.cells[start..start + width]) {
                pane_cell(screen, row, col, cols, out);
            }
        }
        match &mut self.screen {
            Some(prev) => prev.clone_from(screen),
            None => self.screen = Some(screen.clone()),
        }
        for row in 0..rows {
            let from = &self.cells[usize::from(row) * width..][..width];
            let at = buf.index_of(area.x, area.y + row);
            buf.content[at..at + width].clone_from_slice(from);
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
mod tests;
