//! When a push may go: the session's settings (`pokeshell.pushWhen`, `awayMinutes`, `quietHours`,
//! `pushFinished`) and whether its person is there.

use crate::config::hours::QuietHours;
use crate::config::{KeyId, SettingValue, Settings};

/// `pokeshell.pushWhen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PushWhen {
    /// Only while the person is away from the session (the default).
    #[default]
    Away,
    Always,
    Never,
}

/// A session's push settings as it reports them, with its local time zone (for the quiet hours and
/// the reset times a push names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PushPolicy {
    pub when: PushWhen,
    /// No typing for this long, and no visible page: away.
    pub away_after_ms: u64,
    pub quiet: Option<QuietHours>,
    /// Push runs that finished without a question too.
    pub finished: bool,
    pub utc_offset_secs: i32,
}

impl Default for PushPolicy {
    fn default() -> Self {
        PushPolicy {
            when: PushWhen::Away,
            away_after_ms: 3 * 60_000,
            quiet: None,
            finished: false,
            utc_offset_secs: 0,
        }
    }
}

impl PushPolicy {
    /// From the session's resolved settings.
    pub fn from_settings(s: &Settings, utc_offset_secs: i32) -> PushPolicy {
        let when = match s.get(KeyId::PushWhen) {
            SettingValue::Choice("always") => PushWhen::Always,
            SettingValue::Choice("never") => PushWhen::Never,
            _ => PushWhen::Away,
        };
        let minutes = s
            .get(KeyId::AwayMinutes)
            .as_int()
            .and_then(|i| u64::try_from(i).ok())
            .unwrap_or(3);
        PushPolicy {
            when,
            away_after_ms: minutes * 60_000,
            // The value passed its check when it was read: a span or nothing.
            quiet: QuietHours::parse(&s.get(KeyId::QuietHours).edit_text())
                .ok()
                .flatten(),
            finished: s.get(KeyId::PushFinished).as_bool().unwrap_or(false),
            utc_offset_secs,
        }
    }

    /// How long until the quiet hours end, when `wall_ms` is inside them.
    pub fn quiet_left_ms(&self, wall_ms: u64) -> Option<u64> {
        let quiet = self.quiet?;
        let local_secs = (wall_ms / 1000) as i64 + i64::from(self.utc_offset_secs);
        let minute = (local_secs.rem_euclid(86_400) / 60) as u16;
        let into_minute_ms = (local_secs.rem_euclid(60) as u64) * 1000 + wall_ms % 1000;
        match quiet.minutes_left(minute) {
            0 => None,
            left => Some(u64::from(left) * 60_000 - into_minute_ms),
        }
    }
}

/// Whether the person is with a session: a page showing it is visible, or a terminal on it typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Presence {
    pub visible: bool,
    /// When a client that still shows the session last typed into it (mono ms).
    pub typed_mono: Option<u64>,
}

impl Presence {
    /// Until when (mono ms) the person counts as there by their typing, if they do now.
    pub fn typing_until(&self, policy: &PushPolicy, now_mono: u64) -> Option<u64> {
        let until = self.typed_mono?.saturating_add(policy.away_after_ms);
        (until > now_mono).then_some(until)
    }
}
