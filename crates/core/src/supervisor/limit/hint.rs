//! Finding "when may we try again" in an error text. A hint is only read right after a trigger
//! word ("try again", "retry-after", "reset", ...), so numbers elsewhere in the text (token
//! counts, limits, request ids) never become reset times. When several hints are present the
//! latest one wins: every limit the text names has to be over before a retry can succeed.

use super::civil::{self, Zone};
use super::scan::{Cur, find_words};

const SECOND_MS: u64 = 1_000;
const DAY_MS: i64 = 86_400_000;
/// Hints further ahead than this are taken for misreadings (a monthly quota resets within 31 days).
const MAX_AHEAD_MS: i64 = 40 * DAY_MS;
/// Absolute times further back than this are old timestamps, not reset times.
const MAX_BEHIND_MS: i64 = DAY_MS;
/// z.ai (Zhipu) writes its reset stamps in Beijing time without saying so.
const CHINA_OFFSET_MS: i64 = 8 * 3_600_000;

/// How a number written without a unit right after the trigger is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bare {
    /// Prose ("try again in 25"): a unit is required.
    Refuse,
    /// A header or field in seconds (`retry-after: 25`).
    Seconds,
    /// A header or field in milliseconds (`retry-after-ms: 997000`).
    Millis,
    /// A `reset` field: epoch seconds or milliseconds, or (only as a `key: value`) seconds.
    Reset,
    /// Only an epoch stamp (`usage limit reached|1762952400`).
    Epoch,
}

struct Trigger {
    word: &'static [u8],
    bare: Bare,
    /// The trigger is a header-name prefix: skip the rest of the name (`x-ratelimit-reset-tokens`).
    name_prefix: bool,
}

const fn t(word: &'static [u8], bare: Bare) -> Trigger {
    Trigger {
        word,
        bare,
        name_prefix: false,
    }
}

const TRIGGERS: &[Trigger] = &[
    t(b"again", Bare::Refuse), // try again in 25s / at 3:05 PM / after 20 seconds
    t(b"retry", Bare::Refuse), // Please retry in 47.4s / retry after 20 seconds
    t(b"wait", Bare::Refuse),
    t(b"come back", Bare::Refuse),
    t(b"available", Bare::Refuse),
    t(b"until", Bare::Refuse),
    t(b"regain access", Bare::Refuse), // You will regain access on 2026-04-01 at 00:00 UTC
    t("将在".as_bytes(), Bare::Refuse), // z.ai: 您的限额将在 2026-08-25 07:41:44 重置
    t(b"retry-after", Bare::Seconds),
    t(b"retry_after", Bare::Seconds),
    t(b"retryafter", Bare::Seconds),
    t(b"retry_after_seconds", Bare::Seconds),
    t(b"retry-after-ms", Bare::Millis),
    t(b"retry_after_ms", Bare::Millis),
    t(b"retryafterms", Bare::Millis),
    t(b"retrydelay", Bare::Seconds), // Google RetryInfo: "retryDelay": "25s"
    t(b"retry_delay", Bare::Seconds),
    t(b"reset", Bare::Reset), // "reset": 1764522300, X-RateLimit-Reset, anthropic-ratelimit-*-reset
    t(b"resets", Bare::Reset),
    t(b"reset_at", Bare::Reset),
    t(b"resets_at", Bare::Reset),
    t(b"reset_time", Bare::Reset),
    t(b"reset_after", Bare::Seconds),
    Trigger {
        word: b"ratelimit-reset-",
        bare: Bare::Seconds,
        name_prefix: true,
    },
    t(b"limit reached", Bare::Epoch),
];

/// Short words that may stand between a trigger and its value ("reset at", "try again in").
const FILLERS: &[&[u8]] = &[
    b"at", b"on", b"in", b"after", b"for", b"by", b"again", b"of", b"is", b"be",
];

/// The latest reset instant the text announces, within a sane window around `now_ms`.
pub(super) fn latest_reset(text: &[u8], now_ms: i64, local_offset_ms: i64) -> Option<i64> {
    let naive_offset_ms = if written_in_china_time(text) {
        CHINA_OFFSET_MS
    } else {
        local_offset_ms
    };
    let ctx = Ctx {
        now_ms,
        naive_offset_ms,
    };
    TRIGGERS
        .iter()
        .flat_map(|trigger| {
            find_words(text, trigger.word, !trigger.name_prefix).filter_map(move |pos| {
                let mut cur = Cur::at(text, pos + trigger.word.len());
                ctx.value_after(&mut cur, trigger)
            })
        })
        .filter(|at| (now_ms - MAX_BEHIND_MS..=now_ms + MAX_AHEAD_MS).contains(at))
        .max()
}

fn written_in_china_time(text: &[u8]) -> bool {
    let markers: [&[u8]; 3] = ["将在".as_bytes(), "重置".as_bytes(), b"bigmodel"];
    let zai_codes: [&[u8]; 3] = [b"1308", b"1310", b"1313"];
    markers.iter().any(|m| super::scan::contains(text, m))
        || zai_codes
            .iter()
            .any(|code| find_words(text, code, true).next().is_some())
}

#[derive(Clone, Copy)]
struct Ctx {
    now_ms: i64,
    naive_offset_ms: i64,
}

