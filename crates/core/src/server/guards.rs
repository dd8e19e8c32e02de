//! The guard rails that span sessions, as the server's core keeps them (docs/supervision.md, "Guard
//! rails"): the day's budget across every session (`daily`, GUARD-B2) and the circuit breaker that
//! makes sessions meeting the same provider failure wait out one countdown and probe one at a time
//! (`breaker`, GUARD-K1..K3). Sessions tell the core what they meet ([`GuardNote`]); the core answers
//! with what each must do ([`GuardOrder`]). Pure: events and the time in, orders out.

pub mod breaker;
pub mod daily;

pub use crate::supervisor::guard::DailyState;

/// What a session tells the core.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardNote {
    /// A reply pi priced: its cost, the day's budget as the session's settings have it
    /// (`pokeshell.dailyBudgetUsd`, 0: none), and the person's offset from UTC (the day is theirs).
    Spent {
        usd: f64,
        daily_limit_usd: f64,
        utc_offset_secs: i32,
    },
    /// GUARD-A1 on the day's pause: the person allowed this much more today.
    DailyAllow { usd: f64 },
    /// GUARD-A2 on the day's pause: the person leaves the sessions stopped.
    DailyLeave,
    /// GUARD-K1: a run ended on a provider failure (`key`: provider and kind) and its resume is
    /// planned at `until_wall_ms`.
    Failed { key: String, until_wall_ms: u64 },
    /// The session got past the failure: its probe, or a poke by hand, went through.
    Recovered { key: String },
    /// The session no longer waits on the failure (the person typed, the wait was cancelled).
    Left { key: String },
}

/// What the core tells a session.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardOrder {
    /// The day's budget across sessions: spent (`Some`), or no longer (`None`: more was allowed, or a
    /// new day began).
    Daily(Option<DailyState>),
    /// The person answered the day's pause by leaving the sessions stopped: the question is gone,
    /// the budget still spent.
    DailyAnswered,
    /// GUARD-K1: do not resume on your own; session `prober` probes when the shared countdown ends
    /// at `until_wall_ms`.
    Hold {
        key: String,
        until_wall_ms: u64,
        prober: String,
    },
    /// GUARD-K2: the session that was to probe is gone: you probe, when your own wait is over.
    Probe { key: String },
    /// GUARD-K3: the probe went through: resume in `after_ms` (staggered, one after the other).
    Resume { key: String, after_ms: u64 },
}
