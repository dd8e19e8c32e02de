//! The footer line: pi-poke's `📌 p:on/off` indicator with its transient suffix, a message, key hints.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::commands::{COMMANDS, CommandId, CommandKey};
use super::theme::{self, Tone};
use crate::input::prefix::PrefixKey;
use crate::supervisor::{Footer, FooterSuffix};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FooterView {
    pub poke_on: bool,
    /// `⏳ bash`, `⚠️ bash 45s`, `👀 post-compact`, `📤 resume`.
    pub suffix: Option<(String, Tone)>,
    /// A short-lived message (a command's confirmation or why it could not run).
    pub message: Option<(String, Tone)>,
    /// The prefix key was pressed and pokeshell waits for the next key.
    pub armed: bool,
    pub prefix: String,
}

impl FooterView {
    /// The footer from its parts: the supervisor's indicator and suffix, the app's message, and
    /// whether the prefix waits for its key.
    pub fn new(footer: &Footer, message: Option<(String, Tone)>, armed: bool, prefix: PrefixKey) -> Self {
        FooterView {
            poke_on: footer.enabled,
            suffix: footer.suffix.as_ref().map(|s| (s.text(), suffix_tone(s))),
            message,
            armed,
            prefix: prefix.to_string(),
        }
    }
}

/// A running tool is background news; an overdue call and a watched compaction want attention.
fn suffix_tone(suffix: &FooterSuffix) -> Tone {
    match suffix {
        FooterSuffix::Running { .. } => Tone::Dim,
        FooterSuffix::Overdue { .. } | FooterSuffix::PostCompact | FooterSuffix::LimitWait { .. } => {
            Tone::Warn
        }
        FooterSuffix::Resume => Tone::Accent,
        FooterSuffix::Paused { .. } => Tone::Error,
    }
}

/// The keys offered after the prefix, in the order the help lists them: every command but sending the
/// prefix itself, whose key the hint already starts with.
pub fn armed_hint() -> Vec<(CommandId, String)> {
    COMMANDS
        .iter()
        .filter(|c| c.key != CommandKey::Prefix)
        .map(|c| (c.id, format!("{} {}", c.help_key(), c.name)))
        .collect()
}

/// The hint in at most `width` columns: the last entries give way first, the help's last of all.
fn fitted_hint(width: usize) -> String {
    let mut entries = armed_hint();
    let text = |entries: &[(CommandId, String)]| {
        entries
            .iter()
            .map(|(_, e)| e.as_str())
            .collect::<Vec<_>>()
            .join(" · ")
    };
    while text(&entries).width() > width {
        match entries.iter().rposition(|(id, _)| *id != CommandId::Help) {
            Some(i) => entries.remove(i),
            None => break,
        };
    }
    text(&entries)
}

