//! pi's own status reports (OSC 7501) as a second source of its state: when the bridge is not
//! connected (the extension failed to load, an older pi), the side pane and the status overlay still
//! say whether pi is working, waiting for the user, done, failed or idle.

use ratatui_core::text::Line;

use super::Session;
use super::view::BridgeStatus;
use crate::screen::{ProgramState, ProgramStatus};
use crate::ui::theme::Tone;
use ratatui_core::text::Span;

/// pi's state in words, from its report.
pub fn state_words(status: &ProgramStatus) -> String {
    let state = match status.state {
        ProgramState::Working => "working",
        ProgramState::Blocked => "waiting for you",
        ProgramState::Done => "done",
        ProgramState::Error => "error",
        ProgramState::Idle => "idle",
        ProgramState::Clear => "no status",
    };
    match (&status.kind, &status.msg) {
        (Some(kind), _) if status.state == ProgramState::Blocked => format!("{state} ({kind})"),
        (_, Some(msg)) if status.state == ProgramState::Error => format!("{state}: {msg}"),
        _ => state.to_string(),
    }
}

fn tone(state: ProgramState) -> Tone {
    match state {
        ProgramState::Working => Tone::Ok,
        ProgramState::Blocked => Tone::Warn,
        ProgramState::Error => Tone::Error,
        ProgramState::Done | ProgramState::Idle | ProgramState::Clear => Tone::Dim,
    }
}

impl Session {
    /// Which source tells pi's state: the bridge when it is connected, else pi's status reports.
    pub(super) fn state_source(&self) -> &'static str {
        match (&self.pi.status, &self.pi.program_status) {
            (BridgeStatus::Connected, _) => "the bridge",
            (_, Some(_)) => "pi's status reports (OSC 7501)",
            _ => "none",
        }
    }

    /// The side pane's state line from pi's own report, when the bridge cannot tell.
    pub(super) fn reported_state(&self) -> Option<Line<'static>> {
        if self.pi.status == BridgeStatus::Connected {
            return None;
        }
        let status = self.pi.program_status.as_ref()?;
        Some(Line::from(vec![
            Span::styled(format!("● {}", state_words(status)), tone(status.state).style()),
            Span::styled(" (pi's report)", crate::ui::theme::dim()),
        ]))
    }

    /// The footer's suffix from pi's own report, when the bridge cannot tell.
    pub(super) fn reported_suffix(&self) -> Option<(String, Tone)> {
        if self.pi.status == BridgeStatus::Connected {
            return None;
        }
        let status = self.pi.program_status.as_ref()?;
        (status.state != ProgramState::Clear)
            .then(|| (format!("pi: {}", state_words(status)), tone(status.state)))
    }

    /// What the side pane says about restarts of pi.
    pub(super) fn restart_lines(&self) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if let Some((text, tone)) = &self.watch.last {
            lines.push(Line::from(Span::styled(text.clone(), tone.style())));
        }
        let total = self.watch.total();
        if total > 0 {
            lines.push(Line::from(vec![
                Span::styled(format!("{:<8}", "restarts"), crate::ui::theme::dim()),
                Span::raw(total.to_string()),
            ]));
        }
        lines
    }
}
