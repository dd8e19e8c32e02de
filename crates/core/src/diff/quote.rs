//! git's quoting of a path in a patch header (`quote_c_style` with `core.quotePath` off): a name
//! holding a control character, a double quote or a backslash is written in double quotes with C
//! escapes; any other name as it is. The patch's `diff --git` lines are matched against the paths
//! of the `--raw` list this way.

/// `name` as git writes it in a patch header.
pub fn c_style(name: &[u8]) -> Vec<u8> {
    let must = |b: u8| b < 0x20 || b == b'"' || b == b'\\' || b == 0x7f;
    if !name.iter().copied().any(must) {
        return name.to_vec();
    }
    let mut out = vec![b'"'];
    for &b in name {
        match b {
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b if must(b) => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
            b => out.push(b),
        }
    }
    out.push(b'"');
    out
}

/// The `diff --git` line git writes for a file at `old` (before) and `new` (after).
pub fn header(old: &[u8], new: &[u8]) -> Vec<u8> {
    let mut out = b"diff --git ".to_vec();
    out.extend(c_style(&[b"a/", old].concat()));
    out.push(b' ');
    out.extend(c_style(&[b"b/", new].concat()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_stay_and_others_are_quoted_as_git_does() {
        assert_eq!(c_style(b"src/a b.rs"), b"src/a b.rs");
        assert_eq!(c_style("é.txt".as_bytes()), "é.txt".as_bytes());
        assert_eq!(c_style(b"a\"b\\c\td\x01"), b"\"a\\\"b\\\\c\\td\\001\"");
        assert_eq!(header(b"x", b"y\n"), b"diff --git a/x \"b/y\\n\"");
    }
}
