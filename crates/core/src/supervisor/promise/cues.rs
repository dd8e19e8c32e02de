//! The English cues [PROM-D1]: what marks an ending as a hand-back to the user, and what marks it as an
//! announced step. Measured on `tests/data/promise_endings.jsonl` (docs/supervision.md).

use super::text::Ending;

/// How strongly the last sentence announces a step the agent did not take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cue {
    /// A first-person next step marked as immediate (a trailing colon, "now", "next", "let me", a
    /// command shown but not run, a "moving on to").
    Strong,
    /// Plan-like: "I'll …" with no mark of immediacy, "I need to …", "the next step is …". A trailing
    /// colon alone is no cue: it is not English, and other languages are left alone.
    Weak,
    None,
}

/// Anywhere in the last paragraph: the agent hands the turn back or waits for the user.
const HAND_BACK: &[&str] = &[
    "let me know",
    "if you'd like",
    "if you would like",
    "if you want",
    "if you need",
    "if you prefer",
    "would you like",
    "do you want",
    "shall i",
    "should i ",
    "want me to",
    "feel free",
    "your call",
    "up to you",
    "i'll wait",
    "i will wait",
    "waiting for you",
    "waiting for your",
    "awaiting your",
    "once you",
    "when you're ready",
    "when you are ready",
    "please confirm",
    "please let me",
    "please provide",
    "please share",
    "please check",
    "please run",
    "please try",
    "please review",
    "you can now",
    "you can run",
    "you can try",
    "you can use",
    "you should now",
    "you'll need to",
    "you will need to",
    "you need to",
    "you may want",
    "you might want",
    "i'll stop here",
    "stopping here",
    "pausing here",
    "i'll leave",
    "i will leave",
    "i'll be here",
    "anything else",
    "hope this helps",
    "happy to help",
    "i'd be happy",
    "i'll be happy",
    "i'd recommend",
    "i recommend",
    "i suggest",
    "i'd suggest",
    "before i proceed",
    "before i continue",
    "before i go",
    "your approval",
    "your confirmation",
    "your go-ahead",
    "over to you",
    "back to you",
];

/// At the start of the last sentence: a refusal or an inability.
const REFUSAL: &[&str] = &[
    "i can't",
    "i cannot",
    "i can not",
    "i won't",
    "i will not",
    "i'm unable",
    "i am unable",
    "i'm not able",
    "i am not able",
    "i'm sorry",
    "sorry, ",
    "unfortunately",
];

/// In the last sentence: a first-person step about to be taken.
const FIRST_PERSON: &[&str] = &[
    "let me ",
    "let's ",
    "lets ",
    "i'll ",
    "i will ",
    "i'm going to ",
    "i am going to ",
    "im going to ",
    "i'm gonna ",
    "i'm about to ",
    "i am about to ",
    "we'll ",
    "we will ",
    "i shall ",
];

/// "let me"/"let's": an immediate step by their nature, with or without a marker.
const IMMEDIATE_BY_NATURE: &[&str] = &["let me ", "let's ", "lets "];

/// At the start of the last sentence (after "ok", "now", …): moving on to work.
const MOVING_ON: &[&str] = &[
    "moving on",
    "on to ",
    "onto ",
    "now to ",
    "next up",
    "time to ",
    "proceeding ",
    "continuing ",
    "going to ",
    "running ",
    "checking ",
    "testing ",
    "looking at ",
    "looking into ",
    "starting ",
    "trying ",
    "installing ",
    "downloading ",
    "building ",
    "writing ",
    "creating ",
    "updating ",
    "fixing ",
    "adding ",
    "reading ",
    "searching ",
    "verifying ",
    "applying ",
    "investigating ",
];

/// In the last sentence: a step still to take, said without a first-person future.
const STILL_TO_DO: &[&str] = &[
    "i need to ",
    "i should ",
    "i must ",
    "i have to ",
    "we need to ",
    "we should ",
    "next step",
    "still need",
    "remaining step",
    "the plan is",
];

/// First-person futures that hand back rather than announce work.
const NOT_A_STEP: &[&str] = &[
    "i'll keep",
    "i'll stop",
    "i'll hold",
    "i'll defer",
    "i'll await",
    "i'll stand by",
    "i'll let you",
    "i'll need your",
    "i'll need you",
    "i will need",
    "i'll be ",
    "let me summarize",
    "let me recap",
    "let me explain",
    "let me clarify",
    "let me be clear",
    "to summarize",
    "in summary",
];

/// A step put off on purpose ("I'll check back later"): the agent means to stop now.
const DEFERRED: &[&str] = &[
    "later",
    "soon",
    "tomorrow",
    "in a while",
    "in a bit",
    "check back",
    "come back",
    "once it finishes",
    "once it's done",
    "when it finishes",
    "when it's done",
    "after the wakeup",
];

/// Immediacy: a step the agent means to take right away.
const MARKERS: &[&str] = &[
    "now",
    "next",
    "first",
    "then",
    "again",
    "immediately",
    "quickly",
    "directly",
];

/// Words that report a result: they turn a plan-like ending into a summary.
const RESULT: &[&str] = &[
    "done",
    "complete",
    "completed",
    "finished",
    "passes",
    "passing",
    "fixed",
    "works",
    "working",
];

