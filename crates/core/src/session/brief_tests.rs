//! A session's brief of itself, reached through the inputs a real pi would bring: idle, working with
//! a tool, a question, a provider limit, a stall, a give-up, an exit.

use serde_json::json;

use super::restart_tests::{WALL, at, event, heartbeat, pi, tick, without_stall_watch};
use super::*;
use crate::config::{Change, KeyId, SettingValue};
use crate::screen::{ProgramState, ProgramStatus};
use crate::supervisor::LedgerKind;

fn attention(s: &Session, ms: u64) -> (Attention, String) {
    let b = s.brief(at(ms));
    (b.attention, b.state)
}

#[test]
fn a_connected_pi_at_rest_is_idle_and_a_run_is_working_with_its_tool_on_the_wall_clock() {
    let mut s = pi();
    assert_eq!(attention(&s, 500), (Attention::Idle, "idle".into()));
    event(&mut s, json!({"type": "agent_start"}), 1000);
    assert_eq!(attention(&s, 1500), (Attention::Working, "working".into()));
    event(
        &mut s,
        json!({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {}}),
        2000,
    );
    let b = s.brief(at(3000));
    assert_eq!(b.tool, Some(("bash".into(), WALL + 2000)));
    assert_eq!(b.created_wall_ms, WALL);
    assert_eq!(b.attached, 0, "the server fills it");
}

#[test]
fn a_dialog_pi_reports_as_blocked_is_a_question_with_its_title() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    let blocked = ProgramStatus {
        state: ProgramState::Blocked,
        app: Some("pi".into()),
        kind: Some("select".into()),
        msg: Some("Allow the edit?".into()),
    };
    s.handle(Input::ProgramStatus(Some(blocked)), at(2000));
    assert_eq!(
        attention(&s, 2500),
        (Attention::Question, "waiting for you: Allow the edit?".into())
    );
    s.handle(Input::ProgramStatus(None), at(3000));
    assert_eq!(attention(&s, 3500).0, Attention::Working);
}

#[test]
fn a_run_that_ended_on_a_rate_limit_waits_for_the_limit_until_its_reset() {
    let mut s = pi();
    let error = "429: Rate limit reached for mock-model. Please try again in 25s.";
    event(&mut s, json!({"type": "agent_start"}), 1000);
    event(
        &mut s,
        json!({"type": "agent_end", "stopReason": "error", "errorMessage": error}),
        2000,
    );
    let failed = json!({"kind": "message", "role": "assistant", "stopReason": "error",
        "errorMessage": error, "content": []});
    let user = json!({"kind": "message", "role": "user", "content": [{"type": "text", "nonBlank": true}]});
    event(
        &mut s,
        json!({"type": "agent_settled", "aborted": false, "idle": true, "tail": [user, failed]}),
        2100,
    );
    let wait = s.supervisor_view(at(2200)).limit_wait.expect("a planned resume");
    let (attention, state) = attention(&s, 2200);
    assert_eq!(attention, Attention::Limit);
    let until = &crate::format::clock(wait.at_wall_ms, 0)[..5];
    assert_eq!(state, format!("waiting for the limit until {until}"));
    // The user's zone is given, not read: the same moment in local time 90 minutes east of UTC.
    s.handle(
        Input::LocalTime {
            utc_offset_secs: 5400,
        },
        at(2200),
    );
    let (_, state) = super::brief_tests::attention(&s, 2200);
    let local = &crate::format::clock(wait.at_wall_ms + 5_400_000, 0)[..5];
    assert_eq!(state, format!("waiting for the limit until {local}"));
}

