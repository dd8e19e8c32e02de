//! Checks the text of a prefix key such as `ctrl+]` and brings it to one spelling.
//!
//! Only chords a terminal can send without a keyboard protocol are accepted: Ctrl with a letter or
//! one of `@ [ \ ] ^ _` or space (each has a single control byte), Alt with any printable ASCII
//! character (sent as Esc and the character), or both. A bare key is refused: it would swallow
//! ordinary typing.

const CTRL_SYMBOLS: &str = "@[\\]^_";

/// Returns the chord in its canonical spelling (`ctrl+alt+x`), or why it is not usable.
pub fn normalize(input: &str) -> Result<String, String> {
    let text = input.trim();
    if text.is_empty() {
        return Err("the key is empty".to_string());
    }
    let (mods_text, key_text) = split_key(text);
    let mut ctrl = false;
    let mut alt = false;
    for part in mods_text.split('+').filter(|p| !p.is_empty()) {
        match part.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => ctrl = true,
            "alt" | "meta" => alt = true,
            other => return Err(format!("unknown modifier '{other}' (use ctrl or alt)")),
        }
    }
    if !ctrl && !alt {
        return Err("a prefix key needs ctrl or alt".to_string());
    }
    let key = parse_key(key_text)?;
    if ctrl {
        let fits = key == ' ' || key.is_ascii_alphabetic() || CTRL_SYMBOLS.contains(key);
        if !fits {
            return Err(format!("ctrl+{key} has no control code in a plain terminal"));
        }
    }
    let key = if ctrl { key.to_ascii_lowercase() } else { key };
    let key_name = if key == ' ' {
        "space".to_string()
    } else {
        key.to_string()
    };
    let mut out = String::new();
    if ctrl {
        out.push_str("ctrl+");
    }
    if alt {
        out.push_str("alt+");
    }
    out.push_str(&key_name);
    Ok(out)
}

/// Splits `mods+key`, where the key itself may be `+`.
fn split_key(text: &str) -> (&str, &str) {
    if let Some(mods) = text.strip_suffix("++") {
        return (mods, "+");
    }
    match text.rsplit_once('+') {
        Some((mods, key)) => (mods, key),
        None => ("", text),
    }
}

fn parse_key(text: &str) -> Result<char, String> {
    if text.eq_ignore_ascii_case("space") {
        return Ok(' ');
    }
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_graphic() => Ok(c),
        (None, _) => Err("the key after the modifier is missing".to_string()),
        _ => Err(format!("'{text}' is not a single printable key")),
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn accepts_and_normalizes() {
        assert_eq!(normalize("ctrl+]").as_deref(), Ok("ctrl+]"));
        assert_eq!(normalize(" Ctrl+A ").as_deref(), Ok("ctrl+a"));
        assert_eq!(normalize("alt+ctrl+b").as_deref(), Ok("ctrl+alt+b"));
        assert_eq!(normalize("alt+P").as_deref(), Ok("alt+P"));
        assert_eq!(normalize("alt++").as_deref(), Ok("alt++"));
        assert_eq!(normalize("ctrl+space").as_deref(), Ok("ctrl+space"));
    }

    #[test]
    fn refuses_what_a_terminal_cannot_send_or_typing_needs() {
        assert!(normalize("").is_err());
        assert!(normalize("a").is_err());
        assert!(normalize("ctrl+1").is_err());
        assert!(normalize("shift+a").is_err());
        assert!(normalize("ctrl+").is_err());
        assert!(normalize("ctrl+ab").is_err());
        assert!(normalize("ctrl+é").is_err());
    }
}
