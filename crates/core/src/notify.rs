//! Getting the user's attention when pokeshell acts on its own or gives up: the terminal bell and a
//! desktop notification (OSC 9, understood by iTerm2, WezTerm, kitty and others; OSC 777, understood
//! by VTE-based terminals and foot). Terminals that know neither ignore them.

/// Longest notification body sent; terminals truncate anyway and a long line is noise.
const MAX_TEXT: usize = 200;

fn clean(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .filter(|c| *c != ';')
        .collect();
    let mut out: String = one_line.trim().chars().take(MAX_TEXT).collect();
    if one_line.trim().chars().count() > MAX_TEXT {
        out.push('…');
    }
    out
}

/// The bytes to write to the host terminal.
pub fn desktop(text: &str, bell: bool, notification: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if bell {
        out.push(0x07);
    }
    if notification {
        let body = clean(text);
        out.extend_from_slice(format!("\x1b]9;pokeshell: {body}\x07").as_bytes());
        out.extend_from_slice(format!("\x1b]777;notify;pokeshell;{body}\x07").as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bell_and_both_notification_forms() {
        let out = desktop("sent a resume poke", true, true);
        assert_eq!(
            out,
            b"\x07\x1b]9;pokeshell: sent a resume poke\x07\x1b]777;notify;pokeshell;sent a resume poke\x07"
                .to_vec()
        );
    }

    #[test]
    fn text_cannot_break_out_of_the_sequence() {
        let out = String::from_utf8(desktop("a\x07b\x1b]c;d\ne", false, true)).unwrap();
        assert_eq!(out.matches('\x07').count(), 2, "{out:?}");
        assert!(!out.contains("\x1b]c"));
        assert!(out.contains("a b ]cd e"), "{out:?}");
    }

    #[test]
    fn switches_are_respected() {
        assert!(desktop("x", false, false).is_empty());
        assert_eq!(desktop("x", true, false), b"\x07");
    }
}
