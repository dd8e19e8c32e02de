//! Sessions on other machines, reached with the user's own `ssh` (no daemon of pokeshell's listens on
//! the network): `pokeshell ls --json` (the document, [`schema`]), `ls --all` (every machine of
//! `pokeshell.machines` asked at once, [`ask`]; the last answers kept, [`cache`]; one list,
//! [`merge`]), `attach DEST:NAME` and `new --on DEST` ([`ssh`]). docs/machines.md has the whole story.

pub mod ask;
pub mod cache;
pub mod merge;
pub mod schema;
pub mod ssh;

/// The destinations of a `pokeshell.machines` value: separated by commas or spaces.
pub fn parse_machines(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for d in value.split(|c: char| c == ',' || c.is_whitespace()) {
        if !d.is_empty() && !out.iter().any(|o| o == d) {
            out.push(d.to_string());
        }
    }
    out
}

/// The wall clock in milliseconds, for the machines' last-known times and the remote briefs.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    #[test]
    fn machines_are_split_on_commas_and_spaces_without_repeats() {
        assert_eq!(
            super::parse_machines(" gpu, me@vm  gpu,,box "),
            ["gpu", "me@vm", "box"]
        );
        assert!(super::parse_machines("").is_empty());
    }
}
