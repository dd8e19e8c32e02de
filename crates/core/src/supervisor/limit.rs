//! Provider limits: what to do when a pi run ends on a provider error that pi's own retries did not
//! get past (docs/provider-limits.md). Pure: the error text, the wall time and the local UTC offset
//! come in; a classification and a plan come out. No clock is read here.
//!
//! [`classify`] names the kind of error and any reset time the text announces; [`plan`] turns that
//! into "resume at", "tell the user" or "stop"; [`backoff_ms`] is the ladder used when the provider
//! gave no time.

mod civil;
mod hint;
mod kind;
mod scan;

/// Only this much of an error text is read: provider bodies are cut at a few kilobytes anyway, and
/// the scan must stay cheap whatever pi hands over.
pub const MAX_SCANNED_BYTES: usize = 16 * 1024;

/// Added to a provider's reset time: stamps are rounded to the second and clocks differ a little.
pub const RESUME_MARGIN_MS: u64 = 1_000;

/// The no-hint ladder: 30 s, 1, 2, 5, 10 and 30 minutes, then every hour.
const LADDER_MS: [u64; 6] = [30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000];
const LADDER_TAIL_MS: u64 = 3_600_000;

/// What kind of failure a provider error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Too many requests or tokens for now (HTTP 429 and its wordings).
    RateLimit,
    /// The provider is out of capacity (HTTP 529, 503, "overloaded", a local server loading).
    Overloaded,
    /// Another server-side failure (other 5xx, "internal error").
    ServerError,
    /// The request never got an answer (connection reset or refused, DNS, timeout, cut stream).
    Network,
    /// A plan, quota or billing limit (daily/monthly quota, "usage limit", `insufficient_quota`).
    UsageLimit,
    /// Waiting cannot fix it: bad request, bad key, unknown model, context too long.
    Fatal,
    /// Nothing recognisable.
    Unknown,
}

/// A provider error as read from its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProviderError {
    pub kind: ErrorKind,
    /// The HTTP status, when the text states one.
    pub status: Option<u16>,
    /// When the provider says the limit resets (Unix epoch ms), if the text says so.
    pub reset_at_wall_ms: Option<u64>,
}

/// Reads an error text (pi's `errorMessage`, or its "Retry failed after N attempts: ..." line).
///
/// `now_wall_ms` anchors relative hints ("try again in 25s"); `local_offset_secs` (east of UTC)
/// places clock times written without a zone ("resets at 3:05 PM"). Never panics, whatever the
/// input; reads at most [`MAX_SCANNED_BYTES`].
pub fn classify(error_text: &str, now_wall_ms: u64, local_offset_secs: i32) -> ProviderError {
    let cut = error_text.len().min(MAX_SCANNED_BYTES);
    let text = error_text
        .as_bytes()
        .get(..cut)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let status = kind::status(&text);
    let kind = kind::classify(&text, status);
    let now = i64::try_from(now_wall_ms).unwrap_or(i64::MAX / 2);
    let reset_at_wall_ms = hint::latest_reset(&text, now, i64::from(local_offset_secs) * 1000)
        .and_then(|at| u64::try_from(at).ok());
    ProviderError {
        kind,
        status,
        reset_at_wall_ms,
    }
}

/// How long to wait before resume number `attempt` (0 = the first) when the provider gave no time,
/// or `None` once the waits so far plus this one would exceed `max_minutes`.
pub fn backoff_ms(attempt: u32, max_minutes: u64) -> Option<u64> {
    let index = attempt as usize;
    let step = LADDER_MS.get(index).copied().unwrap_or(LADDER_TAIL_MS);
    let ladder_sum: u64 = LADDER_MS.iter().take(index + 1).sum();
    let tail_steps = u64::from(attempt.saturating_sub(LADDER_MS.len() as u32 - 1));
    let total = ladder_sum.saturating_add(tail_steps.saturating_mul(LADDER_TAIL_MS));
    (total <= max_minutes.saturating_mul(60_000)).then_some(step)
}

/// Where a resume time came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResumeSource {
    /// The provider's own reset time.
    Hint,
    /// The backoff ladder.
    Ladder,
}

/// Why the user has to be told instead of pokeshell waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotifyWhy {
    /// Waiting cannot fix this error.
    Fatal,
    /// A quota or billing limit with no reset time: it may need the user (a top-up, a new plan).
    UsageLimitWithoutReset,
    /// The provider names a reset time beyond the configured wait budget.
    ResetBeyondBudget { reset_at_wall_ms: u64 },
    /// The error is not one pokeshell recognises, so it does not guess.
    Unrecognised,
}

/// The decision for one provider error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Resume the agent at this wall time.
    Resume { at_wall_ms: u64, source: ResumeSource },
    /// Stop and tell the user why.
    Notify { why: NotifyWhy },
    /// The wait budget is spent: stop resuming this streak of errors.
    GiveUp,
}

/// Decides what to do about `error`, the outcome of resume number `attempt` (0 when pi's own
/// retries just failed) of one streak of provider errors.
///
/// The ladder bounds how many times pokeshell tries (its waits must fit in `max_minutes`); a
/// provider's reset time, when there is one, decides when.
pub fn plan(error: &ProviderError, attempt: u32, now_wall_ms: u64, max_minutes: u64) -> Plan {
    match (error.kind, error.reset_at_wall_ms) {
        (ErrorKind::Fatal, _) => {
            return Plan::Notify {
                why: NotifyWhy::Fatal,
            };
        }
        (ErrorKind::UsageLimit, None) => {
            return Plan::Notify {
                why: NotifyWhy::UsageLimitWithoutReset,
            };
        }
        (ErrorKind::Unknown, None) => {
            return Plan::Notify {
                why: NotifyWhy::Unrecognised,
            };
        }
        _ => {}
    }
    let Some(ladder_wait) = backoff_ms(attempt, max_minutes) else {
        return Plan::GiveUp;
    };
    match error.reset_at_wall_ms {
        Some(reset) => {
            let at_wall_ms = reset.max(now_wall_ms).saturating_add(RESUME_MARGIN_MS);
            if at_wall_ms - now_wall_ms > max_minutes.saturating_mul(60_000) {
                Plan::Notify {
                    why: NotifyWhy::ResetBeyondBudget {
                        reset_at_wall_ms: reset,
                    },
                }
            } else {
                Plan::Resume {
                    at_wall_ms,
                    source: ResumeSource::Hint,
                }
            }
        }
        None => Plan::Resume {
            at_wall_ms: now_wall_ms.saturating_add(ladder_wait),
            source: ResumeSource::Ladder,
        },
    }
}
