//! The supervisor's settings with their documented defaults. The settings files and the dialog build
//! this struct; the supervisor reads it and never panics on odd values (see the `*_ms`/effective helpers).

#[derive(Clone, Debug, PartialEq)]
pub struct SupervisorConfig {
    pub poke: PokeConfig,
    pub recovery: RecoveryConfig,
    pub handoff: HandoffConfig,
    /// Minimum seconds between two automatic resume messages of any kind (poke, retry, loop nudge).
    /// A message that would come sooner waits for the end of the cooldown.
    pub global_cooldown_seconds: u64,
    /// `schedule_wakeup` delays are clamped to `[wakeup_min_seconds, wakeup_max_seconds]` (WAK-P1).
    pub wakeup_min_seconds: u64,
    pub wakeup_max_seconds: u64,
    /// The guard rails for unattended runs (budget, call cap, no-progress rails).
    pub guard: super::guard::GuardConfig,
}

/// pi-poke's seven keys (docs/configuration.md). `enabled` is pokeshell's master switch for everything automatic.
#[derive(Clone, Debug, PartialEq)]
pub struct PokeConfig {
    /// Defaults to true: launching pokeshell is the opt-in.
    pub enabled: bool,
    pub threshold_seconds: u64,
    pub auto_abort: bool,
    pub auto_poke: bool,
    pub post_compact_poke: bool,
    pub post_compact_cooldown_seconds: u64,
    pub post_compact_max_pokes: u32,
    /// Seconds without a sign of life from a run in flight (no stream progress, no event) before
    /// pokeshell aborts and resumes it (STALL-S1, STALL-R1); 0 turns the watch off.
    pub stream_stall_seconds: u64,
    /// How long, in total, pokeshell keeps resuming a streak of provider errors (LIMIT-W1).
    pub provider_retry_max_minutes: u64,
}

/// pi-stalled-agent-recovery's keys (docs/configuration.md).
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveryConfig {
    /// 0 turns the empty-reply retry off (the loop guard stays on).
    pub max_retries: u32,
    /// At least 1; 0 falls back to the default (SAR-C1).
    pub loop_threshold: u32,
    /// At least 1; 0 falls back to the default (SAR-C1).
    pub max_loop_nudges: u32,
    /// A run that ends on an announced, untaken step is asked to take it (PROM-P1).
    pub promise_poke: bool,
    /// Promise pokes per episode (PROM-B1); 0 turns them off.
    pub max_promise_pokes: u32,
    /// For endings the cues are unsure of, ask the session's model first (PROM-A1).
    pub promise_second_opinion: bool,
}

/// pi-auto-handoff's keys (docs/configuration.md).
#[derive(Clone, Debug, PartialEq)]
pub struct HandoffConfig {
    /// Context use (0–100, exclusive of 0) at which a settle triggers a handoff.
    pub percent: f64,
    /// The automatic trigger; a manual handoff works either way.
    pub enabled: bool,
    /// Write `handoff-<timestamp>.md` next to the session file.
    pub save: bool,
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        Self {
            poke: PokeConfig::default(),
            recovery: RecoveryConfig::default(),
            handoff: HandoffConfig::default(),
            global_cooldown_seconds: 5,
            wakeup_min_seconds: 60,
            wakeup_max_seconds: 3600,
            guard: Default::default(),
        }
    }
}

impl Default for PokeConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold_seconds: 30,
            auto_abort: false,
            auto_poke: true,
            post_compact_poke: true,
            post_compact_cooldown_seconds: 30,
            post_compact_max_pokes: 2,
            stream_stall_seconds: 120,
            provider_retry_max_minutes: 300,
        }
    }
}

impl Default for RecoveryConfig {
    fn default() -> Self {
        Self {
            max_retries: 5,
            loop_threshold: 5,
            max_loop_nudges: 3,
            promise_poke: true,
            max_promise_pokes: 2,
            promise_second_opinion: false,
        }
    }
}

impl Default for HandoffConfig {
    fn default() -> Self {
        Self {
            percent: 80.0,
            enabled: true,
            save: true,
        }
    }
}

const DEFAULT_LOOP_THRESHOLD: u32 = 5;
const DEFAULT_MAX_LOOP_NUDGES: u32 = 3;
const DEFAULT_HANDOFF_PERCENT: f64 = 80.0;

impl SupervisorConfig {
    pub(crate) fn threshold_ms(&self) -> u64 {
        self.poke.threshold_seconds.max(1).saturating_mul(1000)
    }

    pub(crate) fn poke_cooldown_ms(&self) -> u64 {
        self.poke.post_compact_cooldown_seconds.saturating_mul(1000)
    }

    pub(crate) fn global_cooldown_ms(&self) -> u64 {
        self.global_cooldown_seconds.saturating_mul(1000)
    }

    /// The stall watch's silence limit; `None` when it is off.
    pub(crate) fn stall_ms(&self) -> Option<u64> {
        (self.poke.stream_stall_seconds > 0).then(|| self.poke.stream_stall_seconds.saturating_mul(1000))
    }

    pub(crate) fn max_pokes(&self) -> u32 {
        self.poke.post_compact_max_pokes
    }

    /// The wakeup clamp with the bounds put in order (min ≥ 1, max ≥ min).
    pub(crate) fn wakeup_bounds(&self) -> (u64, u64) {
        let min = self.wakeup_min_seconds.max(1);
        (min, self.wakeup_max_seconds.max(min))
    }

    pub(crate) fn handoff_percent(&self) -> f64 {
        let percent = self.handoff.percent;
        if percent.is_finite() && percent > 0.0 && percent <= 100.0 {
            percent
        } else {
            DEFAULT_HANDOFF_PERCENT
        }
    }
}

impl RecoveryConfig {
    pub(crate) fn effective_loop_threshold(&self) -> u32 {
        if self.loop_threshold >= 1 {
            self.loop_threshold
        } else {
            DEFAULT_LOOP_THRESHOLD
        }
    }

    pub(crate) fn effective_max_loop_nudges(&self) -> u32 {
        if self.max_loop_nudges >= 1 {
            self.max_loop_nudges
        } else {
            DEFAULT_MAX_LOOP_NUDGES
        }
    }
}
