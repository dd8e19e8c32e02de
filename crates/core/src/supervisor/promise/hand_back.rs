//! The other side of the promise classifier: of the endings it calls "no", the ones that hand the turn
//! back to the person and wait for them (a question, "let me know", an offer, a refusal), with what a
//! message to the person should quote. A result or a summary hands nothing back: nobody is waited for.

use super::cues::healthy_cue;
use super::text::ending_of;

/// The most of the message's end quoted to the person (characters).
pub const QUOTE_MAX: usize = 300;

/// A final message that waits for the person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandBack {
    /// The message's last lines, at most [`QUOTE_MAX`] characters (the start cut with "…").
    pub quote: String,
    /// It ends on a question a plain yes or no answers ("Should I also migrate the old rows?").
    pub yes_no: bool,
}

/// Whether `text`, a run's final message, hands the turn back to the person.
pub fn hand_back(text: &str) -> Option<HandBack> {
    let ending = ending_of(text);
    ending.sentences.last()?;
    if !healthy_cue(&ending) {
        return None;
    }
    Some(HandBack {
        quote: quote_end(text),
        yes_no: yes_no(&ending.last_lower()),
    })
}

/// Words that open a question a yes or a no answers.
const YES_NO_OPENERS: &[&str] = &[
    "should", "shall", "do", "does", "did", "can", "could", "would", "will", "is", "are", "may", "want",
    "ok", "okay", "proceed", "continue", "go",
];

/// "Should I also migrate the old rows?" is; "Which one do you prefer?" and "A or B?" are not.
fn yes_no(last: &str) -> bool {
    let last = last.trim();
    if !last.ends_with('?') || last.contains(" or ") {
        return false;
    }
    // The question itself: after a lead-in such as "Before I go on, should I …?".
    let question = last.rsplit([',', ';', ':']).next().unwrap_or(last).trim();
    let first = question
        .split(|c: char| !c.is_alphabetic() && c != '\'')
        .find(|w| !w.is_empty())
        .unwrap_or("");
    YES_NO_OPENERS.contains(&first)
}

/// The end of a message as quoted to the person: its last lines, within [`QUOTE_MAX`].
pub fn quote_end(text: &str) -> String {
    last_lines(text, QUOTE_MAX)
}

/// The end of `text`: whole lines from the last back, while they fit in `max` characters; a last line
/// longer than that keeps its end.
fn last_lines(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.trim().lines().map(str::trim_end).collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut count = 0;
    for line in lines.iter().rev() {
        let n = line.chars().count() + usize::from(!kept.is_empty());
        if !kept.is_empty() && count + n > max {
            break;
        }
        kept.push(line);
        count += n;
    }
    kept.reverse();
    // Blank lines at the start of what is kept say nothing.
    while kept.first().is_some_and(|l| l.trim().is_empty()) {
        kept.remove(0);
    }
    let joined = kept.join("\n");
    let total = joined.chars().count();
    if total <= max {
        return joined;
    }
    let tail: String = joined.chars().skip(total - (max - 1)).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_hands_back_and_a_yes_no_one_says_so() {
        let h = hand_back("I updated the schema.\n\nShould I also migrate the old rows?").unwrap();
        assert!(h.yes_no);
        assert_eq!(
            h.quote,
            "I updated the schema.\n\nShould I also migrate the old rows?"
        );
        let h = hand_back("Which of the two layouts do you prefer?").unwrap();
        assert!(!h.yes_no, "not a yes or no");
        let h = hand_back("Do you want the tests in Rust or in Python?").unwrap();
        assert!(!h.yes_no, "a choice");
        let h = hand_back("Before I go on, should I delete the cache?").unwrap();
        assert!(h.yes_no, "{h:?}");
    }

    #[test]
    fn a_let_me_know_and_an_offer_hand_back() {
        let h = hand_back("The build is green. Let me know if you want the docs updated too.").unwrap();
        assert!(!h.yes_no);
        assert!(hand_back("If you'd like, I can also add a benchmark.").is_some());
        assert!(hand_back("I can't reach the database from here.").is_some());
    }

    #[test]
    fn a_result_or_a_promise_hands_nothing_back() {
        assert_eq!(hand_back("All 42 tests pass and the fix is committed."), None);
        assert_eq!(hand_back("Now I'll run the tests:"), None);
        assert_eq!(hand_back(""), None);
    }

    #[test]
    fn the_quote_keeps_the_last_lines_within_the_bound() {
        let long = format!("{}\nfirst line\nShall I go on?", "x".repeat(400));
        let h = hand_back(&long).unwrap();
        assert_eq!(h.quote, "first line\nShall I go on?");
        let one = format!("{} — shall I go on?", "y".repeat(500));
        let h = hand_back(&one).unwrap();
        assert_eq!(h.quote.chars().count(), QUOTE_MAX);
        assert!(h.quote.starts_with('…') && h.quote.ends_with("shall I go on?"));
    }
}
