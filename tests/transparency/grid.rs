//! A copy of one region of a vt100 screen, every cell with all the attributes vt100 0.18 models, and
//! the cursor; two copies are compared cell by cell.

use std::fmt::Write as _;

/// One cell as a terminal shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// The text; a cell nothing was written to counts as a space (both look blank).
    pub text: String,
    pub wide: bool,
    pub wide_continuation: bool,
    pub fg: vt100::Color,
    pub bg: vt100::Color,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub inverse: bool,
}

impl Cell {
    fn of(cell: &vt100::Cell) -> Cell {
        let text = cell.contents();
        Cell {
            text: if text.is_empty() {
                " ".to_string()
            } else {
                text.to_string()
            },
            wide: cell.is_wide(),
            wide_continuation: cell.is_wide_continuation(),
            fg: cell.fgcolor(),
            bg: cell.bgcolor(),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        }
    }

    fn describe(&self) -> String {
        let mut out = format!("{:?}", self.text);
        let flags = [
            (self.wide, "wide"),
            (self.wide_continuation, "wide-continuation"),
            (self.bold, "bold"),
            (self.dim, "dim"),
            (self.italic, "italic"),
            (self.underline, "underline"),
            (self.inverse, "inverse"),
        ];
        for (on, name) in flags {
            if on {
                let _ = write!(out, " {name}");
            }
        }
        if self.fg != vt100::Color::Default {
            let _ = write!(out, " fg={:?}", self.fg);
        }
        if self.bg != vt100::Color::Default {
            let _ = write!(out, " bg={:?}", self.bg);
        }
        out
    }
}

/// The top-left `rows`×`cols` of a screen, and where its cursor is (`None`: hidden).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    pub rows: Vec<Vec<Cell>>,
    pub cursor: Option<(u16, u16)>,
}

impl Grid {
    /// The region `rows`×`cols` at the screen's top-left corner. Cells outside the screen are left
    /// out, so a too small screen differs from a bigger one.
    pub fn capture(screen: &vt100::Screen, rows: u16, cols: u16) -> Grid {
        let rows = (0..rows)
            .map(|r| {
                (0..cols)
                    .filter_map(|c| screen.cell(r, c).map(Cell::of))
                    .collect()
            })
            .collect();
        let cursor = (!screen.hide_cursor()).then(|| screen.cursor_position());
        Grid { rows, cursor }
    }

    /// The top-left `rows`×`cols` of this grid (the cursor kept only when inside it).
    pub fn crop(&self, rows: u16, cols: u16) -> Grid {
        let rows: Vec<Vec<Cell>> = self
            .rows
            .iter()
            .take(usize::from(rows))
            .map(|r| r.iter().take(usize::from(cols)).cloned().collect())
            .collect();
        let cursor = self.cursor.filter(|&(r, c)| r < rows.len() as u16 && c < cols);
        Grid { rows, cursor }
    }

    /// Row `r` as plain text.
    pub fn line(&self, r: usize) -> String {
        self.rows.get(r).map_or_else(String::new, |row| {
            row.iter()
                .filter(|c| !c.wide_continuation)
                .map(|c| c.text.as_str())
                .collect()
        })
    }

    pub fn text(&self) -> String {
        (0..self.rows.len())
            .map(|r| self.line(r).trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every cell of row `r` whose text lies inside the first match of `pattern` on that row's
    /// text: `(start column, end column)`, wide characters counted twice.
    pub fn find(&self, r: usize, pattern: &str) -> Option<(usize, usize)> {
        let row = self.rows.get(r)?;
        let line = self.line(r);
        let at = line.find(pattern)?;
        let (mut col, mut bytes) = (0, 0);
        for cell in row.iter() {
            if bytes >= at {
                break;
            }
            col += 1;
            if !cell.wide_continuation {
                bytes += cell.text.len();
            }
        }
        let width: usize = unicode_width::UnicodeWidthStr::width(pattern);
        Some((col, col + width))
    }

    /// Replaces the text of cells `from..to` of row `r` by `#` (their attributes stay compared).
    pub fn mask(&mut self, r: usize, (from, to): (usize, usize)) {
        if let Some(row) = self.rows.get_mut(r) {
            for cell in row.iter_mut().take(to).skip(from) {
                cell.text = "#".to_string();
            }
        }
    }

    /// What differs from `want`: per row (at most `limit` rows) how many cells differ and the first
    /// three of them, plus both cursors; empty when the two are the same.
    pub fn diff(&self, want: &Grid, limit: usize) -> String {
        let mut out = String::new();
        if self.rows.len() != want.rows.len() {
            let _ = writeln!(out, "rows: {} here, {} wanted", self.rows.len(), want.rows.len());
        }
        let mut rows_shown = 0;
        let mut rows_left = 0;
        for (r, (got, exp)) in self.rows.iter().zip(&want.rows).enumerate() {
            let cells: Vec<usize> = (0..got.len().max(exp.len()))
                .filter(|&c| got.get(c) != exp.get(c))
                .collect();
            if cells.is_empty() {
                continue;
            }
            if rows_shown == limit {
                rows_left += 1;
                continue;
            }
            rows_shown += 1;
            let _ = writeln!(
                out,
                "row {r}: {} cells differ: {:?}",
                cells.len(),
                self.line(r).trim_end()
            );
            let show = |cell: Option<&Cell>| cell.map_or_else(|| "nothing".to_string(), Cell::describe);
            for &c in cells.iter().take(3) {
                let _ = writeln!(
                    out,
                    "  col {c}: {} here, {} wanted",
                    show(got.get(c)),
                    show(exp.get(c))
                );
            }
        }
        if rows_left > 0 {
            let _ = writeln!(out, "... and {rows_left} more rows");
        }
        if self.cursor != want.cursor {
            let _ = writeln!(out, "cursor: {:?} here, {:?} wanted", self.cursor, want.cursor);
        }
        out
    }
}