#[test]
fn a_silent_run_is_stalled_from_when_its_silence_began() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    for t in (5_000..=120_000).step_by(5_000) {
        heartbeat(&mut s, t);
        tick(&mut s, t);
    }
    assert_eq!(
        attention(&s, 120_500).0,
        Attention::Working,
        "heartbeats, no progress yet"
    );
    heartbeat(&mut s, 121_000);
    tick(&mut s, 121_000);
    assert!(
        s.supervisor_view(at(121_000)).stall_abort_pending,
        "the stall watch stopped it"
    );
    let (attention, state) = attention(&s, 121_000);
    assert_eq!(attention, Attention::Stalled);
    assert_eq!(state, "stalled 2m 00s");
}

#[test]
fn a_bridge_gone_quiet_is_stalled_for_as_long() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    assert_eq!(attention(&s, 15_000).0, Attention::Working);
    assert_eq!(attention(&s, 21_000), (Attention::Stalled, "stalled 20s".into()));
}

#[test]
fn a_refused_restart_is_a_give_up_until_pi_runs_again_and_an_exit_is_last() {
    let mut s = pi();
    without_stall_watch(&mut s);
    let off = Change {
        key: KeyId::PokeMaxRestartsPerHour,
        value: SettingValue::Int(0),
    };
    s.handle(Input::ApplySettings(vec![off]), at(0));
    event(&mut s, json!({"type": "agent_start"}), 1000);
    tick(&mut s, 91_000);
    let (attention_now, state) = attention(&s, 91_000);
    assert_eq!(attention_now, Attention::GaveUp, "{state}");
    assert!(state.starts_with("gave up: pi stopped responding"), "{state}");
    heartbeat(&mut s, 92_000);
    event(&mut s, json!({"type": "agent_start"}), 92_500);
    assert_eq!(attention(&s, 93_000).0, Attention::Working);

    s.handle(
        Input::ChildExited {
            code: 0,
            signal: None,
        },
        at(94_000),
    );
    assert_eq!(
        attention(&s, 94_000),
        (Attention::Exited, "exited (code 0)".into())
    );
}

#[test]
fn only_a_recorded_refusal_raised_to_the_desktop_reads_as_a_give_up() {
    use crate::supervisor::{Action, LedgerRecord, NotifyLevel};
    let record = |kind| {
        Action::Log(LedgerRecord {
            wall_ms: 0,
            session_id: None,
            rule: "POKE-W4",
            kind,
            reason: String::new(),
            sent: None,
        })
    };
    let error = |text: &str, desktop| Action::Notify {
        level: NotifyLevel::Error,
        text: text.into(),
        desktop,
    };
    let mut trouble = brief::Trouble::default();
    // pokeshell acted (an auto-abort), or only told the user: nothing was given up.
    trouble.note(&[record(LedgerKind::Action), error("aborted", true)], at(0), 0);
    trouble.note(&[record(LedgerKind::Declined), error("refused", false)], at(0), 0);
    // pi looks frozen: the restart watch takes over, it is not a give-up.
    let frozen = [
        record(LedgerKind::Declined),
        Action::Unresponsive { aborted_mono_ms: 0 },
        error("frozen", true),
    ];
    trouble.note(&frozen, at(0), 0);
    assert_eq!(trouble, brief::Trouble::default());
    trouble.note(
        &[record(LedgerKind::Declined), error("no more pokes", true)],
        at(0),
        0,
    );
    assert_ne!(trouble, brief::Trouble::default());
    trouble.clear_gave_up();
    assert_eq!(trouble, brief::Trouble::default());
}

#[test]
fn briefs_are_ordered_by_need_then_number() {
    let brief = |number, attention| SessionBrief::new(number, &format!("s{number}"), "/w", attention, "");
    let mut all = vec![
        brief(1, Attention::Idle),
        brief(2, Attention::Exited),
        brief(3, Attention::Working),
        brief(4, Attention::Question),
        brief(5, Attention::Stalled),
        brief(6, Attention::Limit),
        brief(7, Attention::GaveUp),
        brief(8, Attention::Question),
    ];
    order_briefs(&mut all);
    let numbers: Vec<u32> = all.iter().map(|b| b.number).collect();
    assert_eq!(numbers, [4, 8, 7, 6, 5, 3, 1, 2]);
}

