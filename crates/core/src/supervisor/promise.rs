//! A run that ends on a promise [PROM-D1]: the final assistant message announces a step the agent has not
//! taken ("Now I'll run the tests:") and neither reports a result nor asks the user anything. This module
//! is the pure classifier (text in, verdict out) and the rule that turns its verdict into a decision; the
//! supervisor's side is `flow/promise.rs`. docs/supervision.md explains the cues and the labelled set
//! (`tests/data/promise_endings.jsonl`) they are measured on.
//!
//! English only: the cues are English phrases. Text in another language is left alone unless an English
//! cue matches in it.

mod cues;
pub(crate) mod episode;
mod hand_back;
mod text;

pub use self::hand_back::{HandBack, QUOTE_MAX, hand_back, quote_end};

use self::cues::{Cue, healthy_cue, step_cue};
use self::text::{Ending, ending_of};

/// The longest announced step quoted back to the agent (characters).
pub const STEP_QUOTE_MAX: usize = 200;

/// What the classifier makes of a final message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The message ends on a step the agent announced and did not take; `step` quotes it.
    Certain { step: String },
    /// It may: a plan-like ending without the marks of an immediate next step.
    Unsure { step: String },
    /// A result, a summary, a question, a hand-back to the user, a refusal, or nothing to judge.
    No,
}

impl Verdict {
    pub fn step(&self) -> Option<&str> {
        match self {
            Self::Certain { step } | Self::Unsure { step } => Some(step),
            Self::No => None,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Self::Certain { .. } => "certain",
            Self::Unsure { .. } => "unsure",
            Self::No => "no",
        }
    }
}

/// A settled run's ending, as the supervisor sees it.
#[derive(Clone, Copy, Debug)]
pub struct RunEnding<'a> {
    /// The final assistant message's text (its tail is enough).
    pub text: &'a str,
    /// The run made at least one tool call since the user's last message.
    pub had_tool_calls: bool,
    /// The run ended in an error, a cut-off (`length`) or an abort.
    pub ended_badly: bool,
}

/// Classifies the final message's text alone.
pub fn classify(text: &str) -> Verdict {
    let ending = ending_of(text);
    let Some(last) = ending.last_sentence() else {
        return Verdict::No;
    };
    if healthy_cue(&ending) {
        return Verdict::No;
    }
    let step = quote(last);
    match step_cue(&ending) {
        Cue::Strong => Verdict::Certain { step },
        Cue::Weak => Verdict::Unsure { step },
        Cue::None => Verdict::No,
    }
}

/// The rule [PROM-D1, PROM-D2]: a failed or aborted run is another rule's business; a run without a tool
/// call (the user asked something that needed none) is left alone unless the verdict is certain.
pub fn judge(run: RunEnding<'_>) -> Verdict {
    if run.ended_badly {
        return Verdict::No;
    }
    match classify(run.text) {
        Verdict::Unsure { .. } if !run.had_tool_calls => Verdict::No,
        verdict => verdict,
    }
}

/// The announced step as quoted back: one line, bounded, the end kept when it is long.
fn quote(sentence: &str) -> String {
    let line = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = line.chars().count();
    if count <= STEP_QUOTE_MAX {
        return line;
    }
    let tail: String = line.chars().skip(count - (STEP_QUOTE_MAX - 1)).collect();
    format!("…{tail}")
}

impl Ending {
    fn last_sentence(&self) -> Option<&str> {
        self.sentences.last().map(String::as_str)
    }
}

#[cfg(test)]
mod tests;
