//! Drawing the settings dialog as a centred box over whatever is below.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::style::{Modifier, Style};
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::{DialogAction, DialogMessage, RowKind, Section, SettingsDialog};
use crate::config::schema;
use crate::ui::overlay::{OverlayFrame, fill, wrap};
// The dialog's secondary text is the theme's muted grey, not its dim modifier.
use crate::ui::theme::{accent, error, highlight, muted as dim, ok as info, source_style, warn as warning};

const MAX_WIDTH: u16 = 72;
const LABEL_WIDTH: usize = 30;
const VALUE_WIDTH: usize = 12;
const SOURCE_WIDTH: usize = 7;
const MIN_LIST_LINES: usize = 3;

impl Widget for &SettingsDialog {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let width = area.width.min(MAX_WIDTH);
        let text_width = usize::from(width.saturating_sub(4));
        let (list, selected_line) = self.list_lines(text_width);
        let footer = self.footer_lines(text_width);
        let wanted = 2 + list.len() + footer.len();
        let inner = OverlayFrame::accent("pokeshell settings").draw(area, width, wanted, buf);
        if inner.height == 0 || inner.width == 0 {
            return;
        }

        let height = usize::from(inner.height);
        let list_room = height
            .saturating_sub(2 + footer.len())
            .max(MIN_LIST_LINES.min(height.saturating_sub(2)));
        let total = list.len();
        let mut lines = vec![self.filter_line(), Line::default()];
        if total > list_room && list_room > 1 {
            // One line of the list area tells where the window is.
            let start = window_start(selected_line, list_room - 1, total);
            lines.extend(list.into_iter().skip(start).take(list_room - 1));
            let position = format!(
                "  {}/{} · more {}",
                self.selected + 1,
                self.visible.len(),
                more_arrows(start, list_room - 1, total)
            );
            lines.push(Line::from(Span::styled(position, dim())));
        } else {
            let start = window_start(selected_line, list_room, total);
            lines.extend(list.into_iter().skip(start).take(list_room));
        }
        lines.extend(footer);
        fill(inner, &lines, buf);
    }
}

fn more_arrows(start: usize, room: usize, total: usize) -> &'static str {
    match (start > 0, start + room < total) {
        (true, true) => "↑↓",
        (true, false) => "↑",
        _ => "↓",
    }
}

/// The first list line to show so the selected line stays in view, roughly centred.
fn window_start(selected: usize, room: usize, total: usize) -> usize {
    if total <= room {
        return 0;
    }
    selected.saturating_sub(room / 2).min(total - room)
}

