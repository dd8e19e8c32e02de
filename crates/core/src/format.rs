//! How durations, times and ids read in the side pane and the status overlay.

/// Session ids are time-ordered UUIDs: sessions made minutes apart share their first block, so the
/// short form keeps the first block and the random end.
pub fn short_session(s: &str) -> String {
    let is_uuid = s.len() >= 32 && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    if is_uuid {
        format!("{}…{}", &s[..8], &s[s.len() - 6..])
    } else {
        s.to_string()
    }
}

/// Uptime at minute resolution, so an idle pokeshell redraws at most once a minute.
pub fn uptime(ms: u64) -> String {
    let mins = ms / 60_000;
    match mins {
        0 => "under a minute".into(),
        m if m < 60 => format!("{m}m"),
        m => format!("{}h {:02}m", m / 60, m % 60),
    }
}

/// When the uptime shown next changes (mono ms).
pub fn next_uptime_change(started_ms: u64, now_ms: u64) -> u64 {
    let elapsed = now_ms.saturating_sub(started_ms);
    started_ms + (elapsed / 60_000 + 1) * 60_000
}

/// `42s`, `3m 05s`, `1h 02m`.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s / 60 % 60),
    }
}

/// Local wall-clock time `HH:MM:SS` of a Unix-epoch millisecond timestamp, in a zone
/// `utc_offset_secs` east of UTC (the session is given the user's offset as an input; it reads no
/// zone itself).
pub fn clock(wall_ms: u64, utc_offset_secs: i32) -> String {
    let secs = i64::try_from(wall_ms / 1000).unwrap_or(i64::MAX);
    let local = secs.saturating_add(i64::from(utc_offset_secs));
    let day = local.rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_is_coarse() {
        assert_eq!(uptime(59_000), "under a minute");
        assert_eq!(uptime(61_000), "1m");
        assert_eq!(uptime((3600 + 5 * 60) * 1000), "1h 05m");
    }

    #[test]
    fn next_change_is_the_next_whole_minute() {
        let t0 = 5_000;
        assert_eq!(next_uptime_change(t0, t0 + 61_000), t0 + 120_000);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(45_900), "45s");
        assert_eq!(duration(185_000), "3m 05s");
        assert_eq!(duration(3_720_000), "1h 02m");
    }

    #[test]
    fn the_clock_reads_in_the_zone_it_is_given() {
        // 2023-11-14 22:13:20 UTC.
        let at = 1_700_000_000_000;
        assert_eq!(clock(at, 0), "22:13:20");
        assert_eq!(clock(at, 3600), "23:13:20");
        assert_eq!(clock(at, 2 * 3600), "00:13:20", "past midnight the next day");
        assert_eq!(clock(at, -(5 * 3600 + 30 * 60)), "16:43:20");
    }

    #[test]
    fn session_ids_keep_their_first_block_and_random_end() {
        assert_eq!(
            short_session("01a2295d-dba3-768d-b465-1b68f3b14104"),
            "01a2295d…b14104"
        );
        assert_eq!(short_session("my session"), "my session");
    }
}
