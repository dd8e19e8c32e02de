//! The same reply again and again [GUARD-L3]: runs that end on the very same text (whitespace aside)
//! since the person's last word. Only a run's final reply counts (one with no tool call): inside a run
//! a repeated sentence before varied calls ("Let me run the tests again.") is ordinary work, and the
//! calls themselves are watched by GUARD-L1 and GUARD-L2. A wakeup that fired between two replies makes
//! them a poll's reports ("CI is still running; I'll check again."), not a repetition.

use std::hash::{DefaultHasher, Hash, Hasher};

/// How much of a reply the ledger and the message quote.
const QUOTE_CHARS: usize = 80;

#[derive(Debug, Default)]
pub struct ReplyRepeats {
    last: Option<u64>,
    quote: String,
    count: u32,
}

/// The reply with its whitespace collapsed; empty for a blank one.
fn normal(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The start of a reply, on one line, cut with an ellipsis.
pub fn quote(text: &str) -> String {
    let one_line = normal(text);
    if one_line.chars().count() > QUOTE_CHARS {
        let cut: String = one_line.chars().take(QUOTE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

impl ReplyRepeats {
    /// A run ended on this reply; returns how many times in a row it was given, and its quote.
    /// A blank reply is the empty-reply retry's business: it breaks the count.
    pub fn reply(&mut self, text: &str) -> Option<(String, u32)> {
        let text = normal(text);
        if text.is_empty() {
            self.clear();
            return None;
        }
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = hasher.finish();
        if self.last == Some(key) {
            self.count = self.count.saturating_add(1);
        } else {
            self.last = Some(key);
            self.quote = quote(&text);
            self.count = 1;
        }
        Some((self.quote.clone(), self.count))
    }

    /// A wakeup fired, the person spoke, or a ladder step was taken: the count starts again.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_l3_the_same_final_reply_is_counted_whitespace_aside() {
        let mut r = ReplyRepeats::default();
        assert_eq!(
            r.reply("I cannot find the file."),
            Some(("I cannot find the file.".into(), 1))
        );
        assert_eq!(
            r.reply("  I cannot find\nthe file. "),
            Some(("I cannot find the file.".into(), 2))
        );
        assert_eq!(
            r.reply("I cannot find the file."),
            Some(("I cannot find the file.".into(), 3))
        );
    }

    #[test]
    fn guard_l3_healthy_twin_replies_that_differ_are_left_alone() {
        let mut r = ReplyRepeats::default();
        for (i, text) in [
            "Fixed the parser.",
            "Tests pass now.",
            "Pushed the branch.",
            "Fixed the parser.",
        ]
        .iter()
        .enumerate()
        {
            assert_eq!(r.reply(text).map(|(_, n)| n), Some(1), "reply {i}");
        }
    }

    #[test]
    fn guard_l3_healthy_twin_a_polls_reports_between_wakeups_start_again() {
        let mut r = ReplyRepeats::default();
        for _ in 0..5 {
            assert_eq!(
                r.reply("CI still running; I'll check again.").map(|(_, n)| n),
                Some(1)
            );
            r.clear();
        }
    }

    #[test]
    fn guard_l3_a_blank_reply_breaks_the_count_and_long_ones_are_quoted_short() {
        let mut r = ReplyRepeats::default();
        r.reply("same");
        assert_eq!(r.reply("  \n"), None);
        assert_eq!(r.reply("same").map(|(_, n)| n), Some(1));
        let long = "word ".repeat(100);
        let (q, _) = r.reply(&long).expect("counted");
        assert_eq!(q.chars().count(), QUOTE_CHARS);
        assert!(q.ends_with('…'));
    }
}
