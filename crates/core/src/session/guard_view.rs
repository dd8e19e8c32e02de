//! The side pane's guard-rails section: what the rails did, and a pause with its two answers. Shown
//! only once a rail acted (a quiet session's side pane stays as it was).

use ratatui_core::text::{Line, Span};

use crate::brief::dollars;
use crate::supervisor::guard::texts::{ALLOW_KEY, LEAVE_KEY};
use crate::supervisor::view::GuardView;
use crate::ui::side::Section;
use crate::ui::theme::{self, Tone};

fn toned(text: impl Into<String>, tone: Tone) -> Line<'static> {
    Line::from(Span::styled(text.into(), tone.style()))
}

fn kv(key: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{key:<8}"), theme::dim()),
        Span::raw(value),
    ])
}

/// The section, when there is something to show.
pub(super) fn guard_section(guard: &GuardView) -> Option<Section> {
    let acted = guard.halt.is_some() || guard.daily.is_some() || guard.last.is_some();
    if !acted {
        return None;
    }
    let mut lines = Vec::new();
    if let Some(halt) = &guard.halt {
        lines.push(toned(format!("⛔ {}", halt.cause.state()), Tone::Error));
        lines.push(toned(
            format!(
                "  {ALLOW_KEY} {} · {LEAVE_KEY} leave it stopped",
                halt.offer.label()
            ),
            Tone::Warn,
        ));
    }
    if let Some(daily) = guard.daily {
        lines.push(kv(
            "today",
            format!(
                "{} of {} spent",
                dollars(daily.spent_usd),
                dollars(daily.limit_usd)
            ),
        ));
    }
    if let Some(limit) = guard.budget_usd {
        lines.push(kv(
            "budget",
            format!("{} of {}", dollars(guard.spent_usd), dollars(limit)),
        ));
    }
    if guard.max_calls > 0 {
        lines.push(kv(
            "calls",
            format!("{}/{} since you typed", guard.calls, guard.max_calls),
        ));
    }
    if guard.ladder > 0 {
        lines.push(kv("ladder", format!("rung {} of 3 taken", guard.ladder)));
    }
    if let Some((rule, evidence)) = &guard.last {
        lines.push(toned(format!("{rule}: {evidence}"), Tone::Dim));
    }
    Some(Section {
        title: "guard rails".into(),
        lines,
    })
}
