//! The side pane's list of every session (when there are several): one short line each, the ones
//! needing the user first, the one on screen marked.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::overlay::ellipsize;
use super::side::Section;
use super::theme::Tone;
use crate::session::format::duration;
use crate::session::{Attention, SessionBrief, order_briefs};

/// The colour of a session's state: what needs the user stands out, what runs on its own is quiet.
pub fn tone(attention: Attention) -> Tone {
    match attention {
        Attention::Question | Attention::Limit | Attention::Stalled => Tone::Warn,
        Attention::GaveUp => Tone::Error,
        Attention::Working => Tone::Ok,
        Attention::Idle | Attention::Exited => Tone::Dim,
    }
}

/// The narrowest a name is cut to before the state gives way instead.
const MIN_NAME: usize = 6;

/// `⏳ bash 1m 05s` for a working session's tool, else its state in words.
fn status(brief: &SessionBrief, wall_ms: u64) -> String {
    match &brief.tool {
        Some((tool, started)) if brief.attention == Attention::Working => {
            format!("⏳ {tool} {}", duration(wall_ms.saturating_sub(*started)))
        }
        _ => brief.state.clone(),
    }
}

/// One session in `width` columns: `▸2 web  waiting for you: …`.
fn line(brief: &SessionBrief, current: u32, wall_ms: u64, width: usize) -> Line<'static> {
    let shown = brief.number == current;
    let head = format!("{}{} ", if shown { "▸" } else { " " }, brief.number);
    let status = status(brief, wall_ms);
    let room = width.saturating_sub(head.width());
    let name_room = room.saturating_sub(status.width() + 1).max(MIN_NAME);
    let name = ellipsize(&brief.name, name_room);
    let status = ellipsize(&status, room.saturating_sub(name.width() + 1));
    let name_style = if shown {
        Tone::Plain.style().add_modifier(Modifier::BOLD)
    } else {
        Tone::Plain.style()
    };
    Line::from(vec![
        Span::styled(head, Tone::Accent.style()),
        Span::styled(name, name_style),
        Span::raw(" "),
        Span::styled(status, tone(brief.attention).style()),
    ])
}

/// The section, or `None` when there are fewer than two sessions to list.
pub fn section(briefs: &[SessionBrief], current: u32, wall_ms: u64, width: usize) -> Option<Section> {
    if briefs.len() < 2 {
        return None;
    }
    let mut briefs = briefs.to_vec();
    order_briefs(&mut briefs);
    Some(Section {
        title: "sessions".into(),
        lines: briefs.iter().map(|b| line(b, current, wall_ms, width)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief(number: u32, name: &str, attention: Attention, state: &str) -> SessionBrief {
        SessionBrief {
            number,
            name: name.into(),
            dir: "/w".into(),
            attention,
            state: state.into(),
            tool: None,
            last_intervention: None,
            created_wall_ms: 0,
            attached: 0,
            context_percent: None,
        }
    }

    fn text(line: &Line) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn one_session_has_no_list_and_several_are_ordered_by_need_then_number() {
        let one = [brief(1, "api", Attention::Idle, "idle")];
        assert_eq!(section(&one, 1, 0, 28), None);
        let mut tool = brief(3, "docs", Attention::Working, "working");
        tool.tool = Some(("bash".into(), 1_000));
        let all = [
            brief(1, "api", Attention::Idle, "idle"),
            brief(2, "web", Attention::Question, "waiting for you: Pick a file"),
            tool,
        ];
        let s = section(&all, 1, 66_000, 28).expect("a list");
        let lines: Vec<String> = s.lines.iter().map(text).collect();
        assert_eq!(
            lines,
            [
                " 2 web waiting for you: Pic…",
                " 3 docs ⏳ bash 1m 05s",
                "▸1 api idle"
            ]
        );
        assert!(lines.iter().all(|l| l.width() <= 28));
    }

    #[test]
    fn a_long_name_is_cut_but_keeps_a_few_columns() {
        let all = [
            brief(
                1,
                "a-very-long-session-name",
                Attention::Stalled,
                "stalled 3m 05s",
            ),
            brief(2, "b", Attention::Idle, "idle"),
        ];
        let s = section(&all, 2, 0, 24).expect("a list");
        assert_eq!(text(&s.lines[0]), " 1 a-ver… stalled 3m 05s");
    }
}
