//! Every text the guard rails send the model or show the person (docs/supervision.md lists them), in
//! pokeshell's own words.

use super::halt::{Allowance, HaltCause};
use super::ladder::Repeat;

/// customType of the ladder's messages (hidden).
pub const CT_GUARD: &str = "guard-rail";

/// The keys that answer a pause, as the texts name them (docs/keys.md).
pub const ALLOW_KEY: &str = "prefix+a";
pub const LEAVE_KEY: &str = "prefix+x";

/// How much of a call's label a text quotes.
const LABEL_CHARS: usize = 100;

/// A call's label cut to a readable length.
pub fn short(label: &str) -> String {
    if label.chars().count() > LABEL_CHARS {
        let cut: String = label.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        label.to_string()
    }
}

/// GUARD-E1: the first rung.
pub fn ladder_message(repeat: &Repeat) -> String {
    format!(
        "[Guard] pokeshell sees no progress: {}. Doing it again will not change the outcome.\n\
         Take a different approach. If you are stuck, stop and write the user a short report: what you \
         tried, what failed, and what you need from them; then end your turn.",
        repeat.evidence()
    )
}

/// GUARD-E2: the focus line of the handoff document.
pub fn handoff_focus(repeat: &Repeat) -> String {
    format!(
        "The work was going round in circles ({}). Record what was tried and what blocked it, so that \
         the next attempt takes another way.",
        repeat.evidence()
    )
}

/// GUARD-E2: the message that starts the fresh context.
pub fn after_handoff(repeat: &Repeat) -> String {
    format!(
        "[Guard] Your context was handed off to a fresh start because the work made no progress: {}.\n\
         Read the handoff notes, then take a different approach. If you are stuck, stop and write the \
         user a short report of what blocks you.",
        repeat.evidence()
    )
}

/// GUARD-E2 when pi could not compact: the message goes to the same context, and says so.
pub fn after_failed_handoff(repeat: &Repeat) -> String {
    format!(
        "[Guard] pokeshell tried to hand your context off to a fresh start (the compaction failed), \
         because the work still makes no progress: {}.\n\
         Take a clearly different approach now. If you are stuck, stop and write the user a short \
         report of what blocks you; the next repetition stops the run and asks the user.",
        repeat.evidence()
    )
}

/// GUARD-A1: the person let the agent go on; the run the pause stopped is resumed.
pub fn resume_after_allow(cause: &HaltCause, granted: Allowance) -> String {
    let why = match cause {
        HaltCause::Budget { .. } | HaltCause::Daily { .. } => {
            format!(
                "it reached its budget, and the user allowed more ({})",
                granted.label()
            )
        }
        HaltCause::Calls { cap, .. } => {
            format!("it made {cap} model calls on its own, and the user allowed more")
        }
        HaltCause::Runaway(repeat) => format!(
            "it made no progress ({}); the user looked and lets you go on. Do not repeat that unchanged",
            repeat.evidence()
        ),
    };
    format!(
        "[Poke] pokeshell stopped this session because {why}.\nCarry on from where the work stopped: \
         check the current state, then continue the task that was in progress.\nIf that task is already \
         finished, reply with a short note on the final state."
    )
}

/// The person's two answers, named with the keys that give them.
fn answers(offer: Allowance, allow_key: &str, stop_key: &str) -> String {
    format!("{allow_key} to {}, {stop_key} to leave it stopped", offer.label())
}

/// The bell's and the desktop's text for a pause.
pub fn notify_paused(cause: &HaltCause, offer: Allowance, allow_key: &str, stop_key: &str) -> String {
    let what = match cause {
        HaltCause::Budget { .. } => "Budget reached".to_string(),
        HaltCause::Daily { .. } => "Daily budget reached".to_string(),
        HaltCause::Calls { cap, .. } => format!("{cap} model calls without you"),
        HaltCause::Runaway(_) => "No progress".to_string(),
    };
    format!(
        "{what}: the run is stopped ({}). {}.",
        cause.state(),
        answers(offer, allow_key, stop_key)
    )
}

/// GUARD-E1's notice.
pub fn notify_ladder_message(repeat: &Repeat) -> String {
    format!(
        "No progress: {}. Asked the agent for another approach.",
        repeat.evidence()
    )
}

/// GUARD-E2's notice.
pub fn notify_ladder_handoff(repeat: &Repeat) -> String {
    format!(
        "Still no progress: {}. Handing off to a fresh context.",
        repeat.evidence()
    )
}

/// A run started while the budget is spent: stopped at once.
pub fn notify_over_budget(cause: &HaltCause, allow_key: &str) -> String {
    format!(
        "Stopped: {}. Nothing runs until you allow more ({allow_key}).",
        cause.state()
    )
}

/// GUARD-A1's and GUARD-A2's notices.
pub fn notify_allowed(granted: Allowance) -> String {
    format!("Guard rail: {}; the agent goes on.", granted.label())
}

pub fn notify_left_stopped() -> String {
    "Guard rail: left stopped; nothing is sent on its own while the limit holds.".to_string()
}

/// An answer with no pause to answer.
pub fn notify_nothing_paused() -> String {
    "Nothing is paused by a guard rail.".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_e1_e2_the_ladders_texts_name_the_repetition_and_ask_for_another_way() {
        let repeat = Repeat::SameCall {
            call: "bash {\"command\":\"npm test\"}".into(),
            count: 5,
        };
        let first = ladder_message(&repeat);
        assert!(first.starts_with("[Guard]") && first.contains("npm test") && first.contains("5 times"));
        assert!(first.contains("different approach") && first.contains("short report"));
        let after = after_handoff(&repeat);
        assert!(after.contains("handed off") && after.contains("npm test"));
        let failed = after_failed_handoff(&repeat);
        assert!(failed.contains("compaction failed") && failed.contains("npm test"));
        assert!(!failed.contains("handed off to"), "{failed}");
        assert!(handoff_focus(&repeat).contains("npm test"));
    }

    #[test]
    fn guard_a1_the_pause_notice_names_both_answers_and_the_amount() {
        let cause = HaltCause::Budget {
            spent_usd: 5.01,
            limit_usd: 5.0,
        };
        let text = notify_paused(&cause, Allowance::Usd(5.0), "prefix+a", "prefix+x");
        assert!(text.contains("$5.01 of $5.00"), "{text}");
        assert!(
            text.contains("prefix+a to allow $5.00 more, prefix+x to leave it stopped"),
            "{text}"
        );
        let resumed = resume_after_allow(&cause, Allowance::Usd(5.0));
        assert!(
            resumed.starts_with("[Poke]") && resumed.contains("allow $5.00 more"),
            "{resumed}"
        );
        assert_eq!(short(&"x".repeat(300)).chars().count(), LABEL_CHARS);
    }
}
