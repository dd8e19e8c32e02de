//! Text that came from outside (a session's name, a directory, a server's message) made safe to
//! print: every control character is shown escaped, never sent to the terminal, so a directory
//! named with escape sequences cannot drive the user's terminal. And the rule for a session's
//! name: short, printable, no controls.

/// The longest name a session may have, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Characters a terminal would act on rather than show: C0 and C1 controls, DEL, and the Unicode
/// marks that reorder text (bidi overrides and isolates), which can make a line say something it
/// does not hold.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character written out (`\n`, `\t`, `\x1b`, `\u{202e}`); the rest as is.
pub fn escape(text: &str) -> String {
    if !text.chars().any(is_unsafe) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 && is_unsafe(c) => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Why `name` cannot name a session, if it cannot: empty, too long, or holding a character a
/// terminal would act on.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a session's name cannot be empty".to_string());
    }
    if name.chars().any(is_unsafe) {
        return Err(format!(
            "the session name \"{}\" holds control characters; use letters, digits and punctuation",
            escape(name)
        ));
    }
    if name.contains(NOT_IN_NAMES) {
        return Err(format!(
            "the session name \"{}\" holds `{NOT_IN_NAMES}`, which `attach DEST:NAME` reads as a \
             session on the machine DEST; use another character (such as `-`)",
            escape(name)
        ));
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(format!(
            "a session's name may have at most {MAX_NAME_CHARS} characters (this one has {chars})"
        ));
    }
    Ok(())
}

/// What no session's name holds: `DEST:NAME` names a session on another machine, so a name with
/// it would be taken for one (and `N:name` is how `ls` labels this machine's).
pub const NOT_IN_NAMES: char = ':';

/// A name made from something that may not be one (a directory's last part, a name from an old
/// list): unsafe characters, spaces and [`NOT_IN_NAMES`] become `-`, cut to [`MAX_NAME_CHARS`].
pub fn to_name(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| {
            if is_unsafe(c) || c.is_whitespace() || c == NOT_IN_NAMES {
                '-'
            } else {
                c
            }
        })
        .take(MAX_NAME_CHARS)
        .collect();
    if name.is_empty() { "pi".to_string() } else { name }
}

/// A line of another machine's output as this terminal may show it: tabs stay, colours (SGR
/// sequences, `ESC [ digits ; m`) stay when `colour`, and everything else [`escape`] writes out is
/// written out (a clipboard write, a title, a screen clear from a machine that was taken over, or
/// from an older pokeshell there that printed an agent's text as it was).
pub fn escape_line(line: &str, colour: bool) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if colour && c == '\x1b' {
            let params = rest[1..].strip_prefix('[').map(|p| {
                p.len()
                    - p.trim_start_matches(|c: char| c.is_ascii_digit() || c == ';' || c == ':')
                        .len()
            });
            if let Some(n) = params
                && rest[2 + n..].starts_with('m')
            {
                out.push_str(&rest[..3 + n]);
                rest = &rest[3 + n..];
                continue;
            }
        }
        if c == '\t' {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            out.push_str(&escape(c.encode_utf8(&mut buf)));
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Second red-team pass (issue 34): the remote commands passed another machine's output on as it
    /// was.
    #[test]
    fn another_machines_line_keeps_only_its_colours() {
        let hostile = "reply \x1b]52;c;cHduZWQ=\x07 \x1b]0;T\x07\x1b[2J\tend\r";
        assert_eq!(
            escape_line(hostile, false),
            "reply \\x1b]52;c;cHduZWQ=\\x07 \\x1b]0;T\\x07\\x1b[2J\tend\\r"
        );
        assert_eq!(
            escape_line("\x1b[1;32m+ok\x1b[m \x1b[2J\x1b[31", true),
            "\x1b[1;32m+ok\x1b[m \\x1b[2J\\x1b[31"
        );
        assert_eq!(escape_line("\x1b[32m+x\x1b[m", false), "\\x1b[32m+x\\x1b[m");
        assert_eq!(escape_line("ünï \u{202e}", true), "ünï \\u{202e}");
    }

    #[test]
    fn controls_are_written_out_and_the_rest_kept() {
        assert_eq!(escape("api ünï 漢"), "api ünï 漢");
        assert_eq!(escape("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(escape("x\ny\tz\r"), "x\\ny\\tz\\r");
        assert_eq!(escape("\u{9b}31m"), "\\x9b31m");
        assert_eq!(escape("\x7f"), "\\x7f");
        assert_eq!(escape("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert!(!escape("\x1b]0;pwned\x07").chars().any(is_unsafe));
    }

    #[test]
    fn names_with_controls_or_too_long_are_refused() {
        assert!(check_name("api").is_ok());
        assert!(check_name(&"a".repeat(MAX_NAME_CHARS)).is_ok());
        let long = check_name(&"a".repeat(10_000)).unwrap_err();
        assert!(long.contains("at most 64") && long.contains("10000"), "{long}");
        let nl = check_name("a\nb").unwrap_err();
        assert!(nl.contains("control characters") && nl.contains("a\\nb"), "{nl}");
        assert!(check_name("a\x1b[31m").is_err());
        assert!(check_name("").is_err());
    }

    #[test]
    fn a_name_made_from_a_directory_is_safe() {
        assert_eq!(to_name("my project"), "my-project");
        assert_eq!(to_name("\x1b[2Jevil"), "-[2Jevil");
        assert_eq!(to_name(&"d".repeat(300)).chars().count(), MAX_NAME_CHARS);
        assert_eq!(to_name(""), "pi");
        assert!(check_name(&to_name("a\u{202e}\n\x07b")).is_ok());
    }

    /// Issue 34, low 9: a name with `:` would be taken for `DEST:NAME` by `attach`.
    #[test]
    fn no_name_holds_a_colon() {
        let refused = check_name("host:x").unwrap_err();
        assert!(
            refused.contains("host:x") && refused.contains("DEST:NAME"),
            "{refused}"
        );
        assert_eq!(to_name("host:x"), "host-x");
        assert!(check_name(&to_name("a:b:c")).is_ok());
    }
}
