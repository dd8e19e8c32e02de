//! `pokeshell.quietHours`: a span of the day in local time, `HH:MM-HH:MM` (it may cross midnight,
//! `22:00-07:00`), or empty for none.

/// A span of the day, in minutes after local midnight; `start == end` is never made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    pub start_min: u16,
    pub end_min: u16,
}

impl QuietHours {
    /// `text` as a span; `Ok(None)` for an empty text. The error says what was expected.
    pub fn parse(text: &str) -> Result<Option<QuietHours>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let bad = || format!("{text:?} is not a span of the day such as 22:00-07:00");
        let (start, end) = text.split_once('-').ok_or_else(bad)?;
        let (start_min, end_min) = (minutes(start).ok_or_else(bad)?, minutes(end).ok_or_else(bad)?);
        if start_min == end_min {
            return Err(format!("{text:?} starts and ends at the same time"));
        }
        Ok(Some(QuietHours { start_min, end_min }))
    }

    /// Whether `minute` (after local midnight) is inside the span; its end is not.
    pub fn contains(&self, minute: u16) -> bool {
        if self.start_min < self.end_min {
            (self.start_min..self.end_min).contains(&minute)
        } else {
            minute >= self.start_min || minute < self.end_min
        }
    }

    /// How many minutes from `minute` until the span ends (0 outside it).
    pub fn minutes_left(&self, minute: u16) -> u16 {
        if !self.contains(minute) {
            return 0;
        }
        (self.end_min + 24 * 60 - minute) % (24 * 60)
    }
}

/// "7:05" or "07:05" as minutes after midnight.
fn minutes(text: &str) -> Option<u16> {
    let (h, m) = text.trim().split_once(':')?;
    if !(1..=2).contains(&h.len()) || m.len() != 2 {
        return None;
    }
    let (h, m): (u16, u16) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_parse_and_may_cross_midnight() {
        let night = QuietHours::parse("22:00-07:00").unwrap().unwrap();
        assert_eq!((night.start_min, night.end_min), (22 * 60, 7 * 60));
        assert!(night.contains(23 * 60) && night.contains(0) && night.contains(6 * 60 + 59));
        assert!(!night.contains(7 * 60) && !night.contains(12 * 60));
        assert_eq!(night.minutes_left(6 * 60), 60);
        assert_eq!(night.minutes_left(23 * 60), 8 * 60);
        let lunch = QuietHours::parse(" 12:30 - 13:15 ").unwrap().unwrap();
        assert!(lunch.contains(12 * 60 + 30) && !lunch.contains(13 * 60 + 15));
        assert_eq!(QuietHours::parse(""), Ok(None));
    }

    #[test]
    fn anything_else_is_refused_with_the_form_expected() {
        for bad in [
            "22-07",
            "25:00-07:00",
            "22:00",
            "22:00-07:60",
            "10:00-10:00",
            "a:b-c:d",
            "022:00-07:00",
        ] {
            let err = QuietHours::parse(bad).unwrap_err();
            assert!(
                err.contains("22:00-07:00") || err.contains("same time"),
                "{bad}: {err}"
            );
        }
    }
}
