//! A client's terminal as the server draws it. ratatui's `Terminal` starts every frame from an
//! empty buffer, so every widget is drawn and every cell compared again; a painter keeps the frame
//! it drew, the session draws into it only what changed (`Session::draw`), and only the rows drawn
//! are compared with what the terminal shows. Comparing cells and writing escape sequences stay
//! ratatui's and crossterm's.

use anyhow::{Context, Result};
use ratatui::backend::Backend;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use unicode_width::UnicodeWidthStr;

use super::backend::BufferBackend;
use pokeshell_core::session::{Drawn, Painted};

pub struct Painter {
    backend: BufferBackend,
    /// What the terminal shows.
    shown: Buffer,
    /// The frame being drawn, which holds the last one until then; `drawn` says what it holds.
    next: Buffer,
    drawn: Drawn,
    /// The terminal shows nothing of `shown` (new, cleared or resized): every row is compared.
    blank: bool,
    /// The size changed since the last frame (perhaps only to change back): what the terminal
    /// shows is not known, it is cleared.
    resized: bool,
}

impl Painter {
    pub fn new(cols: u16, rows: u16) -> Self {
        let area = Rect::new(0, 0, cols, rows);
        Self {
            backend: BufferBackend::new(cols, rows),
            shown: Buffer::empty(area),
            next: Buffer::empty(area),
            drawn: Drawn::default(),
            blank: true,
            resized: false,
        }
    }

    /// The size of the next frame.
    pub fn set_size(&mut self, cols: u16, rows: u16) {
        let size = ratatui::layout::Size::new(cols, rows);
        if self.backend.size().ok() != Some(size) {
            self.resized = true;
        }
        self.backend.set_size(cols, rows);
    }

    /// Clears the terminal, at the size set last: the next frame draws every cell.
    pub fn clear(&mut self) -> Result<()> {
        let size = self.backend.size().context("cannot clear")?;
        let area = Rect::new(0, 0, size.width, size.height);
        if area != self.shown.area {
            self.shown.resize(area);
            self.next.resize(area);
        }
        self.backend.clear().context("cannot clear")?;
        self.shown.reset();
        self.blank = true;
        self.resized = false;
        Ok(())
    }

    /// The bytes written since the last call.
    pub fn take(&mut self) -> Vec<u8> {
        self.backend.take()
    }

    /// Draws one frame, synchronized so that no client shows half of it (`whole`: the terminal is
    /// cleared first); returns its bytes.
    pub fn draw(
        &mut self,
        whole: bool,
        build: impl FnOnce(&mut Buffer, &mut Drawn) -> (Painted, vt100::CursorStyle),
    ) -> Result<(Vec<u8>, vt100::CursorStyle)> {
        self.backend.push(b"\x1b[?2026h");
        // Only `set_size` changes the size, and it says so: a frame at a new size clears first.
        if whole || self.resized {
            self.clear()?;
        }
        let (painted, style) = build(&mut self.next, &mut self.drawn);
        let runs = runs(&painted.rows);
        let drawn_rows: u16 = runs.iter().map(|r| r.end - r.start).sum();
        if std::mem::take(&mut self.blank) || drawn_rows > self.shown.area.height / 2 {
            self.show_all()?;
        } else {
            for rows in runs {
                self.show(rows)?;
            }
        }
        match painted.cursor {
            None => self.backend.hide_cursor(),
            Some(at) => self
                .backend
                .show_cursor()
                .and_then(|()| self.backend.set_cursor_position(at)),
        }
        .context("cannot draw")?;
        self.backend.push(b"\x1b[?2026l");
        Ok((self.backend.take(), style))
    }

    /// Writes what changed in these rows, and keeps them as shown.
    fn show(&mut self, rows: std::ops::Range<u16>) -> Result<()> {
        let width = usize::from(self.shown.area.width);
        let cells = usize::from(rows.start) * width..usize::from(rows.end) * width;
        let area = Rect::new(0, rows.start, self.shown.area.width, rows.end - rows.start);
        // ratatui compares whole buffers: these rows are moved out of what was shown and copied
        // out of the frame, which costs less than comparing every other row when they are few.
        let mut before = Buffer {
            area,
            content: self.shown.content[cells.clone()]
                .iter_mut()
                .map(std::mem::take)
                .collect(),
        };
        let after = Buffer {
            area,
            content: self.next.content[cells.clone()].to_vec(),
        };
        rewrite_covered_halves(&mut before.content, &after.content, width);
        self.backend
            .draw(before.diff_iter(&after))
            .context("cannot draw")?;
        for (shown, drawn) in self.shown.content[cells].iter_mut().zip(after.content) {
            *shown = drawn;
        }
        Ok(())
    }

    /// Writes what changed anywhere, and keeps it as shown: when most rows changed (a pane
    /// that scrolls), comparing the two buffers where they are costs less than moving the rows out.
    /// The rows not drawn are the same in both, so they send nothing.
    fn show_all(&mut self) -> Result<()> {
        let width = usize::from(self.shown.area.width);
        // What was shown is taken over by the frame below; until then it only steers the diff.
        rewrite_covered_halves(&mut self.shown.content, &self.next.content, width);
        self.backend
            .draw(self.shown.diff_iter(&self.next))
            .context("cannot draw")?;
        for (shown, drawn) in self.shown.content.iter_mut().zip(&self.next.content) {
            if shown != drawn {
                shown.clone_from(drawn);
            }
        }
        Ok(())
    }
}

/// A terminal blanks the covered half of a wide character whose first half is overwritten, in the
/// colours of that moment, where ratatui's diff takes it to keep the old character's look (a blue
/// background carried onto a blank pi has none). Such halves in `before` are taken to show
/// something other than what is to be drawn there, so that the diff writes them again.
fn rewrite_covered_halves(before: &mut [Cell], after: &[Cell], width: usize) {
    let width = width.max(1);
    for i in 0..before.len() {
        // Only a character of more than one byte can be wide; most cells are ASCII or unchanged,
        // and only those that changed are measured.
        if before[i].symbol().len() < 2 {
            continue;
        }
        let Some(now) = after.get(i).filter(|a| **a != before[i]) else {
            continue;
        };
        let wide = before[i].symbol().width();
        if wide < 2 || now.symbol().width() >= 2 {
            continue;
        }
        let row_end = (i / width + 1) * width;
        for j in i + 1..row_end.min(i + wide).min(after.len()) {
            let mut other = after[j].clone();
            other.modifier.toggle(Modifier::HIDDEN);
            before[j] = other;
        }
    }
}

/// The runs of consecutive `true`s, as ranges of their indices.
fn runs(rows: &[bool]) -> Vec<std::ops::Range<u16>> {
    let mut out: Vec<std::ops::Range<u16>> = Vec::new();
    for (y, _) in (0u16..).zip(rows).filter(|(_, on)| **on) {
        match out.last_mut() {
            Some(run) if run.end == y => run.end = y + 1,
            _ => out.push(y..y + 1),
        }
    }
    out
}

#[cfg(test)]
mod tests;
