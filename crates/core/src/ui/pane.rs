//! Draws the mirrored child screen into the pane.

use std::sync::atomic::{AtomicU64, Ordering};

use ratatui_core::buffer::{Buffer, Cell};
use ratatui_core::layout::{Position, Rect};
use ratatui_core::style::{Color, Modifier, Style};

use crate::screen::row_changes::{RowChanges, Seen};

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

/// The child's screen as the pane shows it, kept from frame to frame so that a frame looks up again
/// only the rows that changed (finding a cell in vt100 walks to its row each time), and copies into
/// a buffer only the rows that buffer has not been given yet (docs/architecture.md, "Where a quiet
/// key's time goes"). Which rows changed, the mirror's record says; without one (tests), comparing
/// with a copy of the screen finds them, which costs most of a key's drawing time.
pub struct PaneCache {
    /// Tells this cache's versions from another's (a buffer may hold another session's pane).
    id: u64,
    /// What tells the next look which rows changed, and the pane's cells then, row by row.
    known: Known,
    cells: Vec<Cell>,
    size: (u16, u16),
    /// Counts the looks that found a change; each row keeps the count of its last change.
    version: u64,
    row_versions: Vec<u64>,
}

impl Default for PaneCache {
    fn default() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            known: Known::Nothing,
            cells: Vec::new(),
            size: (0, 0),
            version: 0,
            row_versions: Vec::new(),
        }
    }
}

/// The child's screen as the pane is given it: with the mirror's record of the rows its output
/// changed, where there is one.
#[derive(Clone, Copy)]
pub struct PaneScreen<'a> {
    pub screen: &'a vt100::Screen,
    pub changes: Option<&'a RowChanges>,
}

impl<'a> From<&'a vt100::Screen> for PaneScreen<'a> {
    fn from(screen: &'a vt100::Screen) -> Self {
        Self {
            screen,
            changes: None,
        }
    }
}

/// What a cache knows of the screen it looked at last, to tell which rows changed since.
enum Known {
    Nothing,
    /// How far it had seen the mirror's record of changes.
    Changes(Seen),
    /// A copy of the screen, to compare with (no record was given).
    Screen(Box<vt100::Screen>),
}

/// Which pane a buffer holds, and as of which version: what [`PaneCache::draw`] need not copy again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PaneDrawn {
    cache: u64,
    version: u64,
    size: (u16, u16),
}

impl PaneCache {
    /// Draws `screen` into `area` of `buf`, which holds the pane as `drawn` says: every cell of pi's
    /// screen, replacing what `buf` held there, and only the rows that changed since. Returns the
    /// rows it drew, `drawn` updated.
    pub fn draw(
        &mut self,
        screen: PaneScreen<'_>,
        area: Rect,
        buf: &mut Buffer,
        drawn: &mut PaneDrawn,
    ) -> Vec<u16> {
        let area = area.intersection(buf.area);
        self.look(screen, area);
        let (cols, rows) = self.size;
        let fresh = drawn.cache != self.id || drawn.size != self.size;
        let since = if fresh { 0 } else { drawn.version };
        let width = usize::from(cols);
        let mut drew = Vec::new();
        if fresh {
            // Where the screen is smaller than the pane, nothing of what the buffer held stays.
            for y in area.top()..area.bottom() {
                for x in area.left()..area.right() {
                    buf[(x, y)].reset();
                }
            }
        }
        for row in 0..rows {
            if self.row_versions[usize::from(row)] <= since {
                continue;
            }
            let from = &self.cells[usize::from(row) * width..][..width];
            let at = buf.index_of(area.x, area.y + row);
            buf.content[at..at + width].clone_from_slice(from);
            drew.push(area.y + row);
        }
        if fresh {
            drew.extend(area.top() + rows..area.bottom());
        }
        *drawn = PaneDrawn {
            cache: self.id,
            version: self.version,
            size: self.size,
        };
        drew
    }

    /// Brings the cells up to date with the screen: looks up again the rows that changed, as the
    /// mirror's record says, or else as comparing with a copy of the screen finds.
    fn look(&mut self, pane: PaneScreen<'_>, area: Rect) {
        let screen = pane.screen;
        let (rows, cols) = screen.size();
        let (rows, cols) = (rows.get().min(area.height), cols.get().min(area.width));
        let width = usize::from(cols);
        let same_size = self.size == (cols, rows);
        let changed = match (&self.known, pane.changes) {
            (Known::Changes(seen), Some(changes)) if same_size => changes
                .since(*seen)
                .map(|changed| changed.into_iter().filter(|r| *r < rows).collect()),
            (Known::Screen(prev), None) if same_size && prev.size() == screen.size() => Some(
                screen
                    .rows_diff(prev, 0, cols)
                    .zip(0..rows)
                    .filter(|(diff, _)| !diff.is_empty())
                    .map(|(_, row)| row)
                    .collect::<Vec<u16>>(),
            ),
            _ => None,
        };
        let changed = changed.unwrap_or_else(|| {
            self.cells = vec![Cell::EMPTY; usize::from(rows) * width];
            self.row_versions = vec![0; usize::from(rows)];
            self.size = (cols, rows);
            (0..rows).collect()
        });
        if !changed.is_empty() {
            self.version += 1;
        }
        for row in changed {
            let start = usize::from(row) * width;
            for (col, out) in (0..cols).zip(&mut self.cells[start..start + width]) {
                pane_cell(screen, row, col, cols, out);
            }
            self.row_versions[usize::from(row)] = self.version;
        }
        self.known = match (pane.changes, std::mem::replace(&mut self.known, Known::Nothing)) {
            (Some(changes), _) => Known::Changes(changes.seen()),
            (None, Known::Screen(mut prev)) => {
                prev.as_mut().clone_from(screen);
                Known::Screen(prev)
            }
            (None, _) => Known::Screen(Box::new(screen.clone())),
        };
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

#[cfg(any(test, feature = "testing"))]
pub mod samples;
#[cfg(test)]
mod tests;
