//! What a session may spend without its person [GUARD-B1, GUARD-C1]: the session's cost against
//! `pokeshell.budgetUsd` (plus what the person allowed since), and the model calls made since the
//! person's last word against `pokeshell.maxCallsPerRun` (models pi has no prices for report a cost of
//! 0, so only a count protects those). Pure bookkeeping: the supervisor decides what to do.

/// Money is compared in millionths of a dollar, so that a budget of $0.30 is reached by three replies
/// of $0.10 however the floating-point sum rounds.
fn micros(usd: f64) -> u64 {
    if usd.is_finite() && usd > 0.0 {
        (usd * 1e6).round() as u64
    } else {
        0
    }
}

/// The budget reached: what was spent, and the limit it reached (the budget plus what was allowed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reached {
    pub spent_usd: f64,
    pub limit_usd: f64,
}

#[derive(Debug, Default)]
pub struct SpendRail {
    /// The session's cost so far, as pi priced its replies (the session sums them).
    spent_usd: f64,
    /// What the person allowed beyond the budget.
    allowed_usd: f64,
    /// Model calls since the person's last word.
    calls: u32,
}

impl SpendRail {
    /// One model call finished; `session_cost_usd` is the session's whole cost after it, when pi priced
    /// any reply.
    pub fn call(&mut self, session_cost_usd: Option<f64>) {
        self.calls = self.calls.saturating_add(1);
        if let Some(cost) = session_cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
            self.spent_usd = cost;
        }
    }

    /// The budget in force: `budget_usd` (0: none) plus what the person allowed.
    pub fn limit_usd(&self, budget_usd: f64) -> Option<f64> {
        (micros(budget_usd) > 0).then_some(budget_usd + self.allowed_usd)
    }

    /// Whether the session has spent its budget (at it counts as reached: the next reply would pass it).
    pub fn reached(&self, budget_usd: f64) -> Option<Reached> {
        let limit_usd = self.limit_usd(budget_usd)?;
        (micros(self.spent_usd) >= micros(limit_usd)).then_some(Reached {
            spent_usd: self.spent_usd,
            limit_usd,
        })
    }

    pub fn spent_usd(&self) -> f64 {
        self.spent_usd
    }

    /// The person allowed `usd` more.
    pub fn allow_usd(&mut self, usd: f64) {
        if usd.is_finite() && usd > 0.0 {
            self.allowed_usd += usd;
        }
    }

    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// Whether the calls since the person's last word reached `cap` (0: no cap).
    pub fn calls_reached(&self, cap: u32) -> bool {
        cap > 0 && self.calls >= cap
    }

    /// The person spoke (typed, or allowed more calls): the count starts again.
    pub fn reset_calls(&mut self) {
        self.calls = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_b1_the_budget_is_reached_at_its_value_not_a_cent_later() {
        let mut rail = SpendRail::default();
        for cost in [0.1, 0.2] {
            rail.call(Some(cost));
            assert_eq!(rail.reached(0.3), None, "below at ${cost}");
        }
        // Three replies of $0.10 sum to 0.30000000000000004 in floating point: reached, not passed.
        rail.call(Some(0.1 + 0.1 + 0.1));
        assert_eq!(
            rail.reached(0.3),
            Some(Reached {
                spent_usd: 0.1 + 0.1 + 0.1,
                limit_usd: 0.3
            })
        );
    }

    #[test]
    fn guard_b1_healthy_twin_a_session_under_its_budget_and_a_budget_of_0_are_left_alone() {
        let mut rail = SpendRail::default();
        for cost in [0.05, 0.10, 0.29] {
            rail.call(Some(cost));
        }
        assert_eq!(rail.reached(0.3), None, "under the budget");
        assert_eq!(rail.reached(0.0), None, "0 is no budget");
        rail.call(Some(500.0));
        assert_eq!(rail.reached(0.0), None, "0 is no budget, whatever was spent");
    }

    #[test]
    fn guard_b1_an_unpriced_reply_keeps_the_last_known_cost() {
        let mut rail = SpendRail::default();
        rail.call(Some(0.2));
        rail.call(None);
        rail.call(Some(f64::NAN));
        assert_eq!(rail.spent_usd(), 0.2);
        assert_eq!(rail.calls(), 3, "each is a call all the same");
    }

    #[test]
    fn guard_a1_allowing_more_moves_the_limit_up_by_that_much() {
        let mut rail = SpendRail::default();
        rail.call(Some(1.0));
        assert!(rail.reached(1.0).is_some());
        rail.allow_usd(0.5);
        assert_eq!(rail.limit_usd(1.0), Some(1.5));
        assert_eq!(rail.reached(1.0), None);
        rail.call(Some(1.5));
        assert!(rail.reached(1.0).is_some(), "the allowance is spent too");
        rail.allow_usd(-3.0);
        rail.allow_usd(f64::INFINITY);
        assert_eq!(rail.limit_usd(1.0), Some(1.5), "nonsense allows nothing");
    }

    #[test]
    fn guard_c1_the_call_cap_counts_since_the_persons_word() {
        let mut rail = SpendRail::default();
        for _ in 0..2 {
            rail.call(Some(0.0));
        }
        assert!(!rail.calls_reached(3));
        rail.call(Some(0.0));
        assert!(rail.calls_reached(3), "the third call reaches a cap of 3");
        assert!(!rail.calls_reached(0), "0 is no cap");
        rail.reset_calls();
        assert!(!rail.calls_reached(3), "the person's word starts the count again");
        assert_eq!(rail.calls(), 0);
    }
}
