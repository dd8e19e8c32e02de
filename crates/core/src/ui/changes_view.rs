//! The changes overlay (prefix+r): what the agent changed since the session started, drawn from
//! the same model as `pokeshell diff` and the web view's Changes view. First the list of files,
//! then one file's diff, scrolled with the arrows and the page keys. It opens at once saying it is
//! reading; the diff is read off the session's thread and arrives as an input.

use std::cell::Cell;

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::style::Style;
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;

use crate::diff::{Changes, FileChange, LineKind, Status};
use crate::input::key::{KeyCode, KeyEvent};
use crate::ui::overlay::{OverlayFrame, ellipsize, fill};
use crate::ui::theme;

/// What a key did to the overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangesOutcome {
    None,
    Close,
    /// Read the changes again.
    Refresh,
}

#[derive(Debug, Clone, PartialEq)]
enum Content {
    Reading,
    Failed(String),
    Ready(Changes),
}

#[derive(Debug)]
pub struct ChangesView {
    /// "3:api" and its base, for the title.
    session: String,
    content: Content,
    /// The file chosen in the list.
    selected: usize,
    /// `Some(file)`: that file's diff is open.
    open: Option<usize>,
    /// The first row shown of the open file.
    scroll: usize,
    /// Rows the last frame had for the list or the diff: a page.
    page: Cell<usize>,
}

impl ChangesView {
    /// The overlay while the changes are read.
    pub fn reading(session: &str) -> ChangesView {
        ChangesView {
            session: session.to_string(),
            content: Content::Reading,
            selected: 0,
            open: None,
            scroll: 0,
            page: Cell::new(10),
        }
    }

    /// The changes came (or why there are none). The file chosen stays chosen when it is still there.
    pub fn arrived(&mut self, result: Result<Changes, String>) {
        let chosen = self.file().map(|f| f.path.clone());
        self.content = match result {
            Ok(c) => Content::Ready(c),
            Err(e) => Content::Failed(e),
        };
        let count = self.files().len();
        if let Some(i) = chosen.and_then(|p| self.files().iter().position(|f| f.path == p)) {
            self.selected = i;
        } else {
            self.selected = self.selected.min(count.saturating_sub(1));
            self.open = None;
        }
        if self.open.is_some() {
            self.open = Some(self.selected);
            self.scroll = self.scroll.min(self.rows().len().saturating_sub(1));
        }
    }

    pub fn is_reading(&self) -> bool {
        self.content == Content::Reading
    }

    fn files(&self) -> &[FileChange] {
        match &self.content {
            Content::Ready(c) => &c.files,
            _ => &[],
        }
    }

    fn file(&self) -> Option<&FileChange> {
        self.files().get(self.selected)
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ChangesOutcome {
        let page = self.page.get().max(1);
        let count = self.files().len();
        match (self.open, key.code) {
            (_, KeyCode::Esc) => return ChangesOutcome::Close,
            (_, KeyCode::Char('r')) => return ChangesOutcome::Refresh,
            (None, KeyCode::Char('q')) => return ChangesOutcome::Close,
            (None, KeyCode::Up | KeyCode::Char('k')) => self.selected = self.selected.saturating_sub(1),
            (None, KeyCode::Down | KeyCode::Char('j')) => {
                self.selected = (self.selected + 1).min(count.saturating_sub(1))
            }
            (None, KeyCode::PageUp) => self.selected = self.selected.saturating_sub(page),
            (None, KeyCode::PageDown) => self.selected = (self.selected + page).min(count.saturating_sub(1)),
            (None, KeyCode::Home) => self.selected = 0,
            (None, KeyCode::End) => self.selected = count.saturating_sub(1),
            (None, KeyCode::Enter | KeyCode::Right | KeyCode::Char('l')) if count > 0 => {
                self.open = Some(self.selected);
                self.scroll = 0;
            }
            (Some(_), KeyCode::Left | KeyCode::Backspace | KeyCode::Char('q' | 'h')) => self.open = None,
            (Some(_), KeyCode::Char('n') | KeyCode::Tab) => self.step_file(1),
            (Some(_), KeyCode::Char('p') | KeyCode::BackTab) => self.step_file(-1),
            (Some(_), code) => self.scroll_by(code, page),
            _ => {}
        }
        ChangesOutcome::None
    }

    fn step_file(&mut self, by: isize) {
        let count = self.files().len();
        let next = self.selected.saturating_add_signed(by);
        if next < count {
            self.selected = next;
            self.open = Some(next);
            self.scroll = 0;
        }
    }

    fn scroll_by(&mut self, code: KeyCode, page: usize) {
        let last = self.rows().len().saturating_sub(page);
        self.scroll = match code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll + 1,
            KeyCode::PageUp => self.scroll.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll + page,
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => self.scroll,
        }
        .min(last);
    }