impl SettingsDialog {
    fn filter_line(&self) -> Line<'static> {
        if self.filter.is_empty() {
            return Line::from(Span::styled("type to filter", dim()));
        }
        let cursor = if self.editor.is_none() {
            Span::styled(" ", Style::new().add_modifier(Modifier::REVERSED))
        } else {
            Span::raw("")
        };
        Line::from(vec![
            Span::styled("filter: ", dim()),
            Span::raw(self.filter.clone()),
            cursor,
        ])
    }

    /// The list with its section headers; also the index of the selected row's line.
    fn list_lines(&self, width: usize) -> (Vec<Line<'static>>, usize) {
        let mut lines = Vec::new();
        let mut selected_line = 0;
        let mut section: Option<Section> = None;
        if self.visible.is_empty() {
            lines.push(Line::from(Span::styled("  no setting matches the filter", dim())));
        }
        for (i, v) in self.visible.iter().enumerate() {
            let row = &self.rows[v.row];
            if section != Some(row.section) {
                section = Some(row.section);
                lines.push(Line::from(Span::styled(
                    row.section.title(),
                    accent().add_modifier(Modifier::BOLD),
                )));
            }
            let is_selected = i == self.selected;
            if is_selected {
                selected_line = lines.len();
            }
            lines.push(self.row_line(v.row, &v.matched, is_selected, width));
            if let Some(editor) = self.editor.as_ref().filter(|_| is_selected)
                && let Some(reason) = &editor.error
            {
                for part in wrap(&format!("✗ {reason}"), width.saturating_sub(4)) {
                    lines.push(Line::from(vec![Span::raw("    "), Span::styled(part, error())]));
                }
            }
        }
        (lines, selected_line)
    }

    fn row_line(&self, index: usize, matched: &[u32], selected: bool, width: usize) -> Line<'static> {
        let row = &self.rows[index];
        let label_width = width
            .saturating_sub(2 + 1 + VALUE_WIDTH + 1 + SOURCE_WIDTH)
            .clamp(8, LABEL_WIDTH);
        let mut spans = vec![if selected {
            Span::styled("› ", accent())
        } else {
            Span::raw("  ")
        }];
        let base = if selected {
            Style::new().add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        spans.extend(label_spans(row.label, matched, base, label_width));
        spans.push(Span::raw(" "));
        match (&row.kind, &row.value) {
            (RowKind::Setting(key), Some((value, source))) => {
                let editing = self.editor.as_ref().filter(|e| selected && e.key == *key);
                if let Some(editor) = editing {
                    // The label, its space and the cursor's cell come before and after.
                    let room = width.saturating_sub(2 + label_width + 1 + 1);
                    spans.push(Span::styled(tail(&editor.text, room), warning()));
                    spans.push(Span::styled(" ", Style::new().add_modifier(Modifier::REVERSED)));
                } else {
                    let text = value.display(schema::spec(*key).unit);
                    let style = if selected { accent() } else { Style::new() };
                    spans.push(Span::styled(pad(&text, VALUE_WIDTH), style));
                    spans.push(Span::raw(" "));
                    spans.push(Span::styled(source.label(), source_style(source)));
                }
            }
            (RowKind::Action(action), _) => {
                let keys = match action {
                    DialogAction::SaveProject => "ctrl+s",
                    DialogAction::SaveGlobal => "ctrl+g",
                };
                spans.push(Span::styled(keys, dim()));
            }
            (RowKind::Setting(_), None) => {}
        }
        Line::from(spans)
    }

    fn footer_lines(&self, width: usize) -> Vec<Line<'static>> {
        let mut lines = vec![Line::default()];
        let push_wrapped = |lines: &mut Vec<Line<'static>>, text: &str, style: Style| {
            for part in wrap(text, width) {
                lines.push(Line::from(Span::styled(part, style)));
            }
        };
        match self.selected_row() {
            Some(RowKind::Setting(key)) => {
                let spec = schema::spec(key);
                push_wrapped(&mut lines, spec.description, Style::new());
                let from = self.shown(key).map_or_else(String::new, |(_, s)| s.to_string());
                let facts = format!("{}: {}. Now from {from}.", spec.full_name(), spec.range_text());
                push_wrapped(&mut lines, &facts, dim());
                for note in self.notes.get(&key).into_iter().flatten() {
                    push_wrapped(&mut lines, &format!("⚠ {note}"), warning());
                }
            }
            Some(RowKind::Action(action)) => {
                let path = match action {
                    DialogAction::SaveProject => &self.project_file,
                    DialogAction::SaveGlobal => &self.global_file,
                };
                let text = format!(
                    "Writes the values marked session into {}, keeping everything else in that file.",
                    path.display()
                );
                push_wrapped(&mut lines, &text, Style::new());
            }
            None => {}
        }
        match &self.message {
            Some(DialogMessage::Info(text)) => push_wrapped(&mut lines, text, info()),
            Some(DialogMessage::Error(text)) => push_wrapped(&mut lines, text, error()),
            None => {}
        }
        let hint = if self.editor.is_some() {
            "Enter accept · Esc cancel · Backspace delete"
        } else {
            "↑↓ move · Enter/Space change · type to filter · Esc close"
        };
        push_wrapped(&mut lines, hint, dim());
        lines
    }
}

/// The label cut or padded to `width` columns, matched characters highlighted.
fn label_spans(label: &str, matched: &[u32], base: Style, width: usize) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for (i, c) in label.chars().enumerate() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        let style = if matched.binary_search(&(i as u32)).is_ok() {
            highlight()
        } else {
            base
        };
        match spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push(c),
            _ => spans.push(Span::styled(c.to_string(), style)),
        }
    }
    if used < width {
        spans.push(Span::raw(" ".repeat(width - used)));
    }
    spans
}

/// `text` in exactly `width` columns: padded, or cut with `…` (a long command keeps the source column).
fn pad(text: &str, width: usize) -> String {
    let w = text.width();
    if w == width {
        text.to_string()
    } else if w < width {
        format!("{text}{}", " ".repeat(width - w))
    } else if width == 0 {
        String::new()
    } else {
        let mut cut = String::new();
        for c in text.chars() {
            if cut.width() + c.to_string().width() + 1 > width {
                break;
            }
            cut.push(c);
        }
        // `cut` and the ellipsis fit by construction; padding covers a wide character left out.
        pad(&format!("{cut}…"), width)
    }
}

/// The end of `text` that fits in `room` columns, so the editor's cursor stays in view.
fn tail(text: &str, room: usize) -> String {
    let mut kept: Vec<char> = Vec::new();
    let mut used = 0;
    for c in text.chars().rev() {
        let w = c.to_string().width();
        if used + w > room {
            break;
        }
        used += w;
        kept.push(c);
    }
    kept.into_iter().rev().collect()
}
