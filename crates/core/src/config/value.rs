//! Setting values: checked against the schema when read from JSON, from the dialog's editor or from
//! the command line, and turned back into JSON and into text.

use std::collections::BTreeMap;

use serde_json::Value;

use super::schema::{KeyId, KeySpec, Unit, ValueKind};
use crate::input::prefix::PrefixKey;

/// A value that passed its key's validation.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingValue {
    Bool(bool),
    Int(i64),
    Number(f64),
    Choice(&'static str),
    Text(String),
}

/// A set of values from one place (a file, the session, the command line).
pub type Layer = BTreeMap<KeyId, SettingValue>;

impl SettingValue {
    pub fn to_json(&self) -> Value {
        match self {
            SettingValue::Bool(b) => Value::Bool(*b),
            SettingValue::Int(i) => Value::from(*i),
            // Whole percentages are written as integers so files stay as people write them.
            SettingValue::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => Value::from(*n as i64),
            SettingValue::Number(n) => Value::from(*n),
            SettingValue::Choice(c) => Value::from(*c),
            SettingValue::Text(t) => Value::from(t.as_str()),
        }
    }

    /// The bare value, as the editor pre-fills it.
    pub fn edit_text(&self) -> String {
        match self {
            SettingValue::Bool(b) => b.to_string(),
            SettingValue::Int(i) => i.to_string(),
            SettingValue::Number(n) => format_number(*n),
            SettingValue::Choice(c) => (*c).to_string(),
            SettingValue::Text(t) => t.clone(),
        }
    }

    /// The value with its unit, as the dialog and the status overlay show it.
    pub fn display(&self, unit: Unit) -> String {
        match (self, unit) {
            (SettingValue::Bool(true), _) => "on".to_string(),
            (SettingValue::Bool(false), _) => "off".to_string(),
            (SettingValue::Text(t), _) if t.is_empty() => "none".to_string(),
            (_, Unit::Seconds) => format!("{}s", self.edit_text()),
            (_, Unit::Percent) => format!("{}%", self.edit_text()),
            (_, Unit::Columns) => format!("{} cols", self.edit_text()),
            (_, Unit::None) => self.edit_text(),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            SettingValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            SettingValue::Int(i) => Some(*i),
            _ => None,
        }
    }
}

fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

impl KeySpec {
    /// Checks a value read from a JSON file or a session entry. The error says what was expected.
    pub fn parse_json(&self, value: &Value) -> Result<SettingValue, String> {
        let expected = || format!("expected {}", self.range_text());
        match self.kind {
            ValueKind::Bool => value.as_bool().map(SettingValue::Bool).ok_or_else(expected),
            ValueKind::Int { min, max } => {
                let n = json_integer(value).ok_or_else(expected)?;
                if (min..=max).contains(&n) {
                    Ok(SettingValue::Int(n))
                } else {
                    Err(expected())
                }
            }
            ValueKind::IntOrOff { min, max } => {
                let n = json_integer(value).ok_or_else(expected)?;
                if n == 0 || (min..=max).contains(&n) {
                    Ok(SettingValue::Int(n))
                } else {
                    Err(expected())
                }
            }
            ValueKind::Number { .. } | ValueKind::NumberFrom { .. } => {
                let n = value.as_f64().filter(|n| n.is_finite()).ok_or_else(expected)?;
                if self.kind.number_in_range(n) {
                    Ok(SettingValue::Number(n))
                } else {
                    Err(expected())
                }
            }
            ValueKind::Choice(choices) => {
                let s = value.as_str().ok_or_else(expected)?;
                choices
                    .iter()
                    .find(|c| c.eq_ignore_ascii_case(s.trim()))
                    .map(|c| SettingValue::Choice(c))
                    .ok_or_else(expected)
            }
            ValueKind::KeyChord => {
                let s = value.as_str().ok_or_else(expected)?;
                s.parse::<PrefixKey>()
                    .map(|k| SettingValue::Text(k.canonical()))
                    .map_err(|e| format!("{}: {e}", expected()))
            }
            ValueKind::Text { max_chars } => {
                let s = value.as_str().ok_or_else(expected)?;
                one_line(s, max_chars).ok_or_else(expected)
            }
            ValueKind::Hours => {
                let s = value.as_str().ok_or_else(expected)?;
                hours(s).map_err(|e| format!("{}: {e}", expected()))
            }
        }
    }

    /// Checks text typed into the dialog's editor or given on the command line.
    pub fn parse_text(&self, text: &str) -> Result<SettingValue, String> {
        let text = text.trim();
        let expected = || format!("enter {}", self.range_text());
        match self.kind {
            ValueKind::Bool => match text.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" => Ok(SettingValue::Bool(true)),
                "false" | "off" | "no" => Ok(SettingValue::Bool(false)),
                _ => Err(expected()),
            },
            ValueKind::Int { min, max } => match text.parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(SettingValue::Int(n)),
                _ => Err(expected()),
            },
            ValueKind::IntOrOff { min, max } => match text.parse::<i64>() {
                Ok(n) if n == 0 || (min..=max).contains(&n) => Ok(SettingValue::Int(n)),
                _ => Err(expected()),
            },
            ValueKind::Number { .. } | ValueKind::NumberFrom { .. } => {
                match text.trim_end_matches(['%', '$']).trim().parse::<f64>() {
                    Ok(n) if n.is_finite() && self.kind.number_in_range(n) => Ok(SettingValue::Number(n)),
                    _ => Err(expected()),
                }
            }
            ValueKind::Choice(_) => self.parse_json(&Value::from(text)).map_err(|_| expected()),
            ValueKind::KeyChord => text
                .parse::<PrefixKey>()
                .map(|k| SettingValue::Text(k.canonical()))
                .map_err(|e| format!("{}: {e}", expected())),
            ValueKind::Text { max_chars } => one_line(text, max_chars).ok_or_else(expected),
            ValueKind::Hours => hours(text).map_err(|e| format!("{}: {e}", expected())),
        }
    }

    /// Whether `value` has this key's type and lies in its range.
    pub fn accepts(&self, value: &SettingValue) -> bool {
        self.parse_json(&value.to_json()).as_ref() == Ok(value)
    }
}