#[test]
fn a_promise_ending_from_the_bridge_is_poked_and_is_the_last_intervention() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    let user = json!({"kind": "message", "role": "user", "content": [{"type": "text", "nonBlank": true}]});
    let call = json!({"kind": "message", "role": "assistant", "stopReason": "toolUse",
        "content": [{"type": "toolCall", "id": "c1", "name": "edit", "arguments": {}}]});
    let result = json!({"kind": "message", "role": "toolResult", "toolCallId": "c1", "toolName": "edit",
        "isError": false, "content": [{"type": "text", "nonBlank": true}]});
    let promise = json!({"kind": "message", "role": "assistant", "stopReason": "stop",
        "content": [{"type": "text", "nonBlank": true}]});
    event(
        &mut s,
        json!({"type": "agent_settled", "aborted": false, "idle": true, "tail": [user, call, result, promise],
            "finalText": "The parser change is in. Now I'll run the test suite:"}),
        2000,
    );
    let last = s.brief(at(2100)).last_intervention.expect("an intervention");
    assert!(last.contains("sent the promise poke"), "{last}");
    assert!(last.contains("Now I'll run the test suite:"), "{last}");
}

/// A run that settles with this final text after a tool call.
fn settle_with(s: &mut Session, text: &str, ms: u64) {
    event(s, json!({"type": "agent_start"}), ms);
    let user = json!({"kind": "message", "role": "user", "content": [{"type": "text", "nonBlank": true}]});
    let reply = json!({"kind": "message", "role": "assistant", "stopReason": "stop",
        "content": [{"type": "text", "nonBlank": true}]});
    event(
        s,
        json!({"type": "agent_settled", "aborted": false, "idle": true, "tail": [user, reply],
            "finalText": text}),
        ms + 100,
    );
}

#[test]
fn a_run_that_ends_on_a_question_waits_for_the_person_until_pi_runs_again() {
    let mut s = pi();
    settle_with(
        &mut s,
        "The schema is updated.\n\nShould I also migrate the old rows?",
        1000,
    );
    let need = s.need(at(1200)).expect("a question waits");
    assert_eq!(need.kind, crate::brief::NeedKind::Answer { yes_no: true });
    assert!(
        need.quote.ends_with("Should I also migrate the old rows?"),
        "{need:?}"
    );
    assert_eq!(
        attention(&s, 1200),
        (
            Attention::Question,
            "waiting for you: Should I also migrate the old rows?".into()
        )
    );
    assert_eq!(s.finished().runs, 0, "a question is no finish");
    event(&mut s, json!({"type": "agent_start"}), 2000);
    assert_eq!(s.need(at(2100)), None, "pi runs again: the question is behind");
    assert_eq!(attention(&s, 2100).0, Attention::Working);
}

#[test]
fn healthy_twin_a_run_that_ends_on_a_result_needs_nobody_and_counts_as_finished() {
    let mut s = pi();
    settle_with(&mut s, "All 42 tests pass; the fix is committed.", 1000);
    assert_eq!(s.need(at(1200)), None);
    assert_eq!(attention(&s, 1200), (Attention::Idle, "idle".into()));
    assert_eq!(s.finished().runs, 1);
    assert_eq!(s.finished().quote, "All 42 tests pass; the fix is committed.");
}

/// A reply priced at `usd` (pi's `message_end` with its usage).
fn priced_reply(s: &mut Session, usd: f64, ms: u64) {
    let reply = json!({"role": "assistant", "stopReason": "toolUse",
        "content": [{"type": "text", "nonBlank": true}]});
    let usage = json!({"input": 1000, "output": 200, "cacheRead": 0, "cacheWrite": 0, "costUsd": usd});
    event(
        s,
        json!({"type": "message_end", "message": reply, "usage": usage, "text": "Working on it."}),
        ms,
    );
}

