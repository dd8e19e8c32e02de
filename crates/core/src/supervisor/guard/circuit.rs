//! This session's side of the rails that span sessions: the circuit breaker [GUARD-K1..K3] (sessions
//! meeting the same provider failure wait out one countdown and probe one at a time; the server's core
//! decides who probes) and the answers to the day's pause [GUARD-B2] (the core holds the day's budget).

/// What the session tells the core about a provider failure it met. `kind` names it ("overload",
/// "rate limit"...); the shell adds the provider.
#[derive(Clone, Debug, PartialEq)]
pub enum BreakerNote {
    /// A run ended on the failure; the session plans to resume at `until_wall_ms`.
    Failed { kind: &'static str, until_wall_ms: u64 },
    /// A run got past it.
    Recovered { kind: &'static str },
    /// The session no longer waits on it (the person typed, stopped or cancelled).
    Left { kind: &'static str },
}

/// What the core answers.
#[derive(Clone, Debug, PartialEq)]
pub enum BreakerOrder {
    /// GUARD-K1: another session (`prober`) met the same failure first and probes when the shared
    /// countdown ends at `until_wall_ms`; do not resume before it got through.
    Hold { until_wall_ms: u64, prober: String },
    /// GUARD-K2: the session that was to probe is gone: probe when your own wait ends.
    Probe,
    /// GUARD-K3: the probe got through: resume in `after_ms`.
    Resume { after_ms: u64 },
}

/// What the core says of the day's budget across sessions (GUARD-B2).
#[derive(Clone, Debug, PartialEq)]
pub enum DailyNews {
    /// It is spent: stop, pause and ask.
    Spent(super::DailyState),
    /// The person allowed more (here or in another session): the pause is lifted and what it
    /// stopped resumes.
    Allowed,
    /// A new day began: the pause is lifted; nothing stopped is resumed on its own.
    NewDay,
    /// The person left the sessions stopped: the question is answered, the budget still spent.
    LeftStopped,
}

/// The person's answer to the day's pause, for the core.
#[derive(Clone, Debug, PartialEq)]
pub enum DailyAnswer {
    Allow { usd: f64 },
    Leave,
}

/// What a session tells the server's core (the session makes it from the supervisor's actions and its
/// own usage reports; the core's `server::guards` keeps what spans sessions).
#[derive(Debug, Clone, PartialEq)]
pub enum GuardNote {
    /// A reply pi priced: its cost, the day's budget as the session's settings have it
    /// (`pokeshell.dailyBudgetUsd`, 0: none), and the person's offset from UTC (the day is theirs).
    Spent {
        usd: f64,
        daily_limit_usd: f64,
        utc_offset_secs: i32,
    },
    /// GUARD-A1 and GUARD-A2 on the day's pause.
    Daily(DailyAnswer),
    /// GUARD-K1: a run ended on a provider failure (`key`: the provider and the kind) and its resume
    /// is planned at `until_wall_ms`.
    Failed { key: String, until_wall_ms: u64 },
    /// The session got past the failure: its probe, or a poke by hand, went through.
    Recovered { key: String },
    /// The session no longer waits on the failure.
    Left { key: String },
}

/// What the core tells a session.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardOrder {
    Daily(DailyNews),
    Breaker(BreakerOrder),
}

/// The key two sessions meet the same failure by: the provider and the failure's kind.
pub fn failure_key(provider: &str, kind: &str) -> String {
    format!("{provider} · {kind}")
}

/// The circuit this session is in: the failure's kind, and whether it is held behind another
/// session's probe.
#[derive(Clone, Debug, PartialEq)]
pub struct Circuit {
    pub kind: &'static str,
    pub held: Option<Held>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    pub until_wall_ms: u64,
    pub prober: String,
}
