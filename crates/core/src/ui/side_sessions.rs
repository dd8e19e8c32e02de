//! The side pane's list of every session (when there are several): one short line each, the ones
//! needing the user first, the one on screen marked.

use ratatui_core::style::Modifier;
use ratatui_core::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::overlay::ellipsize;
use super::side::Section;
use super::theme::Tone;
use crate::brief::{Attention, SessionBrief, order_briefs};
use crate::format::duration;

/// The colour of a session's state: what needs the user stands out, what runs on its own is quiet.
pub fn tone(attention: Attention) -> Tone {
    match attention {
        Attention::Question | Attention::Limit | Attention::Stalled => Tone::Warn,
        Attention::GaveUp | Attention::Paused => Tone::Error,
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
    // Another machine's session has no number here: prefix+digits do not reach it.
    let head = match brief.machine {
        Some(_) => "  ".to_string(),
        None => format!("{}{} ", if shown { "▸" } else { " " }, brief.number),
    };
    let status = status(brief, wall_ms);
    let room = width.saturating_sub(head.width());
    let name_room = room.saturating_sub(status.width() + 1).max(MIN_NAME);
    let name = ellipsize(&name_with_branch(brief), name_room);
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

/// `api (feat/x*)`: the name, and the branch when the name is not the branch already; `*` marks
/// uncommitted changes.
pub fn name_with_branch(brief: &SessionBrief) -> String {
    let star = if brief.dirty == Some(true) { "*" } else { "" };
    let name = match &brief.machine {
        Some(m) => format!("{m}:{}", brief.name),
        None => brief.name.clone(),
    };
    match &brief.branch {
        Some(b) if *b == brief.name => format!("{name}{star}"),
        Some(b) => format!("{name} ({b}{star})"),
        None => name,
    }
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
        SessionBrief::new(number, name, "/w", attention, state)
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

    #[test]
    fn a_branch_shows_beside_the_name_and_changes_get_a_star() {
        let mut worktree = brief(1, "feat/x", Attention::Idle, "idle");
        (worktree.branch, worktree.dirty) = (Some("feat/x".into()), Some(true));
        let mut other = brief(2, "api", Attention::Idle, "idle");
        (other.branch, other.dirty) = (Some("main".into()), Some(false));
        assert_eq!(name_with_branch(&worktree), "feat/x*");
        assert_eq!(name_with_branch(&other), "api (main)");
        assert_eq!(name_with_branch(&brief(3, "x", Attention::Idle, "idle")), "x");
        let s = section(&[worktree, other], 2, 0, 32).expect("a list");
        let lines: Vec<String> = s.lines.iter().map(text).collect();
        assert_eq!(lines, [" 1 feat/x* idle", "▸2 api (main) idle"]);
        let mut far = brief(10_001, "train", Attention::Question, "waiting for you");
        far.machine = Some("gpu".into());
        let s = section(&[far, brief(1, "api", Attention::Idle, "idle")], 1, 0, 40).expect("a list");
        let lines: Vec<String> = s.lines.iter().map(text).collect();
        assert_eq!(lines, ["  gpu:train waiting for you", "▸1 api idle"]);
    }
}
