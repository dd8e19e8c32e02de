//! The session switcher (prefix+w): every session with its number, name, state and directory, the
//! ones needing the user first. Typing filters the list fuzzily (as the settings dialog does),
//! Backspace and Ctrl+U edit the filter, ↑/↓ move (wrapping), Enter shows the chosen session, Esc or
//! Ctrl+C closes.

use crate::input::key::{KeyCode, KeyEvent, KeyModifiers};
use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;

use super::overlay::{OverlayFrame, ellipsize, fill};
use super::theme;
use crate::brief::{SessionBrief, order_briefs};

/// The longest filter kept: no session's number, name and directory together come near it.
const MAX_FILTER_CHARS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitcherOutcome {
    None,
    Close,
    /// Show the session with this number.
    Switch(u32),
}

pub struct Switcher {
    sessions: Vec<SessionBrief>,
    /// The session the terminal shows now, marked in the list.
    current: u32,
    filter: String,
    /// Indexes into `sessions` that match the filter, in list order.
    visible: Vec<usize>,
    /// Index into `visible`.
    selected: usize,
    matcher: Matcher,
}

impl Switcher {
    pub fn new(mut sessions: Vec<SessionBrief>, current: u32) -> Self {
        order_briefs(&mut sessions);
        let visible = (0..sessions.len()).collect();
        Self {
            sessions,
            current,
            filter: String::new(),
            visible,
            selected: 0,
            matcher: Matcher::new(Config::DEFAULT),
        }
    }

    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// The numbers of the sessions shown, in order.
    pub fn shown(&self) -> Vec<u32> {
        self.visible.iter().map(|&i| self.sessions[i].number).collect()
    }

    /// The number of the selected session, if any matches the filter.
    pub fn selected(&self) -> Option<u32> {
        self.visible.get(self.selected).map(|&i| self.sessions[i].number)
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> SwitcherOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return SwitcherOutcome::Close,
            KeyCode::Char('c') if ctrl => return SwitcherOutcome::Close,
            KeyCode::Enter => {
                return self
                    .selected()
                    .map_or(SwitcherOutcome::None, SwitcherOutcome::Switch);
            }
            KeyCode::Up => self.move_by(-1),
            KeyCode::Down => self.move_by(1),
            KeyCode::Char('u') if ctrl => self.set_filter(String::new()),
            KeyCode::Backspace => {
                let mut filter = self.filter.clone();
                filter.pop();
                self.set_filter(filter);
            }
            KeyCode::Char(c)
                if !ctrl
                    && !key.modifiers.contains(KeyModifiers::ALT)
                    && self.filter.chars().count() < MAX_FILTER_CHARS =>
            {
                let mut filter = self.filter.clone();
                filter.push(c);
                self.set_filter(filter);
            }
            _ => {}
        }
        SwitcherOutcome::None
    }

    fn move_by(&mut self, delta: isize) {
        let n = self.visible.len();
        if n > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        }
    }

    /// Filters by number, name and directory; the best match is selected.
    fn set_filter(&mut self, filter: String) {
        self.filter = filter;
        self.selected = 0;
        if self.filter.trim().is_empty() {
            self.visible = (0..self.sessions.len()).collect();
            return;
        }
        let pattern = Pattern::new(
            &self.filter,
            CaseMatching::Ignore,
            Normalization::Smart,
            AtomKind::Fuzzy,
        );
        let mut buf = Vec::new();
        let mut scored: Vec<(usize, u32)> = Vec::new();
        for (i, s) in self.sessions.iter().enumerate() {
            // Another machine's session is found by the label the list shows (`other:far`) too.
            let label = s
                .machine
                .as_deref()
                .map(|m| format!("{m}:{}", s.name))
                .unwrap_or_default();
            let haystack = format!(
                "{} {} {} {} {}",
                s.number,
                s.name,
                s.dir,
                s.branch.as_deref().unwrap_or(""),
                label
            );
            if let Some(score) = pattern.score(Utf32Str::new(&haystack, &mut buf), &mut self.matcher) {
                scored.push((i, score));
            }
        }
        self.visible = scored.iter().map(|(i, _)| *i).collect();
        // On a tie the first in the list.
        let best = scored
            .iter()
            .enumerate()
            .max_by_key(|(pos, (_, score))| (*score, std::cmp::Reverse(*pos)));
        self.selected = best.map_or(0, |(pos, _)| pos);
    }

    fn row(&self, index: usize, selected: bool, width: usize) -> Line<'static> {
        let s = &self.sessions[index];
        let mark = if selected { "▸ " } else { "  " };
        let here = if s.number == self.current { "*" } else { " " };
        let (number, name) = match &s.machine {
            Some(m) => (String::new(), format!("{m}:{}", s.name)),
            None => (s.number.to_string(), s.name.clone()),
        };
        let name = ellipsize(&name, 14);
        let state = ellipsize(&s.state, 30);
        let head = format!("{mark}{number:>2}{here} {name:<14} {state:<30} ");
        let place = match &s.branch {
            Some(b) => format!("[{b}{}] {}", if s.dirty == Some(true) { "*" } else { "" }, s.dir),
            None => s.dir.clone(),
        };
        let dir = ellipsize(&place, width.saturating_sub(head.chars().count()));
        let style = if selected {
            theme::accent()
        } else {
            super::side_sessions::tone(s.attention).style()
        };
        Line::from(vec![Span::styled(head, style), Span::styled(dir, theme::dim())])
    }
}

