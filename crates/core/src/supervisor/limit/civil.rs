//! Calendar arithmetic and the absolute time shapes providers write: ISO 8601 / RFC 3339
//! date-times, HTTP dates, "Oct 6, 10am" and bare clock times ("3:05 PM", "15:05").
//! All results are Unix epoch milliseconds as `i64`; the caller range-checks them.

use super::scan::Cur;

const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The year of a day count (the inverse of [`days_from_civil`], year only).
fn year_of_days(days: i64) -> i64 {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let year = yoe + era * 400;
    if mp >= 10 { year + 1 } else { year }
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A wall-clock reading in a zone `offset_ms` east of UTC, as epoch milliseconds.
pub(super) fn instant(date: (i64, u32, u32), time: Clock, offset_ms: i64) -> Option<i64> {
    let (y, m, d) = date;
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d) * DAY_MS + time.ms_of_day() - offset_ms)
}

/// A time of day.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Clock {
    hour: u32,
    minute: u32,
    second: u32,
}

impl Clock {
    fn ms_of_day(self) -> i64 {
        i64::from((self.hour * 60 + self.minute) * 60 + self.second) * 1000
    }
}

/// Where a parsed time says its zone is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Zone {
    /// An explicit offset east of UTC, in milliseconds (`Z` and `UTC` are 0).
    Fixed(i64),
    /// No zone written: the caller decides (local time, or a provider's home zone).
    Naive,
}

/// `2026-11-30T17:05:00Z`, `2026-11-30 17:05:00`, `2026-04-01 at 00:00 UTC`, `2026-04-01`.
pub(super) fn iso(cur: &mut Cur) -> Option<((i64, u32, u32), Clock, Zone)> {
    let start = *cur;
    let found = iso_inner(cur);
    if found.is_none() {
        *cur = start;
    }
    found
}

fn iso_inner(cur: &mut Cur) -> Option<((i64, u32, u32), Clock, Zone)> {
    let year = cur.fixed_digits(4)? as i64;
    let month = (cur.eat(b"-").then(|| cur.fixed_digits(2))??) as u32;
    let day = (cur.eat(b"-").then(|| cur.fixed_digits(2))??) as u32;
    let date = (year, month, day);
    let before_time = *cur;
    let has_sep = cur.eat(b"t") || cur.eat(b" at ") || cur.eat(b" ");
    let clock = if has_sep { clock_24h(cur) } else { None };
    let Some(clock) = clock else {
        *cur = before_time;
        return Some((date, Clock::default(), zone(cur)));
    };
    Some((date, clock, zone(cur)))
}

/// `HH:MM[:SS[.fff]]` on a 24-hour clock.
fn clock_24h(cur: &mut Cur) -> Option<Clock> {
    let start = *cur;
    let parsed = (|| {
        let (hour, _) = cur.digits(2)?;
        let minute = cur.eat(b":").then(|| cur.fixed_digits(2))??;
        let mut second = 0;
        if cur.peek() == Some(b':') && cur.peek_at(1).is_some_and(|b| b.is_ascii_digit()) {
            cur.eat(b":");
            second = cur.fixed_digits(2)?;
            if cur.eat(b".") {
                // Sub-second precision does not matter for a resume time.
                cur.skip_while(|b| b.is_ascii_digit(), 12);
            }
        }
        (hour < 24 && minute < 60 && second < 61).then_some(Clock {
            hour: hour as u32,
            minute: minute as u32,
            second: second.min(59) as u32,
        })
    })();
    if parsed.is_none() {
        *cur = start;
    }
    parsed
}

/// `Z`, `+08:00`, `-0500`, ` UTC`, ` GMT`, or nothing.
fn zone(cur: &mut Cur) -> Zone {
    let start = *cur;
    if cur.eat_word(b"z") {
        return Zone::Fixed(0);
    }
    if let Some(sign) = cur.peek().filter(|b| *b == b'+' || *b == b'-') {
        cur.pos += 1;
        if let Some(h) = cur.fixed_digits(2) {
            cur.eat(b":");
            let m = cur.fixed_digits(2).unwrap_or(0);
            if h <= 14 && m < 60 {
                let ms = ((h * 60 + m) * 60_000) as i64;
                return Zone::Fixed(if sign == b'-' { -ms } else { ms });
            }
        }
        *cur = start;
        return Zone::Naive;
    }
    cur.skip_spaces();
    cur.eat(b"(");
    if cur.eat_word(b"utc") || cur.eat_word(b"gmt") {
        cur.eat(b")");
        return Zone::Fixed(0);
    }
    *cur = start;
    Zone::Naive
}

const MONTHS: [&[u8]; 12] = [
    b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov", b"dec",
];

fn month_name(cur: &mut Cur) -> Option<u32> {
    let idx = MONTHS.iter().position(|m| cur.rest().starts_with(m))?;
    cur.pos += 3;
    cur.skip_while(|b| b.is_ascii_alphabetic(), 7);
    cur.eat(b".");
    Some(idx as u32 + 1)
}

