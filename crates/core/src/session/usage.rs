//! What a session spent: tokens and cost from pi's usage reports (each assistant reply's
//! `message_end`), for the last run and since pokeshell started the session, and the one-time
//! warning when the session's cost passes `pokeshell.costWarnUsd`.

use super::{Effect, Session};
use crate::bridge::TokenUsage;
use crate::supervisor::guard::circuit::GuardNote;
use crate::supervisor::{self as sup, Now};
use crate::ui::theme::Tone;

pub use crate::brief::{Spend, dollars, tokens};

impl Spend {
    fn add(&mut self, u: &TokenUsage) {
        self.input = self.input.saturating_add(u.input);
        self.output = self.output.saturating_add(u.output);
        self.cache_read = self.cache_read.saturating_add(u.cache_read);
        self.cache_write = self.cache_write.saturating_add(u.cache_write);
        if let Some(cost) = u.cost_usd.filter(|c| c.is_finite() && *c > 0.0) {
            self.cost_usd += cost;
            self.priced = true;
        }
        self.replies += 1;
    }
}

/// The session's spend, and the warning already given.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Tally {
    /// The run going on, or the last one (since pi's last `agent_start`).
    pub run: Spend,
    /// Since pokeshell started the session, across relaunches of pi.
    pub session: Spend,
    /// The threshold (millionths of a dollar) already warned about: once per value.
    warned_for: Option<u64>,
}

impl Tally {
    pub fn run_started(&mut self) {
        self.run = Spend::default();
    }

    /// Counts one reply; `Some(text)` when the session's cost just passed `warn_micros` (0: never)
    /// for the first time.
    pub fn add(&mut self, u: &TokenUsage, warn_micros: u64) -> Option<String> {
        self.run.add(u);
        self.session.add(u);
        let cost = self.session.cost()?;
        let passed = warn_micros > 0 && cost * 1e6 > warn_micros as f64;
        if !passed || self.warned_for == Some(warn_micros) {
            return None;
        }
        self.warned_for = Some(warn_micros);
        Some(format!(
            "this session has cost {}, past your warning at {}",
            dollars(cost),
            dollars(warn_micros as f64 / 1e6)
        ))
    }
}

impl Session {
    /// An assistant reply's usage: counted, and the cost warning given once when it is passed.
    pub(super) fn on_usage(&mut self, u: &TokenUsage, now: Now, fx: &mut Vec<Effect>) {
        let effective = self.settings.get().effective();
        let display = effective.display;
        let warning = self.usage.add(u, display.cost_warn_micros);
        // The day's budget across sessions is the server's core's to sum (GUARD-B2).
        if let Some(usd) = u.cost_usd.filter(|c| c.is_finite() && *c > 0.0) {
            fx.push(Effect::Guard(GuardNote::Spent {
                usd,
                daily_limit_usd: effective.guard.daily_budget_usd,
                utc_offset_secs: self.utc_offset_secs,
            }));
        }
        // The session's budget and the call cap (GUARD-B1, GUARD-C1).
        let session_cost_usd = self.usage.session.cost();
        self.supervise(sup::Event::ModelCall { session_cost_usd }, now, fx);
        if let Some(text) = warning {
            let who = if self.opts.spec.name.is_empty() {
                "pi"
            } else {
                &self.opts.spec.name
            };
            let text = format!("{who}: {text}");
            self.flash.show(text.clone(), Tone::Warn, now);
            fx.push(Effect::Notify {
                text,
                bell: display.bell,
                desktop: display.notifications,
            });
        }
        fx.push(Effect::Redraw);
    }

    /// What the session spent so far, as the side pane, the status overlay and `ls` show it.
    pub fn spend(&self) -> (Spend, Spend) {
        (self.usage.run, self.usage.session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(input: u64, output: u64, cost: Option<f64>) -> TokenUsage {
        TokenUsage {
            input,
            output,
            cache_read: 100,
            cache_write: 0,
            cost_usd: cost,
        }
    }

    #[test]
    fn runs_and_the_session_are_summed_apart() {
        let mut t = Tally::default();
        t.add(&reply(1000, 200, Some(0.01)), 0);
        t.add(&reply(3000, 400, Some(0.02)), 0);
        t.run_started();
        t.add(&reply(500, 50, Some(0.005)), 0);
        assert_eq!((t.run.input, t.run.output, t.run.replies), (500, 50, 1));
        assert_eq!(
            (t.session.input, t.session.output, t.session.cache_read),
            (4500, 650, 300)
        );
        assert!((t.session.cost_usd - 0.035).abs() < 1e-12);
        assert_eq!(t.session.line(), "4.5k in · 650 out · 300 cached · $0.0350");
        assert_eq!(
            t.session.short(),
            "4.8k/650 · $0.0350",
            "cache reads are input too"
        );
    }

    #[test]
    fn a_model_without_prices_shows_no_cost_rather_than_free() {
        let mut t = Tally::default();
        t.add(&reply(10, 5, Some(0.0)), 1);
        t.add(&reply(10, 5, None), 1);
        assert_eq!(t.session.cost(), None);
        assert_eq!(t.session.line(), "20 in · 10 out · 200 cached");
    }

    #[test]
    fn the_cost_warning_comes_once_per_threshold() {
        let mut t = Tally::default();
        let warn = 50_000; // $0.05
        assert_eq!(t.add(&reply(1, 1, Some(0.03)), warn), None, "below");
        assert_eq!(
            t.add(&reply(1, 1, Some(0.02)), warn),
            None,
            "at it is not past it"
        );
        let text = t.add(&reply(1, 1, Some(0.01)), warn).expect("past it");
        assert!(text.contains("$0.0600") && text.contains("$0.0500"), "{text}");
        assert_eq!(t.add(&reply(1, 1, Some(0.5)), warn), None, "only once");
        assert!(
            t.add(&reply(1, 1, Some(0.01)), 100_000).is_some(),
            "a new threshold, passed"
        );
        assert_eq!(t.add(&reply(1, 1, Some(5.0)), 0), None, "0 never warns");
    }

    #[test]
    fn counts_read_at_a_glance() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(456_789), "456k");
        assert_eq!(tokens(4_100_000), "4.1M");
        assert_eq!(dollars(0.00421), "$0.0042");
        assert_eq!(dollars(12.345), "$12.35");
    }
}