fn budget(s: &mut Session, usd: f64) {
    let change = Change {
        key: KeyId::BudgetUsd,
        value: SettingValue::Number(usd),
    };
    s.handle(Input::ApplySettings(vec![change]), at(0));
}

/// Issue 33: a guard rail's pause needs the person (the server's list pushes it while they are
/// away: `server::away::tests`), quoting what was reached and what allowing more grants; "allow
/// more" from a push's link is the person's own answer (GUARD-A1).
#[test]
fn a_budget_pause_needs_the_person_and_allow_more_from_a_push_is_their_own_answer() {
    use crate::away::Act;
    let mut s = pi();
    budget(&mut s, 1.0);
    event(&mut s, json!({"type": "agent_start"}), 1000);
    priced_reply(&mut s, 0.6, 2000);
    assert_eq!(s.need(at(2000)), None, "under budget: nothing");
    priced_reply(&mut s, 0.6, 3000);
    assert_eq!(attention(&s, 3000).0, Attention::Paused);
    let need = s.need(at(3000)).expect("the pause waits for the person");
    assert_eq!(need.kind, crate::brief::NeedKind::Paused);
    assert!(
        need.quote.starts_with("paused by its budget: $1.20 of $1.00"),
        "{need:?}"
    );
    assert!(need.quote.contains("allow $1.00 more"), "{need:?}");

    // The person allows more from afar: their own answer, and the pause is over.
    let answer = crate::away::AwayAnswer {
        act: Act::Allow,
        event: 1,
        about: "the guard rail's pause".into(),
        refused: None,
    };
    let fx = s.handle(Input::Away(answer), at(4000));
    assert_eq!(s.need(at(4000)), None, "allowed: nothing waits");
    assert_ne!(attention(&s, 4000).0, Attention::Paused);
    let records: Vec<(String, LedgerKind)> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Ledger(r) => Some((r.rule.to_string(), r.kind)),
            _ => None,
        })
        .collect();
    assert!(
        records.contains(&("AWAY-U1".into(), LedgerKind::Action)),
        "{records:?}"
    );
    assert!(
        records.contains(&("GUARD-A1".into(), LedgerKind::Action)),
        "the supervisor's own record of the person's answer: {records:?}"
    );
}

#[test]
fn healthy_twin_a_session_under_its_budget_never_needs_the_person() {
    let mut s = pi();
    budget(&mut s, 5.0);
    event(&mut s, json!({"type": "agent_start"}), 1000);
    for i in 0..8 {
        let ms = 2000 + i * 1000;
        priced_reply(&mut s, 0.5, ms);
        assert_ne!(attention(&s, ms).0, Attention::Paused);
        assert_eq!(s.need(at(ms)), None, "$4.00 of $5.00: nothing to push");
    }
}

/// The pause is decided once (`need_in`), and the lists read it from there: the state is the
/// halt's own words, and a dialog pi shows meanwhile does not hide the pause from either.
#[test]
fn a_pause_is_one_fact_for_the_lists_and_the_pushes_even_over_a_dialog() {
    let mut s = pi();
    budget(&mut s, 1.0);
    event(&mut s, json!({"type": "agent_start"}), 1000);
    priced_reply(&mut s, 1.2, 2000);
    let blocked = ProgramStatus {
        state: ProgramState::Blocked,
        app: Some("pi".into()),
        kind: Some("select".into()),
        msg: Some("Allow the edit?".into()),
    };
    s.handle(Input::ProgramStatus(Some(blocked)), at(2500));
    assert_eq!(
        attention(&s, 3000),
        (Attention::Paused, "paused by its budget: $1.20 of $1.00".into())
    );
    let need = s.need(at(3000)).expect("the pause waits for the person");
    assert_eq!(need.kind, crate::brief::NeedKind::Paused);
    let brief = s.brief(at(3000));
    assert_eq!(brief.state, "paused by its budget: $1.20 of $1.00");
    assert_eq!(brief.offer.as_deref(), Some("allow $1.00 more"));
}