/// `Wed, 21 Oct 2026 07:28:00 GMT` (the HTTP-date form of `Retry-After`).
pub(super) fn http_date(cur: &mut Cur) -> Option<i64> {
    let start = *cur;
    let parsed = (|| {
        if cur.skip_while(|b| b.is_ascii_alphabetic(), 9) < 3 || !cur.eat(b",") {
            return None;
        }
        cur.skip_spaces();
        let (day, _) = cur.digits(2)?;
        cur.skip_spaces();
        let month = month_name(cur)?;
        cur.skip_spaces();
        let year = cur.fixed_digits(4)? as i64;
        cur.skip_spaces();
        let clock = clock_24h(cur)?;
        let offset = match zone(cur) {
            Zone::Fixed(ms) => ms,
            Zone::Naive => 0,
        };
        instant((year, month, day as u32), clock, offset)
    })();
    if parsed.is_none() {
        *cur = start;
    }
    parsed
}

/// `3:05 PM`, `3pm`, `15:05`, `10 a.m.`: a time of day, with an optional `UTC`/`GMT` zone.
pub(super) fn clock(cur: &mut Cur) -> Option<(Clock, Zone)> {
    let start = *cur;
    let parsed = (|| {
        let (hour, _) = cur.digits(2)?;
        let mut minute = 0;
        let mut colon = false;
        if cur.peek() == Some(b':') {
            cur.eat(b":");
            minute = cur.fixed_digits(2)?;
            colon = true;
            if cur.peek() == Some(b':') {
                cur.eat(b":");
                cur.fixed_digits(2)?;
            }
        }
        let before_meridiem = *cur;
        cur.skip_spaces();
        let pm = if cur.eat_word(b"pm") || cur.eat(b"p.m.") {
            Some(true)
        } else if cur.eat_word(b"am") || cur.eat(b"a.m.") {
            Some(false)
        } else {
            *cur = before_meridiem;
            None
        };
        let hour = match pm {
            Some(pm) if (1..=12).contains(&hour) => (hour % 12) + if pm { 12 } else { 0 },
            Some(_) => return None,
            None if colon && hour < 24 => hour,
            None => return None,
        };
        (minute < 60).then_some((
            Clock {
                hour: hour as u32,
                minute: minute as u32,
                second: 0,
            },
            zone(cur),
        ))
    })();
    if parsed.is_none() {
        *cur = start;
    }
    parsed
}

/// The first instant at or after `now_ms` whose wall clock (in the zone) reads `time`.
pub(super) fn next_clock(time: Clock, offset_ms: i64, now_ms: i64) -> i64 {
    let local_day = (now_ms + offset_ms).div_euclid(DAY_MS);
    let today = local_day * DAY_MS + time.ms_of_day() - offset_ms;
    if today >= now_ms { today } else { today + DAY_MS }
}

/// `Oct 6, 10am`, `Jul 26, 5:59am`, `Jul 11 at 12pm`, `December 1, 2026`: a named month and day,
/// an optional year, an optional time. Without a year the next such date (or one just past) is meant.
pub(super) fn month_day(cur: &mut Cur, now_ms: i64, naive_offset_ms: i64) -> Option<i64> {
    let start = *cur;
    let parsed = (|| {
        let month = month_name(cur)?;
        if cur.skip_spaces() == 0 {
            return None;
        }
        let (day, _) = cur.digits(2)?;
        if cur.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
            cur.skip_while(|b| b.is_ascii_alphabetic(), 2); // 1st, 2nd, 26th
        }
        let before_year = *cur;
        cur.eat(b",");
        cur.skip_spaces();
        let year = cur.fixed_digits(4).map(|y| y as i64);
        if year.is_none() {
            *cur = before_year;
        }
        let before_time = *cur;
        cur.eat(b",");
        cur.skip_spaces();
        cur.eat(b"at ");
        let (time, zone) = clock(cur).unwrap_or_else(|| {
            *cur = before_time;
            (Clock::default(), Zone::Naive)
        });
        let offset = match zone {
            Zone::Fixed(ms) => ms,
            Zone::Naive => naive_offset_ms,
        };
        let now_year = year_of_days((now_ms + offset).div_euclid(DAY_MS));
        match year {
            Some(y) => instant((y, month, day as u32), time, offset),
            None => {
                let this_year = instant((now_year, month, day as u32), time, offset);
                match this_year {
                    Some(t) if t >= now_ms - DAY_MS => Some(t),
                    _ => instant((now_year + 1, month, day as u32), time, offset),
                }
            }
        }
    })();
    if parsed.is_none() {
        *cur = start;
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_counts_match_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2026, 11, 30), 20_787);
        assert_eq!(year_of_days(20_787), 2026);
        assert_eq!(year_of_days(days_from_civil(2024, 12, 31)), 2024);
        assert_eq!(year_of_days(days_from_civil(2025, 1, 1)), 2025);
    }

    #[test]
    fn invalid_dates_are_refused() {
        assert_eq!(instant((2026, 2, 29), Clock::default(), 0), None);
        assert!(instant((2028, 2, 29), Clock::default(), 0).is_some());
        assert_eq!(instant((2026, 13, 1), Clock::default(), 0), None);
    }
}
