//! Every text pokeshell sends to the model or shows the user, in one place (docs/supervision.md lists
//! them). Written in pokeshell's own words; they carry the facts of the originals' texts.

/// customType of pokes, manual and automatic (hidden).
pub const CT_POKE: &str = "poke";
/// customType of the empty-reply retry (hidden).
pub const CT_RETRY: &str = "stalled-agent-recovery-retry";
/// customType of the loop guard's messages (hidden).
pub const CT_LOOP: &str = "stalled-agent-recovery-loop";
/// customType of the promise poke (hidden).
pub const CT_PROMISE: &str = "promise-poke";
/// customType of a delivered wakeup (visible).
pub const CT_WAKEUP: &str = "wakeup";
/// customType of the person's review of the changes (visible).
pub const CT_REVIEW: &str = "pokeshell-review";

pub const ENTRY_WAKEUP_SCHEDULED: &str = "pokeshell-wakeup-scheduled";
pub const ENTRY_WAKEUP_FIRED: &str = "pokeshell-wakeup-fired";
pub const ENTRY_WAKEUP_CANCELLED: &str = "pokeshell-wakeup-cancelled";
pub const ENTRY_WAKEUP_FAILED: &str = "pokeshell-wakeup-failed";
/// A planned resume after a provider error (LIMIT-W1); `pokeshell-limit-done` ends it.
pub const ENTRY_LIMIT_WAIT: &str = "pokeshell-limit-wait";
pub const ENTRY_LIMIT_DONE: &str = "pokeshell-limit-done";
/// The user's Esc stopped a run (ARB-ABORT); `pokeshell-stop-lifted` ends it.
pub const ENTRY_STOPPED: &str = "pokeshell-stopped";
pub const ENTRY_STOP_LIFTED: &str = "pokeshell-stop-lifted";

const CARRY_ON: &str = "Carry on from where the work stopped: check the current state, then continue the task that \
                        was in progress.";

fn error_note(error: Option<&str>) -> String {
    error
        .map(|error| format!(" (error: \"{error}\")"))
        .unwrap_or_default()
}

pub fn manual_poke() -> String {
    format!(
        "[Poke] The user poked this session by hand because it looked stuck.\n{CARRY_ON}\nIf that task is \
         already finished, reply with a short note on the final state."
    )
}

/// POKE-W5, completed compaction.
pub fn compaction_poke(tokens_before: Option<u64>, error: Option<&str>) -> String {
    let tokens = match tokens_before {
        Some(tokens) if tokens > 0 => format!(" (about {}k tokens)", (tokens + 500) / 1000),
        _ => String::new(),
    };
    format!(
        "[Poke] The context was compacted{tokens}, but the turn that was running got cut off{} and never \
         restarted.\nCarry on from where the work stopped: read the compaction summary, then continue the task \
         that was in progress.\nIf that task is already finished, reply with a short note on the final state.",
        error_note(error)
    )
}

/// POKE-W5, failed compaction.
pub fn failed_compaction_poke(error: Option<&str>) -> String {
    format!(
        "[Poke] An automatic context compaction failed{}, and the turn that was running got cut off.\n{CARRY_ON}\n\
         If the context is still too full, ask the user for a manual /compact or make the task smaller.",
        error_note(error)
    )
}

/// POKE-O1.
pub fn orphan_poke(tool: &str, elapsed_seconds: u64) -> String {
    format!(
        "[Poke] The tool call '{tool}' is still running after {elapsed_seconds}s, but the run that started it \
         was interrupted and the agent went idle.\n{CARRY_ON}\nIf that tool call has finished by now, use its \
         result."
    )
}

/// SAR-S8.
pub fn empty_retry() -> String {
    "Your last reply ended without any visible output. Continue, and finish the response.".to_string()
}

fn times(count: u32) -> &'static str {
    if count == 1 { "time" } else { "times" }
}

/// SAR-L4: the continuation between nudges (`nudged` false), a nudge, or the last nudge.
pub fn loop_message(tool: &str, count: u32, nudged: bool, last: bool) -> String {
    match (nudged, last) {
        (false, _) => loop_continuation(tool, count),
        (true, false) => loop_nudge(tool, count),
        (true, true) => loop_final_nudge(tool, count),
    }
}

/// SAR-L4, between two nudges.
pub fn loop_continuation(tool: &str, count: u32) -> String {
    format!(
        "The {tool} call has failed {count} {} so far. Do not send it again unchanged: try another approach, \
         or tell the user what is failing and stop.",
        times(count)
    )
}

/// SAR-L4, at a multiple of the loop threshold.
pub fn loop_nudge(tool: &str, count: u32) -> String {
    format!(
        "The {tool} call has now failed {count} {} with the very same arguments. Do not send it again \
         unchanged: try another approach, or tell the user what is failing and stop.",
        times(count)
    )
}

