//! The wait after a provider error [LIMIT-W1, LIMIT-R1]: pi's own retries did not get past an error,
//! so pokeshell waits until the provider's reset time (or a step of the backoff ladder) and then
//! resumes the agent. The wait is persisted as session entries so a restarted pokeshell re-arms it.

use serde_json::{Value, json};

use super::event::CustomEntry;
use super::limit::{ErrorKind, ResumeSource};
use super::texts;

/// What a wait's kind is called in texts and the side pane.
pub fn kind_label(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::RateLimit => "rate limit",
        ErrorKind::Overloaded => "overload",
        ErrorKind::ServerError => "server error",
        ErrorKind::Network => "network error",
        ErrorKind::UsageLimit => "usage limit",
        ErrorKind::Fatal => "error",
        ErrorKind::Unknown => "provider error",
    }
}

fn kind_from_label(label: &str) -> ErrorKind {
    [
        ErrorKind::RateLimit,
        ErrorKind::Overloaded,
        ErrorKind::ServerError,
        ErrorKind::Network,
        ErrorKind::UsageLimit,
    ]
    .into_iter()
    .find(|kind| kind_label(*kind) == label)
    .unwrap_or(ErrorKind::Unknown)
}

/// The first line of an error text, cut to a readable length.
pub fn first_line(error: &str) -> String {
    const MAX_CHARS: usize = 160;
    let line = error
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    let mut cut: String = line.chars().take(MAX_CHARS).collect();
    if line.chars().count() > MAX_CHARS {
        cut.push('…');
    }
    cut
}

/// One planned resume.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LimitWait {
    pub kind: ErrorKind,
    pub error_line: String,
    /// When the wait began (wall ms), for the resume's text.
    pub armed_wall: u64,
    pub at_wall: u64,
    pub due_mono: u64,
    pub source: ResumeSource,
}

#[derive(Debug, Default)]
pub(crate) struct ProviderWaits {
    wait: Option<LimitWait>,
    /// Resumes sent in this streak of provider errors (the ladder's `attempt`).
    streak: u32,
}

impl ProviderWaits {
    pub(crate) fn wait(&self) -> Option<&LimitWait> {
        self.wait.as_ref()
    }

    pub(crate) fn streak(&self) -> u32 {
        self.streak
    }

    /// Arms a wait; returns the entry that persists it.
    pub(crate) fn arm(&mut self, wait: LimitWait) -> Value {
        let entry = json!({
            "atMs": wait.at_wall,
            "kind": kind_label(wait.kind),
            "error": wait.error_line,
            "attempt": self.streak,
            "armedMs": wait.armed_wall,
            "fromHint": wait.source == ResumeSource::Hint,
        });
        self.wait = Some(wait);
        entry
    }

    /// The wait is over (resumed) or gone (cancelled); returns it.
    pub(crate) fn take(&mut self) -> Option<LimitWait> {
        self.wait.take()
    }

    /// The resume moves to another time (the circuit breaker's staggered resume, GUARD-K3).
    pub(crate) fn reschedule(&mut self, due_mono: u64, at_wall: u64) {
        if let Some(wait) = &mut self.wait {
            wait.due_mono = due_mono;
            wait.at_wall = at_wall;
        }
    }

    pub(crate) fn count_resume(&mut self) {
        self.streak += 1;
    }

    /// A run that ended well, or the user: the streak is over.
    pub(crate) fn end_streak(&mut self) {
        self.streak = 0;
    }

    /// Forgets the timer (shutdown); the entry brings it back at the next session start.
    pub(crate) fn drop_timer(&mut self) {
        self.wait = None;
    }

    /// LIMIT-R1: the last `pokeshell-limit-wait` entry not followed by a `pokeshell-limit-done`.
    pub(crate) fn restore(
        &mut self,
        entries: &[CustomEntry],
        now_mono: u64,
        now_wall: u64,
    ) -> Option<&LimitWait> {
        let mut pending: Option<&Value> = None;
        for entry in entries {
            match entry.custom_type.as_str() {
                texts::ENTRY_LIMIT_WAIT => pending = Some(&entry.data),
                texts::ENTRY_LIMIT_DONE => pending = None,
                _ => {}
            }
        }
        self.wait = None;
        self.streak = 0;
        let data = pending?;
        let at_wall = data.get("atMs").and_then(Value::as_u64)?;
        let kind = kind_from_label(data.get("kind").and_then(Value::as_str).unwrap_or_default());
        let error_line = data
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let source = if data.get("fromHint").and_then(Value::as_bool) == Some(true) {
            ResumeSource::Hint
        } else {
            ResumeSource::Ladder
        };
        self.streak = data
            .get("attempt")
            .and_then(Value::as_u64)
            .and_then(|attempt| u32::try_from(attempt).ok())
            .unwrap_or(0);
        let armed_wall = data.get("armedMs").and_then(Value::as_u64).unwrap_or(at_wall);
        self.wait = Some(LimitWait {
            kind,
            error_line,
            armed_wall,
            at_wall,
            due_mono: now_mono.saturating_add(at_wall.saturating_sub(now_wall)),
            source,
        });
        self.wait.as_ref()
    }
}

/// `0:24`, `12:05`, `1:02:05`.
pub fn countdown(remaining_ms: u64) -> String {
    let total = remaining_ms.div_ceil(1000);
    let (hours, minutes, seconds) = (total / 3600, (total / 60) % 60, total % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes}:{seconds:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdown_reads_m_ss_then_h_mm_ss_rounding_up() {
        assert_eq!(countdown(24_000), "0:24");
        assert_eq!(countdown(23_001), "0:24", "a started second still counts");
        assert_eq!(countdown(0), "0:00");
        assert_eq!(countdown(725_000), "12:05");
        assert_eq!(countdown(3_725_000), "1:02:05");
    }

    #[test]
    fn first_line_skips_blank_lines_and_cuts_long_ones() {
        assert_eq!(first_line("\n  429: too many\nmore"), "429: too many");
        let long = "x".repeat(500);
        let cut = first_line(&long);
        assert_eq!(cut.chars().count(), 161);
        assert!(cut.ends_with('…'));
        assert_eq!(first_line(""), "");
    }

    #[test]
    fn a_kind_survives_its_label_round_trip() {
        for kind in [
            ErrorKind::RateLimit,
            ErrorKind::Overloaded,
            ErrorKind::ServerError,
            ErrorKind::Network,
            ErrorKind::UsageLimit,
        ] {
            assert_eq!(kind_from_label(kind_label(kind)), kind);
        }
        assert_eq!(kind_from_label("nonsense"), ErrorKind::Unknown);
    }
}