impl Widget for &FooterView {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let mut left = vec![if self.poke_on {
            Span::styled("📌 p:on", theme::ok())
        } else {
            Span::styled("📌 p:off", theme::dim())
        }];
        if let Some((text, tone)) = &self.suffix {
            left.push(Span::raw(" "));
            left.push(Span::styled(text.clone(), tone.style()));
        }
        if let Some((text, tone)) = &self.message {
            left.push(Span::raw("  "));
            left.push(Span::styled(text.clone(), tone.style()));
        }
        let left = Line::from(left);
        let left_w = u16::try_from(left.width()).unwrap_or(u16::MAX).min(area.width);
        let right = if self.armed {
            let room =
                usize::from(area.width).saturating_sub(usize::from(left_w) + 2 + self.prefix.width() + 1);
            Line::from(vec![
                Span::styled(format!("{} ", self.prefix), theme::key()),
                Span::styled(fitted_hint(room), Tone::Accent.style()),
            ])
        } else {
            Line::from(vec![
                Span::styled(format!("{} ?", self.prefix), theme::key()),
                Span::styled(" help", theme::dim()),
            ])
        };
        // A message wider than u16 (a huge notice from pi) must fill the line, not wrap around.
        let right_w = u16::try_from(right.width()).unwrap_or(u16::MAX);
        left.render(
            Rect {
                width: left_w,
                ..area
            },
            buf,
        );
        // The hint gives way to the status when the line is short.
        if area.width >= left_w.saturating_add(right_w).saturating_add(2) {
            let x = area.x + area.width - right_w;
            right.render(Rect::new(x, area.y, right_w, 1), buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_takes_the_suffix_words_from_the_supervisor_and_picks_its_tone() {
        let footer = Footer {
            enabled: true,
            suffix: Some(FooterSuffix::Overdue {
                tool: "bash".into(),
                seconds: 45,
            }),
        };
        let view = FooterView::new(&footer, None, true, PrefixKey::default());
        assert!(view.poke_on && view.armed);
        assert_eq!(view.suffix, Some(("⚠️ bash 45s".to_string(), Tone::Warn)));
        assert_eq!(view.prefix, "Ctrl+]");
        assert_eq!(
            format!("📌 p:on {}", view.suffix.map(|s| s.0).unwrap_or_default()),
            footer.text()
        );
        let off = Footer {
            enabled: false,
            suffix: Some(FooterSuffix::Running { tool: "read".into() }),
        };
        let view = FooterView::new(&off, Some(("hi".into(), Tone::Ok)), false, PrefixKey::default());
        assert_eq!(view.suffix, Some(("⏳ read".to_string(), Tone::Dim)));
        assert_eq!(view.message, Some(("hi".to_string(), Tone::Ok)));
    }

    #[test]
    fn the_armed_hint_offers_every_command_but_the_prefix_in_order() {
        let hint = fitted_hint(usize::MAX);
        let mut from = 0;
        for c in &COMMANDS {
            let entry = format!("{} {}", c.help_key(), c.name);
            if c.key == CommandKey::Prefix {
                assert!(!hint.contains(&entry), "{hint}");
                continue;
            }
            let at = hint[from..].find(&entry).map(|i| i + from);
            assert!(at.is_some(), "{entry} after byte {from} in {hint}");
            from = at.unwrap_or_default() + entry.len();
        }
        assert_eq!(hint.matches(" · ").count(), COMMANDS.len() - 2);
    }

    #[test]
    fn a_hint_too_wide_drops_its_last_entries_but_keeps_the_help() {
        let full = fitted_hint(usize::MAX);
        let hint = fitted_hint(60);
        assert!(hint.width() <= 60, "{hint}");
        assert!(full.starts_with(hint.trim_end_matches(" · ? help")), "{hint}");
        assert!(hint.ends_with("? help"), "{hint}");
        assert_eq!(
            fitted_hint(3),
            "? help",
            "the help's entry stays whatever the room"
        );
    }

    #[test]
    fn the_armed_footer_fits_a_120_column_line() {
        let footer = Footer {
            enabled: true,
            suffix: None,
        };
        let view = FooterView::new(&footer, None, true, PrefixKey::default());
        let area = Rect::new(0, 0, 120, 1);
        let mut buf = Buffer::empty(area);
        (&view).render(area, &mut buf);
        let line: String = (0..120).map(|x| buf[(x, 0)].symbol()).collect();
        assert!(
            line.contains("Ctrl+] s side") && line.contains("? help"),
            "{line}"
        );
    }

    #[test]
    fn a_message_wider_than_u16_fills_the_line() {
        let view = FooterView {
            poke_on: true,
            suffix: None,
            message: Some(("x".repeat(usize::from(u16::MAX) + 4), Tone::Ok)),
            armed: false,
            prefix: "Ctrl+]".into(),
        };
        let area = Rect::new(0, 0, 40, 1);
        let mut buf = Buffer::empty(area);
        (&view).render(area, &mut buf);
        assert_eq!(buf[(39, 0)].symbol(), "x", "the message reaches the last column");
    }
}