impl Widget for &Switcher {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(6).clamp(30, 100);
        let rows = self.visible.len().max(1);
        let inner = OverlayFrame::accent("Sessions").draw(area, width, rows + 4, buf);
        let inner_w = usize::from(inner.width);
        let mut lines = vec![
            Line::from(vec![
                Span::styled("> ", theme::key()),
                Span::raw(self.filter.clone()),
                Span::styled("▏", theme::accent()),
            ]),
            Line::default(),
        ];
        if self.visible.is_empty() {
            lines.push(Line::from(Span::styled("no session matches", theme::dim())));
        }
        // Keep the selection in view when the list is taller than the box.
        let room = usize::from(inner.height).saturating_sub(4).max(1);
        let skip = self.selected.saturating_sub(room - 1);
        for (pos, &i) in self.visible.iter().enumerate().skip(skip).take(room) {
            lines.push(self.row(i, pos == self.selected, inner_w));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "↑↓ move · Enter show · type to filter · Esc close",
            theme::dim(),
        )));
        fill(inner, &lines, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brief::Attention;

    fn brief(number: u32, name: &str, dir: &str, attention: Attention) -> SessionBrief {
        SessionBrief::new(number, name, dir, attention, "idle")
    }

    fn typed(s: &mut Switcher, text: &str) {
        for c in text.chars() {
            s.handle_key(KeyEvent::from(KeyCode::Char(c)));
        }
    }

    fn three() -> Switcher {
        Switcher::new(
            vec![
                brief(1, "api", "/src/api", Attention::Idle),
                brief(2, "web", "/src/web", Attention::Question),
                brief(3, "docs", "/src/docs", Attention::Working),
            ],
            1,
        )
    }

    #[test]
    fn the_list_puts_the_sessions_needing_the_user_first_and_enter_picks_the_selected() {
        let mut s = three();
        assert_eq!(s.shown(), vec![2, 3, 1]);
        assert_eq!(s.handle_key(KeyEvent::from(KeyCode::Down)), SwitcherOutcome::None);
        assert_eq!(
            s.handle_key(KeyEvent::from(KeyCode::Enter)),
            SwitcherOutcome::Switch(3)
        );
        s.handle_key(KeyEvent::from(KeyCode::Up));
        s.handle_key(KeyEvent::from(KeyCode::Up));
        assert_eq!(s.selected(), Some(1), "moving wraps around");
    }

    #[test]
    fn typing_filters_by_name_or_directory_and_an_empty_result_submits_nothing() {
        let mut s = three();
        typed(&mut s, "doc");
        assert_eq!(s.shown(), vec![3]);
        s.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(s.shown(), vec![2, 3, 1]);
        typed(&mut s, "zzz");
        assert!(s.shown().is_empty());
        assert_eq!(
            s.handle_key(KeyEvent::from(KeyCode::Enter)),
            SwitcherOutcome::None
        );
        s.handle_key(KeyEvent::from(KeyCode::Backspace));
        assert_eq!(s.filter(), "zz");
        assert_eq!(s.handle_key(KeyEvent::from(KeyCode::Esc)), SwitcherOutcome::Close);
    }

    #[test]
    fn another_machines_session_is_found_by_the_label_the_list_shows() {
        let mut far = brief(2, "far", "/tmp/pokeshell-pi-ZAYkdJ/work", Attention::Idle);
        far.machine = Some("other".into());
        // "far" alone also matches this directory (F…A…r); the label picks one.
        let here = brief(1, "work", "/tmp/pokeshell-pi-FUCRAq/work", Attention::Idle);
        let mut s = Switcher::new(vec![here, far], 1);
        typed(&mut s, "far");
        assert_eq!(s.shown().len(), 2, "both match the bare name");
        s.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        typed(&mut s, "other:far");
        assert_eq!(s.shown(), vec![2]);
    }

    #[test]
    fn a_session_shows_its_branch_and_is_found_by_it() {
        let mut w = brief(4, "login", "/src/app-worktrees/feat/login", Attention::Idle);
        (w.branch, w.dirty) = (Some("feat/login".into()), Some(true));
        let mut s = Switcher::new(vec![brief(1, "api", "/src/api", Attention::Idle), w], 1);
        let row: String = s
            .row(1, false, 100)
            .spans
            .iter()
            .map(|x| x.content.as_ref())
            .collect();
        assert!(
            row.ends_with("[feat/login*] /src/app-worktrees/feat/login"),
            "{row}"
        );
        typed(&mut s, "feat/log");
        assert_eq!(s.shown(), vec![4]);
    }
}