impl Ctx {
    fn offset(&self, zone: Zone) -> i64 {
        match zone {
            Zone::Fixed(ms) => ms,
            Zone::Naive => self.naive_offset_ms,
        }
    }

    fn value_after(&self, cur: &mut Cur, trigger: &Trigger) -> Option<i64> {
        if trigger.name_prefix {
            cur.skip_while(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_', 40);
        }
        let key_like = cur
            .peek()
            .is_some_and(|b| matches!(b, b':' | b'=' | b'"' | b'\'' | b'\\'));
        skip_separators(cur);
        if trigger.bare == Bare::Epoch {
            // "usage limit reached for 5 hour" names the window, not the reset: only a stamp counts.
            let (whole, _) = cur.digits(15)?;
            return self.bare_number(whole, 0, Bare::Epoch, key_like);
        }
        for _ in 0..2 {
            if !FILLERS.iter().any(|w| cur.eat_word(w)) {
                break;
            }
            skip_separators(cur);
        }
        if let Some((date, clock, zone)) = civil::iso(cur) {
            return civil::instant(date, clock, self.offset(zone));
        }
        if let Some(at) = civil::http_date(cur) {
            return Some(at);
        }
        if let Some(at) = civil::month_day(cur, self.now_ms, self.naive_offset_ms) {
            return Some(at);
        }
        if let Some((clock, zone)) = civil::clock(cur) {
            return Some(civil::next_clock(clock, self.offset(zone), self.now_ms));
        }
        self.number(cur, trigger.bare, key_like)
    }

    /// A duration ("25s", "1m30s", "3 hours, 17 minutes", "1.5 s") or a bare number read per `bare`.
    fn number(&self, cur: &mut Cur, bare: Bare, key_like: bool) -> Option<i64> {
        let mut total: u64 = 0;
        let mut parts = 0;
        while parts < 6 {
            let part_start = *cur;
            let Some((whole, thousandths)) = cur.decimal() else {
                break;
            };
            let after_number = *cur;
            cur.skip_while(|b| b == b' ', 1);
            let Some(unit_ms) = unit(cur) else {
                if parts == 0 {
                    *cur = after_number;
                    return self.bare_number(whole, thousandths, bare, key_like);
                }
                *cur = part_start;
                break;
            };
            let part = whole
                .saturating_mul(unit_ms)
                .saturating_add(thousandths.saturating_mul(unit_ms) / 1000);
            total = total.saturating_add(part);
            parts += 1;
            let between = *cur;
            cur.skip_while(|b| b == b' ' || b == b',', 3);
            cur.eat_word(b"and");
            cur.skip_spaces();
            if !cur.peek().is_some_and(|b| b.is_ascii_digit()) {
                *cur = between;
                break;
            }
        }
        if parts == 0 {
            return None;
        }
        self.now_ms.checked_add(i64::try_from(total).ok()?)
    }

    fn bare_number(&self, whole: u64, thousandths: u64, bare: Bare, key_like: bool) -> Option<i64> {
        let after = |ms: u64| self.now_ms.checked_add(i64::try_from(ms).ok()?);
        let seconds = whole.saturating_mul(SECOND_MS).saturating_add(thousandths);
        let epoch = || match whole {
            w if w >= 1_000_000_000_000 => i64::try_from(w).ok(),
            w if w >= 1_000_000_000 => i64::try_from(w.saturating_mul(SECOND_MS)).ok(),
            _ => None,
        };
        match bare {
            Bare::Refuse => None,
            Bare::Seconds => after(seconds),
            Bare::Millis => after(whole),
            Bare::Epoch => epoch(),
            Bare::Reset => epoch().or_else(|| if key_like { after(seconds) } else { None }),
        }
    }
}

fn skip_separators(cur: &mut Cur) {
    cur.skip_while(
        |b| matches!(b, b' ' | b'\t' | b':' | b'=' | b'"' | b'\'' | b'|' | b'\\'),
        12,
    );
}

const UNITS: &[(&[u8], u64)] = &[
    (b"milliseconds", 1),
    (b"millisecond", 1),
    (b"ms", 1),
    (b"seconds", 1_000),
    (b"second", 1_000),
    (b"secs", 1_000),
    (b"sec", 1_000),
    (b"s", 1_000),
    (b"minutes", 60_000),
    (b"minute", 60_000),
    (b"mins", 60_000),
    (b"min", 60_000),
    (b"m", 60_000),
    (b"hours", 3_600_000),
    (b"hour", 3_600_000),
    (b"hrs", 3_600_000),
    (b"hr", 3_600_000),
    (b"h", 3_600_000),
    (b"days", 86_400_000),
    (b"day", 86_400_000),
    (b"d", 86_400_000),
];

/// The longest time unit at the cursor that is not the start of a longer word.
fn unit(cur: &mut Cur) -> Option<u64> {
    let rest = cur.rest();
    let (name, ms) = UNITS
        .iter()
        .filter(|(name, _)| {
            rest.starts_with(name) && !rest.get(name.len()).is_some_and(|b| b.is_ascii_alphabetic())
        })
        .max_by_key(|(name, _)| name.len())?;
    cur.pos += name.len();
    Some(*ms)
}
