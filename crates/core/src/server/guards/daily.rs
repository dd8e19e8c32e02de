//! The day's budget across every session of the server [GUARD-B2]: sessions report what each priced
//! reply cost; the core sums them per local day (the person's, by the offset the sessions report) and,
//! once the sum reaches `pokeshell.dailyBudgetUsd` plus what the person allowed today, tells every
//! session to stop and pause. More allowed, or a new day, lifts it; nothing stopped is resumed by a new
//! day on its own.

use super::DailyState;

const DAY_MS: i64 = 86_400_000;

/// The person's local day number at `wall_ms`.
pub fn local_day(wall_ms: u64, utc_offset_secs: i32) -> i64 {
    let local = i64::try_from(wall_ms).unwrap_or(i64::MAX / 2) + i64::from(utc_offset_secs) * 1000;
    local.div_euclid(DAY_MS)
}

fn micros(usd: f64) -> u64 {
    if usd.is_finite() && usd > 0.0 {
        (usd * 1e6).round() as u64
    } else {
        0
    }
}

#[derive(Debug, Default)]
pub struct DailyBudget {
    day: Option<i64>,
    spent_usd: f64,
    allowed_usd: f64,
    /// The budget as the last report said (0: none).
    limit_usd: f64,
    utc_offset_secs: i32,
    /// The sessions were told the budget is spent.
    over: bool,
}

impl DailyBudget {
    /// The day's budget while it is spent.
    pub fn state(&self) -> Option<DailyState> {
        self.over.then_some(DailyState {
            spent_usd: self.spent_usd,
            limit_usd: self.limit_usd + self.allowed_usd,
        })
    }

    pub fn spent_today(&self) -> f64 {
        self.spent_usd
    }

    /// Whether the sessions' state changed with this update: then every session is told.
    fn settle(&mut self) -> Option<Option<DailyState>> {
        let limit = self.limit_usd + self.allowed_usd;
        let over = micros(self.limit_usd) > 0 && micros(self.spent_usd) >= micros(limit);
        (over != self.over).then(|| {
            self.over = over;
            self.state()
        })
    }

    /// A new local day starts the sum and the allowance again.
    pub fn roll(&mut self, wall_ms: u64) -> Option<Option<DailyState>> {
        let today = local_day(wall_ms, self.utc_offset_secs);
        if self.day == Some(today) {
            return None;
        }
        self.day = Some(today);
        self.spent_usd = 0.0;
        self.allowed_usd = 0.0;
        self.settle()
    }

    /// A priced reply of some session.
    pub fn spent(
        &mut self,
        usd: f64,
        limit_usd: f64,
        utc_offset_secs: i32,
        wall_ms: u64,
    ) -> Option<Option<DailyState>> {
        self.utc_offset_secs = utc_offset_secs;
        let rolled = self.roll(wall_ms);
        if usd.is_finite() && usd > 0.0 {
            self.spent_usd += usd;
        }
        if limit_usd.is_finite() && limit_usd >= 0.0 {
            self.limit_usd = limit_usd;
        }
        self.settle().or(rolled)
    }

    /// The person allowed `usd` more today.
    pub fn allow(&mut self, usd: f64, wall_ms: u64) -> Option<Option<DailyState>> {
        let rolled = self.roll(wall_ms);
        if usd.is_finite() && usd > 0.0 {
            self.allowed_usd += usd;
        }
        self.settle().or(rolled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOON: u64 = 1_767_268_800_000; // 2026-01-01 12:00 UTC

    #[test]
    fn guard_b2_the_sessions_spend_adds_up_to_the_days_budget_once() {
        let mut d = DailyBudget::default();
        assert_eq!(d.spent(0.2, 0.5, 0, NOON), None);
        assert_eq!(
            d.spent(0.2, 0.5, 0, NOON + 1000),
            None,
            "another session, $0.40 in all"
        );
        let told = d.spent(0.1, 0.5, 0, NOON + 2000);
        let state = told.expect("the sessions are told").expect("spent");
        assert!(
            (state.spent_usd - 0.5).abs() < 1e-9 && state.limit_usd == 0.5,
            "{state:?}"
        );
        assert_eq!(
            d.spent(0.1, 0.5, 0, NOON + 3000),
            None,
            "told once, not at every reply"
        );
        assert!(d.state().is_some());
    }

    #[test]
    fn guard_b2_healthy_twin_a_day_under_its_budget_and_no_budget_tell_nothing() {
        let mut d = DailyBudget::default();
        for i in 0..10 {
            assert_eq!(d.spent(0.04, 0.5, 0, NOON + i), None);
        }
        let mut none = DailyBudget::default();
        for i in 0..10 {
            assert_eq!(none.spent(100.0, 0.0, 0, NOON + i), None, "0 is no daily budget");
        }
    }

    #[test]
    fn guard_a1_allowing_more_lifts_the_days_pause_until_that_is_spent_too() {
        let mut d = DailyBudget::default();
        d.spent(1.0, 1.0, 0, NOON);
        assert_eq!(d.allow(0.5, NOON + 1), Some(None), "lifted");
        assert_eq!(d.spent(0.4, 1.0, 0, NOON + 2), None);
        let again = d.spent(0.1, 1.0, 0, NOON + 3).expect("told").expect("spent");
        assert_eq!(again.limit_usd, 1.5);
    }

    #[test]
    fn guard_b2_a_new_local_day_starts_again_and_lifts_the_pause() {
        let mut d = DailyBudget::default();
        // 23:30 at UTC+2 is 21:30 UTC; 00:30 the next local day is 22:30 UTC.
        let late = NOON + 9 * 3_600_000 + 30 * 60_000;
        assert!(d.spent(2.0, 1.0, 7200, late).is_some());
        assert_eq!(local_day(late, 7200) + 1, local_day(late + 3_600_000, 7200));
        assert_eq!(d.roll(late + 3_600_000), Some(None), "a new day: lifted");
        assert_eq!(d.spent_today(), 0.0);
        assert_eq!(local_day(0, -3600), -1, "before the epoch in local time");
    }
}