/// SAR-L4, the last nudge: stop and report.
pub fn loop_final_nudge(tool: &str, count: u32) -> String {
    format!(
        "The {tool} call has now failed {count} {} with the very same arguments. Stop calling it. Tell the \
         user in plain text what is failing, then end your turn.",
        times(count)
    )
}

/// PROM-P1: quotes the step the agent announced and leaves it two ways out: take it, or say in one line
/// what it needs from the user. Never a bare "continue", which would read as a blanket permission.
pub fn promise_poke(step: &str) -> String {
    format!(
        "[Poke] Your last message announced a next step, but the turn ended before you took it:\n\
         > {step}\n\
         If that step is still the right one, take it now. If it needs something from the user first (a \
         decision, a permission, a missing detail), say in one line what you need, and end your turn."
    )
}

/// PROM-A1: the second opinion's instructions and question; the answer is one word.
pub const PROMISE_ASK_SYSTEM: &str =
    "You judge how a coding agent's message ends. Answer with one word: DONE or STEP.";

pub fn promise_question(message: &str) -> String {
    format!(
        "Here is the end of the last message a coding agent wrote before its turn ended:\n\n\
         <message>\n{message}\n</message>\n\n\
         Did this message end the task (a result, a summary, a question or a hand-back to the user), or \
         did it announce a next step the agent had not taken yet? Answer DONE or STEP."
    )
}

/// WAK-P4: the prompt, and the reason when there is one.
pub fn wakeup_message(prompt: &str, reason: &str) -> String {
    let reason = reason.trim();
    if reason.is_empty() {
        prompt.to_string()
    } else {
        format!("{prompt}\n\n[scheduled wakeup: {reason}]")
    }
}

/// Why the stalled-agent recovery thinks a reply is empty (SAR-D1).
pub fn empty_reason(thinking_only: bool, tool_result: bool) -> &'static str {
    if tool_result {
        "The run stopped after a tool result, with no reply from the assistant"
    } else if thinking_only {
        "The reply held only reasoning, no output text"
    } else {
        "The reply was empty"
    }
}

// Tool replies (WAK-T1, WAK-T2).

pub fn wakeup_scheduled(id: &str, delay_seconds: u64, reason: &str) -> String {
    let reason = reason.trim();
    if reason.is_empty() {
        format!("Wakeup {id} is set: it fires in {delay_seconds}s.")
    } else {
        format!("Wakeup {id} is set: it fires in {delay_seconds}s ({reason}).")
    }
}

pub fn wakeup_cancelled(id: &str, existed: bool) -> String {
    if existed {
        format!("Wakeup {id} cancelled.")
    } else {
        format!("There is no pending wakeup {id}.")
    }
}

pub fn wakeups_cancelled(count: usize) -> String {
    let noun = if count == 1 { "wakeup" } else { "wakeups" };
    format!("{count} pending {noun} cancelled.")
}

pub fn wakeup_needs_prompt() -> String {
    "schedule_wakeup needs a non-empty prompt: the text to deliver when it fires. No wakeup was set."
        .to_string()
}

pub fn wakeups_switched_off() -> String {
    "pokeshell's supervision is switched off, so no wakeup was set.".to_string()
}

pub fn unknown_tool(name: &str) -> String {
    format!("pokeshell has no tool named '{name}'.")
}

// Notifications.

pub fn notify_auto_abort(tool: &str, threshold_seconds: u64) -> String {
    format!("🔴 pokeshell aborted '{tool}': it ran past the {threshold_seconds}s threshold")
}

pub fn notify_orphan_poke(tool: &str) -> String {
    format!("📌 pokeshell resumed the agent: its run died while '{tool}' was still running")
}

pub fn notify_wake_poke(failed: bool) -> String {
    if failed {
        "📌 pokeshell resumed the agent: a compaction failed and cut its turn off".to_string()
    } else {
        "📌 pokeshell resumed the agent: a compaction cut its turn off".to_string()
    }
}

pub fn notify_poke_limit(max: u32) -> String {
    format!("✋ pokeshell stops resuming this stall: {max} pokes already sent without success")
}

pub fn notify_manual_poke() -> String {
    "📌 Poke delivered: the agent was asked to pick its work back up".to_string()
}

pub fn notify_manual_poke_held() -> String {
    "📌 Poke queued: it goes out when the running compaction ends".to_string()
}

pub fn notify_review_sent() -> String {
    "📝 Review delivered: the agent has your comments on its changes".to_string()
}

pub fn notify_review_not_sent(why: &str) -> String {
    format!("⚠️ The review was not sent: {why}")
}

pub fn notify_not_connected(what: &str) -> String {
    format!("⚠️ {what}: pi's bridge is not connected")
}

pub fn notify_retry(reason: &str, attempt: u32, max: u32) -> String {
    format!("🔁 {reason}. Asking the agent to continue ({attempt}/{max})")
}

