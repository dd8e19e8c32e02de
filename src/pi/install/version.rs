//! Reading and comparing Node.js version numbers.

use std::fmt;

/// A `major.minor.patch` version; the derived order compares the fields left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version { major, minor, patch }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Reads what `node --version` prints (`v22.19.0`, maybe with a pre-release suffix or a trailing
/// newline). A missing minor or patch counts as 0. The last non-empty line is used, because a node
/// started with warnings enabled may print them first.
pub fn parse_node_version(text: &str) -> Option<Version> {
    let line = text.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    let bare = line.strip_prefix('v').unwrap_or(line);
    let core = bare.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let major = number(parts.next()?)?;
    let minor = parts.next().map_or(Some(0), number)?;
    let patch = parts.next().map_or(Some(0), number)?;
    if parts.next().is_some() {
        return None;
    }
    Some(Version::new(major, minor, patch))
}

fn number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_node_prints() {
        type Row = (&'static str, Option<(u32, u32, u32)>);
        let table: &[Row] = &[
            ("v22.19.0", Some((22, 19, 0))),
            ("v22.19.0\n", Some((22, 19, 0))),
            ("  v20.20.2  \n\n", Some((20, 20, 2))),
            ("22.23.5", Some((22, 23, 5))),
            ("v23.0.0-nightly20250101abcdef", Some((23, 0, 0))),
            ("v22.19.1+build7", Some((22, 19, 1))),
            ("v24", Some((24, 0, 0))),
            ("v22.19", Some((22, 19, 0))),
            ("(node:1) Warning: something\nv22.20.0\n", Some((22, 20, 0))),
            ("", None),
            ("\n \n", None),
            ("v", None),
            ("vx.1.2", None),
            ("v22..0", None),
            ("v22.19.0.1", None),
            ("v-1.2.3", None),
            ("v99999999999.0.0", None),
            ("node: not found", None),
        ];
        for (text, want) in table {
            let want = want.map(|(a, b, c)| Version::new(a, b, c));
            assert_eq!(parse_node_version(text), want, "input {text:?}");
        }
    }

    #[test]
    fn compares_field_by_field() {
        let min = Version::new(22, 19, 0);
        let table: &[(&str, bool)] = &[
            ("v22.19.0", true),
            ("v22.19.1", true),
            ("v22.20.0", true),
            ("v23.0.0", true),
            ("v100.0.0", true),
            ("v22.18.99", false),
            ("v22.9.0", false),
            ("v20.20.2", false),
            ("v21.99.99", false),
            ("v3.19.0", false),
        ];
        for (text, new_enough) in table {
            let v = parse_node_version(text).unwrap();
            assert_eq!(v >= min, *new_enough, "{text} against {min}");
        }
    }

    #[test]
    fn displays_without_the_v() {
        assert_eq!(Version::new(22, 19, 0).to_string(), "22.19.0");
    }
}
