//! A session paused by a guard rail [GUARD-B1, GUARD-B2, GUARD-C1, GUARD-E3]: its run was stopped,
//! pokeshell sends nothing on its own, and the person is asked to allow a stated amount more or to
//! leave it stopped [GUARD-A1, GUARD-A2].

use super::ladder::Repeat;
use crate::brief::dollars;

/// Why a session is paused.
#[derive(Clone, Debug, PartialEq)]
pub enum HaltCause {
    /// GUARD-B1: the session's budget.
    Budget { spent_usd: f64, limit_usd: f64 },
    /// GUARD-B2: the day's budget across every session of the server.
    Daily { spent_usd: f64, limit_usd: f64 },
    /// GUARD-C1: the model calls since the person's last word.
    Calls { calls: u32, cap: u32 },
    /// GUARD-E3: the top of the escalation ladder.
    Runaway(Repeat),
}

impl HaltCause {
    pub fn rule(&self) -> &'static str {
        use crate::supervisor::ledger::rule;
        match self {
            HaltCause::Budget { .. } => rule::GUARD_BUDGET,
            HaltCause::Daily { .. } => rule::GUARD_DAILY,
            HaltCause::Calls { .. } => rule::GUARD_CALLS,
            HaltCause::Runaway(_) => rule::GUARD_STEP_STOP,
        }
    }

    /// The state in a few words, for the brief (`ls`, the web view, the side pane's list).
    pub fn state(&self) -> String {
        match self {
            HaltCause::Budget { spent_usd, limit_usd } => format!(
                "paused by its budget: {} of {}",
                dollars(*spent_usd),
                dollars(*limit_usd)
            ),
            HaltCause::Daily { spent_usd, limit_usd } => format!(
                "paused by the daily budget: {} of {} today",
                dollars(*spent_usd),
                dollars(*limit_usd)
            ),
            HaltCause::Calls { calls, cap } => {
                format!("paused: {calls} model calls since your last word (cap {cap})")
            }
            HaltCause::Runaway(repeat) => format!("paused: {}", repeat.evidence()),
        }
    }

    /// The footer's short word for it.
    pub fn footer(&self) -> &'static str {
        match self {
            HaltCause::Budget { .. } => "⛔ budget",
            HaltCause::Daily { .. } => "⛔ daily budget",
            HaltCause::Calls { .. } => "⛔ call cap",
            HaltCause::Runaway(_) => "⛔ runaway",
        }
    }
}

/// What "allow more" grants for a pause.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Allowance {
    /// This many US dollars more (the session's or the day's budget).
    Usd(f64),
    /// This many model calls more.
    Calls(u32),
    /// Go on once more, the ladder back at its foot.
    GoOn,
}

impl Allowance {
    /// "allow $20.00 more", "allow 400 more calls", "let it go on".
    pub fn label(self) -> String {
        match self {
            Allowance::Usd(usd) => format!("allow {} more", dollars(usd)),
            Allowance::Calls(calls) => format!("allow {calls} more calls"),
            Allowance::GoOn => "let it go on".to_string(),
        }
    }
}

/// A pause: why, whether it stopped a run under way (allowing more then resumes it), since when.
#[derive(Clone, Debug, PartialEq)]
pub struct Halt {
    pub cause: HaltCause,
    /// What "allow more" would grant, as offered to the person.
    pub offer: Allowance,
    pub stopped_run: bool,
    pub since_wall_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_b1_b2_c1_each_pause_says_why_in_the_brief_and_the_footer() {
        let budget = HaltCause::Budget {
            spent_usd: 20.004,
            limit_usd: 20.0,
        };
        assert_eq!(budget.state(), "paused by its budget: $20.00 of $20.00");
        assert_eq!(budget.rule(), "GUARD-B1");
        let daily = HaltCause::Daily {
            spent_usd: 0.51,
            limit_usd: 0.5,
        };
        assert_eq!(
            daily.state(),
            "paused by the daily budget: $0.5100 of $0.5000 today"
        );
        assert_eq!(daily.rule(), "GUARD-B2");
        let calls = HaltCause::Calls { calls: 400, cap: 400 };
        assert!(calls.state().contains("400 model calls"));
        assert_eq!(calls.footer(), "⛔ call cap");
        assert_eq!(Allowance::Usd(20.0).label(), "allow $20.00 more");
        assert_eq!(Allowance::Calls(400).label(), "allow 400 more calls");
    }
}