/// Openers skipped before the start-of-sentence cues.
const OPENERS: &[&str] = &[
    "ok",
    "okay",
    "great",
    "good",
    "perfect",
    "alright",
    "right",
    "excellent",
    "nice",
    "so",
    "now",
    "next",
    "then",
    "first",
    "finally",
    "and",
    "cool",
    "sure",
    "well",
    "also",
    "lastly",
];

/// The user gets the turn back: a question, an offer, a wait, a refusal.
pub(crate) fn healthy_cue(ending: &Ending) -> bool {
    let last = ending.last_lower();
    if last.ends_with('?') {
        return true;
    }
    if HAND_BACK.iter().any(|cue| ending.paragraph.contains(cue)) {
        return true;
    }
    let start = skip_openers(&last);
    if REFUSAL.iter().any(|cue| start.starts_with(cue)) {
        return true;
    }
    // A conditional offer ("If so, I'll …", "Otherwise I'll …") leaves the choice to the user.
    [
        "if so",
        "if not",
        "if that",
        "if this",
        "otherwise",
        "if needed",
        "if necessary",
    ]
    .iter()
    .any(|cue| start.starts_with(cue))
}

pub(crate) fn step_cue(ending: &Ending) -> Cue {
    let whole = ending.last_lower();
    // "Next step: I'll …": a short label before the colon; the step is what follows it.
    let last = match whole.split_once(':') {
        Some((label, rest)) if label.split_whitespace().count() <= 3 && !rest.trim().is_empty() => {
            rest.trim().to_string()
        }
        _ => whole,
    };
    if NOT_A_STEP.iter().any(|cue| last.contains(cue))
        || DEFERRED.iter().any(|cue| has_phrase(&last, cue))
        || gives_content_after_colon(&last)
    {
        return Cue::None;
    }
    let colon = last.ends_with(':');
    let trailing = colon || last.ends_with("...") || last.ends_with('\u{2026}') || ending.code_after;
    let marked = trailing || MARKERS.iter().any(|marker| has_word(&last, marker));
    let starts = starts(&last);
    let first_person = FIRST_PERSON.iter().any(|cue| has_phrase(&last, cue));
    let begins = |cues: &[&str]| {
        starts
            .iter()
            .any(|start| cues.iter().any(|cue| start.starts_with(cue)))
    };
    let immediate = begins(IMMEDIATE_BY_NATURE);
    let moving_on = starts
        .iter()
        .any(|start| MOVING_ON.iter().any(|cue| start.starts_with(cue)) && !gerund_is_subject(start));
    let reports_result = RESULT.iter().any(|word| has_word(&last, word));
    if ending.list {
        // A plan announced before a list ("I'll do the following:") is a step; a summary is not.
        return if first_person && colon {
            Cue::Weak
        } else {
            Cue::None
        };
    }
    if (first_person && marked) || immediate || (moving_on && marked) {
        return Cue::Strong;
    }
    if reports_result {
        return Cue::None;
    }
    if first_person || moving_on || STILL_TO_DO.iter().any(|cue| has_phrase(&last, cue)) {
        return Cue::Weak;
    }
    Cue::None
}

/// "Running the tests now shows all green": the gerund names what was done, a finite verb reports on it.
fn gerund_is_subject(sentence: &str) -> bool {
    const REPORTING: &[&str] = &[
        "is",
        "was",
        "were",
        "are",
        "shows",
        "showed",
        "fixed",
        "fixes",
        "revealed",
        "confirmed",
        "worked",
        "works",
        "failed",
        "fails",
        "gave",
        "gives",
        "made",
        "did",
        "does",
        "took",
        "takes",
    ];
    let mut words = sentence.split(|c: char| !c.is_alphanumeric() && c != '\'');
    words.next().is_some_and(|first| first.ends_with("ing")) && words.any(|word| REPORTING.contains(&word))
}

/// "Let me summarize: A, B and C." gives what it announces after the colon.
fn gives_content_after_colon(sentence: &str) -> bool {
    sentence
        .split_once(':')
        .is_some_and(|(_, after)| after.split_whitespace().count() >= 3)
}

fn skip_openers(sentence: &str) -> &str {
    starts(sentence).pop().unwrap_or(sentence)
}

/// The sentence from its start and after each opener it begins with ("alright, next up …" is read as
/// itself, as "next up …" and as "up …").
fn starts(sentence: &str) -> Vec<&str> {
    let mut rest = sentence.trim_start();
    let mut out = vec![rest];
    loop {
        let word_end = rest.find(|c: char| !c.is_alphabetic()).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if word.is_empty() || !OPENERS.contains(&word) {
            return out;
        }
        let after = rest[word_end..].trim_start_matches([',', '!', '.', ';', ' ', '-', '\u{2014}']);
        if after.len() == rest.len() {
            return out;
        }
        rest = after;
        out.push(rest);
    }
}

/// `phrase` at the start of `text` or after a non-letter.
fn has_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        text[..at]
            .chars()
            .next_back()
            .is_none_or(|before| !before.is_alphanumeric() && before != '\'')
    })
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before_ok = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let after_ok = text[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        before_ok && after_ok
    })
}