pub fn notify_retry_give_up(max: u32) -> String {
    let noun = if max == 1 { "attempt" } else { "attempts" };
    format!("✋ No usable reply after {max} {noun}; pokeshell stops retrying")
}

pub fn notify_loop_nudge(tool: &str, count: u32, last: bool) -> String {
    if last {
        format!("🔁 '{tool}' failed {count} times with the same arguments: told the agent to stop and report")
    } else {
        format!("🔁 '{tool}' failed {count} times with the same arguments: told the agent to change course")
    }
}

pub fn notify_loop_give_up(tool: &str, nudges: u32) -> String {
    format!("✋ '{tool}' still fails after {nudges} nudges; pokeshell no longer steps in on this loop")
}

pub fn notify_wakeup_fired(id: &str, reason: &str) -> String {
    let reason = reason.trim();
    if reason.is_empty() {
        format!("⏰ Wakeup {id} fired")
    } else {
        format!("⏰ Wakeup {id} fired: {reason}")
    }
}

pub fn notify_send_failed(what: &str, error: &str) -> String {
    format!("⚠️ {what} could not be delivered: {error}")
}

pub fn notify_handoff(percent: f64, limit: f64) -> String {
    format!("📝 Context at {percent:.0}% (limit {limit:.0}%): compacting with a handoff document")
}

pub fn notify_manual_handoff() -> String {
    "📝 Writing a handoff document and compacting".to_string()
}

pub fn notify_handoff_busy() -> String {
    "📝 A compaction is already running; try the handoff again when it ends".to_string()
}

pub fn notify_handoff_failed(error: &str) -> String {
    format!("⚠️ Handoff compaction failed: {error}")
}

/// RST-R1: pi was restarted in the middle of a run.
pub fn restart_poke(reason: &str) -> String {
    format!(
        "[Poke] pokeshell had to restart pi in the middle of your work ({reason}); the session was \
         reloaded from its file, so the last step may not have finished or been recorded.\n{CARRY_ON}\n\
         If that task is already finished, reply with a short note on the final state."
    )
}

pub fn notify_restart_resume() -> String {
    "pi was restarted: asked the agent to carry on".to_string()
}

pub fn notify_restart(reason: &str) -> String {
    format!("{reason}: restarting pi on its session")
}

/// STALL-S1 and STALL-R1: the resume after pokeshell stopped a silent run.
pub fn stall_resume(stream: bool, seconds: u64) -> String {
    let what = if stream {
        format!(
            "[Poke] The model provider's reply stream stalled: nothing arrived for {seconds} seconds, so \
             pokeshell stopped that request."
        )
    } else {
        format!(
            "[Poke] The run never finished: nothing happened for {seconds} seconds after its work ended, so \
             pokeshell stopped it."
        )
    };
    format!(
        "{what}\nContinue from where you were: check what the last steps already did, then carry on with the \
         task in progress.\nIf that task is already finished, reply with a short note on the final state."
    )
}

/// LIMIT-W1: the resume when the planned wait after a provider error is over.
pub fn limit_resume(kind: &str, error_line: &str, waited_s: u64) -> String {
    format!(
        "[Poke] The last model request failed with a {kind} from the provider (\"{error_line}\"), and pi's own \
         retries did not get past it. pokeshell waited {waited_s}s for it to clear; that wait is over.\n\
         {CARRY_ON}\nIf that task is already finished, reply with a short note on the final state."
    )
}

pub fn notify_stall_abort(stream: bool, seconds: u64) -> String {
    if stream {
        format!("🔴 pokeshell stopped a stalled model stream (silent for {seconds}s) and will resume it")
    } else {
        format!("🔴 pokeshell stopped a run that never settled (silent for {seconds}s) and will resume it")
    }
}

pub fn notify_promise_poke() -> String {
    "📌 The agent announced a step and stopped; pokeshell asked it to take the step".to_string()
}

pub fn notify_promise_give_up(max: u32) -> String {
    format!(
        "✋ The agent stopped on an announced step again; {max} promise poke(s) sent already, over to you"
    )
}

pub fn notify_stall_resume() -> String {
    "📌 pokeshell resumed the agent after a stall".to_string()
}

pub fn notify_stall_give_up(max: u32) -> String {
    format!("⚠️ The agent stalled again; pokeshell already resumed it {max} time(s) and leaves it to you")
}

pub fn notify_frozen(seconds: u64) -> String {
    format!("🔴 pi did not stop {seconds}s after pokeshell aborted it: it looks frozen")
}

pub fn notify_limit_wait(kind: &str, wait: &str) -> String {
    format!("⏸ The provider answered with a {kind}: pokeshell resumes the agent in {wait} (prefix+p: now)")
}

pub fn notify_limit_resume(kind: &str) -> String {
    format!("📌 pokeshell resumed the agent after the {kind} wait")
}

pub fn notify_limit_stop(what: &str) -> String {
    format!("🔴 The agent stopped on a provider error pokeshell will not wait out: {what}")
}
