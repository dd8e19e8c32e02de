//! The resolved settings as plain typed fields, for the supervisor and the UI to consume.

// The supervisor's own types: the settings files feed it exactly these fields.
pub use crate::supervisor::guard::GuardConfig as GuardSettings;
pub use crate::supervisor::{HandoffConfig as HandoffSettings, PokeConfig as PokeSettings};

use super::schema::KeyId;
use super::settings::Settings;
use super::value::SettingValue;

#[derive(Clone, Debug, PartialEq)]
pub struct EffectiveSettings {
    pub poke: PokeSettings,
    pub recovery: RecoverySettings,
    pub wakeups: WakeupSettings,
    pub handoff: HandoffSettings,
    pub guard: GuardSettings,
    pub display: DisplaySettings,
    /// pi's `toolTimeoutMs`, when a settings file sets a positive one.
    pub tool_timeout_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoverySettings {
    pub max_retries: u32,
    pub loop_threshold: u32,
    pub max_loop_nudges: u32,
    /// Least time between any two automatic injections (the arbiter's global cooldown); 0 = none.
    pub injection_cooldown_seconds: u64,
    pub promise_poke: bool,
    pub max_promise_pokes: u32,
    pub promise_second_opinion: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeupSettings {
    /// Clamp of requested delays; always `min_seconds <= max_seconds`.
    pub min_seconds: u64,
    pub max_seconds: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidePaneMode {
    /// Shown when the terminal is wide enough.
    Auto,
    Shown,
    Hidden,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplaySettings {
    /// Canonical spelling, e.g. `ctrl+]` or `ctrl+b` (see `input::prefix`).
    pub prefix_key: String,
    pub side_pane_width: u16,
    pub side_pane: SidePaneMode,
    pub notifications: bool,
    pub bell: bool,
    /// `pokeshell.notifyCommand`: run (see `notify_command`) when no terminal is attached; empty = none.
    pub notify_command: String,
    /// `pokeshell.costWarnUsd` in millionths of a dollar (whole, so the settings compare exactly):
    /// notify once when a session's cost passes it; 0: never.
    pub cost_warn_micros: u64,
    /// `pokeshell.windowTitle`: "auto", "on" or "off".
    pub window_title: &'static str,
}

impl EffectiveSettings {
    pub fn from_settings(s: &Settings) -> Self {
        let flag = |k| s.get(k).as_bool().unwrap_or(false);
        // Every value passed its range check, so these conversions cannot fail; 0 is a safe fallback.
        let secs = |k| s.get(k).as_int().and_then(|i| u64::try_from(i).ok()).unwrap_or(0);
        let count = |k| s.get(k).as_int().and_then(|i| u32::try_from(i).ok()).unwrap_or(0);
        let usd = |k| match s.get(k) {
            SettingValue::Number(n) => *n,
            _ => 0.0,
        };
        EffectiveSettings {
            poke: PokeSettings {
                enabled: flag(KeyId::PokeEnabled),
                threshold_seconds: secs(KeyId::PokeThresholdSeconds),
                auto_abort: flag(KeyId::PokeAutoAbort),
                auto_poke: flag(KeyId::PokeAutoPoke),
                post_compact_poke: flag(KeyId::PokePostCompactPoke),
                post_compact_cooldown_seconds: secs(KeyId::PokePostCompactCooldownSeconds),
                post_compact_max_pokes: count(KeyId::PokePostCompactMaxPokes),
                stream_stall_seconds: secs(KeyId::PokeStreamStallSeconds),
                provider_retry_max_minutes: secs(KeyId::PokeProviderRetryMaxMinutes),
            },
            recovery: RecoverySettings {
                max_retries: count(KeyId::RecoveryMaxRetries),
                loop_threshold: count(KeyId::RecoveryLoopThreshold),
                max_loop_nudges: count(KeyId::RecoveryMaxLoopNudges),
                injection_cooldown_seconds: secs(KeyId::InjectionCooldownSeconds),
                promise_poke: flag(KeyId::RecoveryPromisePoke),
                max_promise_pokes: count(KeyId::RecoveryMaxPromisePokes),
                promise_second_opinion: flag(KeyId::RecoveryPromiseSecondOpinion),
            },
            wakeups: WakeupSettings {
                min_seconds: secs(KeyId::WakeupMinSeconds),
                max_seconds: secs(KeyId::WakeupMaxSeconds),
            },
            handoff: HandoffSettings {
                percent: match s.get(KeyId::HandoffPercent) {
                    SettingValue::Number(n) => *n,
                    _ => 80.0,
                },
                enabled: flag(KeyId::HandoffEnabled),
                save: flag(KeyId::HandoffSave),
            },
            guard: GuardSettings {
                budget_usd: usd(KeyId::BudgetUsd),
                daily_budget_usd: usd(KeyId::DailyBudgetUsd),
                max_calls_per_run: count(KeyId::MaxCallsPerRun),
                same_call_repeats: count(KeyId::SameCallRepeats),
                alternating_repeats: count(KeyId::AlternatingRepeats),
                same_reply_repeats: count(KeyId::SameReplyRepeats),
                idle_pokes: count(KeyId::IdlePokes),
                poll_wait_seconds: secs(KeyId::PollWaitSeconds),
            },
            display: DisplaySettings {
                prefix_key: s.get(KeyId::PrefixKey).edit_text(),
                side_pane_width: s
                    .get(KeyId::SidePaneWidth)
                    .as_int()
                    .and_then(|i| u16::try_from(i).ok())
                    .unwrap_or(32),
                side_pane: match s.get(KeyId::SidePaneVisibility) {
                    SettingValue::Choice("shown") => SidePaneMode::Shown,
                    SettingValue::Choice("hidden") => SidePaneMode::Hidden,
                    _ => SidePaneMode::Auto,
                },
                notifications: flag(KeyId::Notifications),
                bell: flag(KeyId::Bell),
                notify_command: s.get(KeyId::NotifyCommand).edit_text(),
                window_title: match s.get(KeyId::WindowTitle) {
                    SettingValue::Choice(c) => c,
                    _ => "auto",
                },
                cost_warn_micros: match s.get(KeyId::CostWarnUsd) {
                    // In range (0 to 10^6) by the schema: the product fits.
                    SettingValue::Number(n) => (n * 1e6).round() as u64,
                    _ => 0,
                },
            },
            tool_timeout_ms: s.tool_timeout().map(|(ms, _)| ms),
        }
    }
}

impl EffectiveSettings {
    /// What the supervisor needs of these settings.
    pub fn supervisor(&self) -> crate::supervisor::SupervisorConfig {
        use crate::supervisor::{RecoveryConfig, SupervisorConfig};
        SupervisorConfig {
            poke: self.poke.clone(),
            recovery: RecoveryConfig {
                max_retries: self.recovery.max_retries,
                loop_threshold: self.recovery.loop_threshold,
                max_loop_nudges: self.recovery.max_loop_nudges,
                promise_poke: self.recovery.promise_poke,
                max_promise_pokes: self.recovery.max_promise_pokes,
                promise_second_opinion: self.recovery.promise_second_opinion,
            },
            handoff: self.handoff.clone(),
            global_cooldown_seconds: self.recovery.injection_cooldown_seconds,
            wakeup_min_seconds: self.wakeups.min_seconds,
            wakeup_max_seconds: self.wakeups.max_seconds,
            guard: self.guard.clone(),
        }
    }
}

#[cfg(test)]
mod supervisor_mapping_tests {
    use super::*;
    use crate::config::ConfigPaths;

    #[test]
    fn defaults_match_the_supervisors_own_defaults() {
        let dir = std::env::temp_dir();
        let paths = ConfigPaths::resolve(Some(&dir.join("no-home")), None, &dir.join("no-work")).unwrap();
        let settings = Settings::from_loaded(paths, Vec::new());
        assert_eq!(
            settings.effective().supervisor(),
            crate::supervisor::SupervisorConfig::default()
        );
    }
}
