//! A one-line text prompt drawn over the panes (the handoff's optional focus line).

use crate::input::key::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::overlay::{OverlayFrame, fill};
use super::theme;

/// Longest input accepted; a focus line is a sentence, not a document.
const MAX_CHARS: usize = 500;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptOutcome {
    None,
    Submit(String),
    Cancel,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinePrompt {
    pub title: String,
    pub hint: String,
    text: String,
}

impl LinePrompt {
    pub fn new(title: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            hint: hint.into(),
            text: String::new(),
        }
    }

    /// A prompt whose line starts with `text`, ready to edit.
    pub fn with_text(title: impl Into<String>, hint: impl Into<String>, text: &str) -> Self {
        let mut prompt = Self::new(title, hint);
        prompt.text = text.chars().filter(|c| !c.is_control()).take(MAX_CHARS).collect();
        prompt
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> PromptOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter => return PromptOutcome::Submit(self.text.trim().to_string()),
            KeyCode::Esc => return PromptOutcome::Cancel,
            KeyCode::Char('c') if ctrl => return PromptOutcome::Cancel,
            KeyCode::Char('u') if ctrl => self.text.clear(),
            KeyCode::Backspace => {
                self.text.pop();
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() && self.text.chars().count() < MAX_CHARS => {
                self.text.push(c)
            }
            _ => {}
        }
        PromptOutcome::None
    }
}

impl Widget for &LinePrompt {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(8).clamp(20, 72);
        let inner = OverlayFrame::quiet(&self.title).draw(area, width, 3, buf);
        let inner_w = usize::from(inner.width);
        // Show the end of a long line, where the user is typing.
        let mut shown = self.text.as_str();
        while shown.width() + 2 > inner_w && !shown.is_empty() {
            let mut chars = shown.chars();
            chars.next();
            shown = chars.as_str();
        }
        let lines = vec![
            Line::from(vec![
                Span::styled("> ", theme::key()),
                Span::raw(shown.to_string()),
                Span::styled("▏", theme::accent()),
            ]),
            Line::default(),
            Line::from(Span::styled(self.hint.clone(), theme::dim())),
        ];
        fill(inner, &lines, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::from(code)
    }

    #[test]
    fn typing_editing_and_submitting() {
        let mut p = LinePrompt::new("Handoff", "Enter: go");
        for c in "fix the parser!".chars() {
            p.handle_key(key(KeyCode::Char(c)));
        }
        p.handle_key(key(KeyCode::Backspace));
        assert_eq!(p.text(), "fix the parser");
        assert_eq!(
            p.handle_key(key(KeyCode::Enter)),
            PromptOutcome::Submit("fix the parser".into())
        );
    }

    #[test]
    fn escape_cancels_and_ctrl_u_clears() {
        let mut p = LinePrompt::new("Handoff", "");
        p.handle_key(key(KeyCode::Char('x')));
        p.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(p.text(), "");
        assert_eq!(p.handle_key(key(KeyCode::Esc)), PromptOutcome::Cancel);
    }

    #[test]
    fn renders_the_title_text_and_hint() {
        let mut p = LinePrompt::new("Handoff now", "Enter compacts · Esc cancels");
        p.handle_key(key(KeyCode::Char('a')));
        let area = Rect::new(0, 0, 60, 9);
        let mut buf = Buffer::empty(area);
        (&p).render(area, &mut buf);
        let text: String = (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        assert!(text.contains("Handoff now"), "{text}");
        assert!(text.contains("> a"), "{text}");
        assert!(text.contains("Esc cancels"), "{text}");
    }
}