/// A span of the day, kept as written once it parses (trimmed; empty is none).
fn hours(text: &str) -> Result<SettingValue, String> {
    super::hours::QuietHours::parse(text).map(|_| SettingValue::Text(text.trim().to_string()))
}

/// `text` trimmed, if it is one line (no control characters) of at most `max_chars` characters.
fn one_line(text: &str, max_chars: usize) -> Option<SettingValue> {
    let text = text.trim();
    (text.chars().count() <= max_chars && !text.chars().any(char::is_control))
        .then(|| SettingValue::Text(text.to_string()))
}

/// A JSON number that is a whole number (`5` or `5.0`, as JavaScript's `Number.isInteger` sees it).
pub(crate) fn json_integer(value: &Value) -> Option<i64> {
    if let Some(i) = value.as_i64() {
        return Some(i);
    }
    let f = value.as_f64()?;
    // Bounds keep the cast exact; anything larger is out of every range anyway.
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::schema::{KeyId, spec};
    use serde_json::json;

    #[test]
    fn sar_c1_integers_must_be_json_numbers() {
        let s = spec(KeyId::RecoveryMaxRetries);
        assert_eq!(s.parse_json(&json!(0)), Ok(SettingValue::Int(0)));
        assert_eq!(s.parse_json(&json!(5.0)), Ok(SettingValue::Int(5)));
        assert!(s.parse_json(&json!("5")).is_err());
        assert!(s.parse_json(&json!(2.5)).is_err());
        assert!(s.parse_json(&json!(-1)).is_err());
        assert!(spec(KeyId::RecoveryLoopThreshold).parse_json(&json!(0)).is_err());
    }

    #[test]
    fn percent_is_above_zero_and_at_most_hundred() {
        let s = spec(KeyId::HandoffPercent);
        assert!(s.parse_json(&json!(0)).is_err());
        assert_eq!(s.parse_json(&json!(100)), Ok(SettingValue::Number(100.0)));
        assert_eq!(s.parse_json(&json!(62.5)), Ok(SettingValue::Number(62.5)));
        assert!(s.parse_json(&json!(100.1)).is_err());
        assert_eq!(s.parse_text("75%"), Ok(SettingValue::Number(75.0)));
        assert_eq!(SettingValue::Number(75.0).to_json(), json!(75));
    }

    #[test]
    fn editor_text_is_strict_unlike_parse_int() {
        let s = spec(KeyId::PokeThresholdSeconds);
        assert_eq!(s.parse_text(" 45 "), Ok(SettingValue::Int(45)));
        assert!(s.parse_text("30s").is_err());
        assert!(s.parse_text("1.9").is_err());
        assert_eq!(
            s.parse_text("0"),
            Err("enter a whole number from 1 to 86400".to_string())
        );
    }

    #[test]
    fn choices_are_case_insensitive_and_canonical() {
        let s = spec(KeyId::SidePaneVisibility);
        assert_eq!(s.parse_json(&json!("Hidden")), Ok(SettingValue::Choice("hidden")));
        assert!(s.parse_json(&json!("sometimes")).is_err());
    }

    #[test]
    fn text_is_one_trimmed_line_within_its_length() {
        let s = spec(KeyId::NotifyCommand);
        assert_eq!(
            s.parse_json(&json!("  notify-send pokeshell ")),
            Ok(SettingValue::Text("notify-send pokeshell".into()))
        );
        assert_eq!(s.parse_json(&json!("")), Ok(SettingValue::Text(String::new())));
        assert!(s.parse_json(&json!("a\nb")).is_err());
        assert!(s.parse_json(&json!(5)).is_err());
        assert!(s.parse_json(&json!("x".repeat(1001))).is_err());
        assert!(s.parse_json(&json!("x".repeat(1000))).is_ok());
        assert_eq!(
            s.parse_text(" echo hi "),
            Ok(SettingValue::Text("echo hi".into()))
        );
        assert!(s.parse_text("a\u{1b}b").is_err());
        assert_eq!(SettingValue::Text(String::new()).display(Unit::None), "none");
    }

    #[test]
    fn display_carries_units() {
        assert_eq!(SettingValue::Int(30).display(Unit::Seconds), "30s");
        assert_eq!(SettingValue::Number(82.5).display(Unit::Percent), "82.5%");
        assert_eq!(SettingValue::Bool(false).display(Unit::None), "off");
        assert_eq!(SettingValue::Int(32).display(Unit::Columns), "32 cols");
    }
}