    /// The open file's diff, a row per line: hunk headers, lines with their numbers, its note.
    fn rows(&self) -> Vec<Line<'static>> {
        let Some(f) = self.open.and_then(|i| self.files().get(i)) else {
            return Vec::new();
        };
        let mut rows = Vec::new();
        for h in &f.hunks {
            rows.push(Line::from(Span::styled(h.header.clone(), theme::accent())));
            for l in &h.lines {
                let num = |n: Option<u32>| n.map_or_else(|| "    ".to_string(), |n| format!("{n:>4}"));
                let (sign, style) = match l.kind {
                    LineKind::Context => (" ", Style::new()),
                    LineKind::Added => ("+", theme::ok()),
                    LineKind::Removed => ("-", theme::error()),
                    LineKind::NoNewline => ("\\", theme::muted()),
                };
                rows.push(Line::from(vec![
                    Span::styled(format!("{} {} ", num(l.old), num(l.new)), theme::muted()),
                    Span::styled(format!("{sign}{}", l.text), style),
                ]));
            }
        }
        if let Some(note) = &f.note {
            rows.push(Line::from(Span::styled(format!("({note})"), theme::warn())));
        }
        if rows.is_empty() {
            rows.push(Line::from(Span::styled("(no lines changed)", theme::dim())));
        }
        rows
    }

    fn title(&self) -> String {
        match (&self.content, self.open.and_then(|i| self.files().get(i))) {
            (_, Some(f)) => format!("{} · {}", self.session, f.title()),
            (Content::Ready(c), None) => format!("Changes of {} since {}", self.session, short(&c.base)),
            _ => format!("Changes of {}", self.session),
        }
    }

    fn list(&self, room: usize, width: usize) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let changes = match &self.content {
            Content::Reading => {
                lines.push(Line::from(Span::styled("reading the changes…", theme::dim())));
                return lines;
            }
            Content::Failed(e) => {
                for part in crate::ui::overlay::wrap(e, width) {
                    lines.push(Line::from(Span::styled(part, theme::error())));
                }
                return lines;
            }
            Content::Ready(c) => c,
        };
        lines.push(Line::from(Span::styled(changes.summary(), theme::title())));
        if let Some(note) = &changes.note {
            lines.push(Line::from(Span::styled(ellipsize(note, width), theme::warn())));
        }
        let room = room.saturating_sub(lines.len()).max(1);
        self.page.set(room);
        let skip = self.selected.saturating_sub(room - 1);
        for (i, f) in changes.files.iter().enumerate().skip(skip).take(room) {
            let counts = f.counts();
            let name_room = width.saturating_sub(counts.chars().count() + 5);
            let name = ellipsize(&f.title(), name_room);
            let pad =
                " ".repeat(name_room.saturating_sub(unicode_width::UnicodeWidthStr::width(name.as_str())));
            let style = if i == self.selected {
                theme::key().add_modifier(ratatui_core::style::Modifier::REVERSED)
            } else {
                Style::new()
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{} ", letter(f.status)), status_style(f.status)),
                Span::styled(format!("{name}{pad}"), style),
                Span::styled(format!("  {counts}"), theme::muted()),
            ]));
        }
        lines
    }
}

/// A commit id as people read it.
fn short(base: &str) -> &str {
    &base[..base.len().min(10)]
}

fn letter(s: Status) -> char {
    match s {
        Status::Added => 'A',
        Status::Modified => 'M',
        Status::Deleted => 'D',
        Status::Renamed => 'R',
        Status::Copied => 'C',
        Status::TypeChanged => 'T',
        Status::Unmerged => 'U',
    }
}

fn status_style(s: Status) -> Style {
    match s {
        Status::Added => theme::ok(),
        Status::Deleted | Status::Unmerged => theme::error(),
        _ => theme::warn(),
    }
}

impl Widget for &ChangesView {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).max(20);
        let height = usize::from(area.height.saturating_sub(4)).max(3);
        let title = self.title();
        let inner = OverlayFrame::accent(&title).draw(area, width, height, buf);
        let inner_w = usize::from(inner.width);
        let room = usize::from(inner.height).saturating_sub(2).max(1);
        let (mut lines, hint) = match self.open {
            None => (
                self.list(room, inner_w),
                "↑↓ choose · Enter open · r read again · Esc close",
            ),
            Some(_) => {
                self.page.set(room);
                let rows = self.rows();
                let total = rows.len();
                let shown: Vec<Line> = rows.into_iter().skip(self.scroll).take(room).collect();
                let end = (self.scroll + shown.len()).min(total);
                let mut lines = shown;
                lines.resize(room, Line::default());
                lines.push(Line::from(Span::styled(
                    format!("rows {}–{end} of {total}", (self.scroll + 1).min(total)),
                    theme::muted(),
                )));
                (
                    lines,
                    "↑↓ PgUp PgDn scroll · n/p next/previous file · ← files · Esc close",
                )
            }
        };
        if self.open.is_none() {
            lines.resize(room + 1, Line::default());
        }
        lines.push(Line::from(Span::styled(ellipsize(hint, inner_w), theme::dim())));
        fill(inner, &lines, buf);
    }
}

#[cfg(test)]
mod tests;
