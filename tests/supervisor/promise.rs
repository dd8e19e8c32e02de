//! PROM-D1..PROM-B1: a run that ends on a step the agent announced and did not take gets one poke that
//! quotes the step, through the arbiter; every healthy twin is left alone.

use pokeshell_core::supervisor::{InputSource, LedgerKind, Message, StopReason, texts};
use serde_json::json;

use super::sim::{Settled, Sim, call_and_result, text_reply};

const PROMISE: &str =
    "Ok, the parser change is in. Now I'll run the test suite to make sure nothing else broke:";

fn fresh() -> Sim {
    Sim::configured(|config| config.global_cooldown_seconds = 0)
}

/// The user asked, the agent worked with a tool, then ended on `last`.
fn worked_then(last: &str) -> Vec<Message> {
    let mut tail = vec![Message::user("fix the parser")];
    tail.extend(call_and_result(
        "c1",
        "edit",
        json!({"path": "src/parse.rs"}),
        false,
    ));
    tail.push(text_reply(last));
    tail
}

/// The user asked a question and the agent answered without a tool call.
fn answered(last: &str) -> Vec<Message> {
    vec![Message::user("what does this flag do?"), text_reply(last)]
}

fn promise_pokes(sim: &Sim) -> Vec<String> {
    sim.sent_of(texts::CT_PROMISE)
        .into_iter()
        .map(|sent| sent.text)
        .collect()
}

#[test]
fn prom_p1_a_promise_ending_gets_one_poke_quoting_the_step() {
    let mut sim = fresh();
    sim.settle_with(worked_then(PROMISE));
    let pokes = promise_pokes(&sim);
    assert_eq!(pokes.len(), 1);
    assert!(
        pokes[0].contains("Now I'll run the test suite to make sure nothing else broke:"),
        "{}",
        pokes[0]
    );
    assert!(pokes[0].contains("take it now") && pokes[0].contains("in one line"));
    assert!(!pokes[0].trim().eq_ignore_ascii_case("continue"));
    let sent = sim.records("PROM-P1", LedgerKind::Action);
    assert_eq!(sent.len(), 1);
    assert!(sent[0].reason.contains("certain"), "{}", sent[0].reason);
    let view = sim.view();
    assert!(
        view.recent.iter().any(|record| record.rule == "PROM-P1"),
        "the side pane lists it"
    );
    assert_eq!(
        (view.counters.promise_pokes, view.counters.max_promise_pokes),
        (1, 2)
    );
}

#[test]
fn prom_p1_the_outcome_says_whether_the_agent_acted() {
    let mut sim = fresh();
    sim.settle_with(worked_then(PROMISE));
    sim.agent_start()
        .turn_start()
        .tool_start("c2", "bash")
        .tool_end("c2");
    let mut tail = worked_then(PROMISE);
    tail.push(Message::custom(texts::CT_PROMISE, "[Poke] ..."));
    tail.extend(call_and_result(
        "c2",
        "bash",
        json!({"command": "cargo test"}),
        false,
    ));
    tail.push(text_reply("All 42 tests pass."));
    sim.settle_with(tail);
    let outcome = sim.records("PROM-P1", LedgerKind::Outcome);
    assert_eq!(outcome.len(), 1);
    assert!(outcome[0].reason.starts_with("acted"), "{}", outcome[0].reason);

    let mut sim = fresh();
    sim.settle_with(worked_then(PROMISE));
    sim.agent_start().turn_start();
    sim.settle_with(worked_then(
        "I need the staging password to run them. Could you share it?",
    ));
    let outcome = sim.records("PROM-P1", LedgerKind::Outcome);
    assert!(
        outcome[0].reason.starts_with("did not act"),
        "{}",
        outcome[0].reason
    );
}

#[test]
fn prom_d1_healthy_endings_are_left_alone() {
    for last in [
        "All done. The parser handles nested quotes now and the 42 tests pass.",
        "The migration drops a column. Should I go ahead and run it?",
        "The fix is in. Let me know if you'd like more tests.",
        "I can't push to that remote: the credentials are not available here.",
    ] {
        let mut sim = fresh();
        sim.settle_with(worked_then(last));
        assert!(promise_pokes(&sim).is_empty(), "{last}");
        assert!(sim.records("PROM-P1", LedgerKind::Action).is_empty());
    }
}

#[test]
fn prom_d2_a_question_answered_without_tools_is_left_alone_unless_certain() {
    let mut sim = fresh();
    sim.settle_with(answered(
        "`--release` turns on optimisations and strips debug assertions.",
    ));
    assert!(promise_pokes(&sim).is_empty(), "a plain answer");
    let mut sim = fresh();
    sim.settle_with(answered("I'll refactor the config loader."));
    assert!(
        promise_pokes(&sim).is_empty(),
        "unsure, and no tool call in the run"
    );
    let mut sim = fresh();
    sim.settle_with(worked_then("I'll refactor the config loader."));
    assert_eq!(
        promise_pokes(&sim).len(),
        1,
        "the unsure twin after tool calls is poked"
    );
    let mut sim = fresh();
    sim.settle_with(answered("Let me read the file first."));
    assert_eq!(promise_pokes(&sim).len(), 1, "certain, even without a tool call");
}

#[test]
fn prom_d1_a_failed_or_tool_ending_run_is_not_judged() {
    let mut sim = fresh();
    let mut tail = worked_then(PROMISE);
    tail.pop();
    tail.push(Message::assistant(
        StopReason::Length,
        vec![pokeshell_core::supervisor::Block::text(PROMISE)],
    ));
    sim.settle_with(tail);
    assert!(promise_pokes(&sim).is_empty());
}

#[test]
fn prom_p1_esc_holds_the_poke_until_the_user_types() {
    let mut sim = fresh();
    sim.settle_aborted();
    sim.settle_with(worked_then(PROMISE));
    assert!(promise_pokes(&sim).is_empty(), "Esc means stop");
    assert!(!sim.records("PROM-P1", LedgerKind::Declined).is_empty());
}

#[test]
fn prom_p1_a_compaction_holds_the_poke_until_it_ends() {
    let mut sim = fresh();
    sim.event(pokeshell_core::supervisor::Event::CompactStart {
        reason: pokeshell_core::supervisor::CompactReason::Manual,
        will_retry: false,
    });
    sim.settle_with(worked_then(PROMISE));
    assert!(promise_pokes(&sim).is_empty(), "held while compacting");
    sim.compact(false).tick();
    assert_eq!(promise_pokes(&sim).len(), 1, "sent once the compaction is over");
}

#[test]
fn prom_p1_typing_cancels_a_poke_waiting_for_the_cooldown() {
    let mut sim = Sim::configured(|config| config.global_cooldown_seconds = 30);
    // An empty-reply retry starts the shared cooldown.
    sim.settle_with(vec![Message::user("go"), super::sim::thinking_only()]);
    assert_eq!(sim.sent_of(texts::CT_RETRY).len(), 1);
    sim.settle_with(worked_then(PROMISE));
    assert!(promise_pokes(&sim).is_empty(), "parked for the cooldown");
    assert!(sim.view().pending_resume.is_some());
    sim.user_types().input(InputSource::Interactive);
    sim.run_for(60);
    assert!(promise_pokes(&sim).is_empty());
}

#[test]
fn prom_b1_the_episode_maximum_holds_and_the_give_up_is_told_once() {
    let mut sim = fresh();
    for _ in 0..4 {
        sim.agent_start().turn_start();
        sim.settle_with(worked_then(PROMISE));
    }
    assert_eq!(promise_pokes(&sim).len(), 2, "maxPromisePokes defaults to 2");
    assert_eq!(sim.records("PROM-B1", LedgerKind::Declined).len(), 1);
    // The user typing starts a new episode.
    sim.input(InputSource::Interactive);
    sim.settle_with(worked_then(PROMISE));
    assert_eq!(promise_pokes(&sim).len(), 3);
}

#[test]
fn prom_b1_a_healthy_ending_ends_the_episode() {
    let mut sim = fresh();
    sim.settle_with(worked_then(PROMISE));
    sim.settle_with(worked_then(PROMISE));
    sim.settle_with(worked_then("All done: the tests pass."));
    sim.settle_with(worked_then(PROMISE));
    assert_eq!(promise_pokes(&sim).len(), 3);
}

#[test]
fn prom_p1_its_own_switch_and_the_master_switch_turn_it_off() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.recovery.promise_poke = false;
    });
    sim.settle_with(worked_then(PROMISE));
    assert!(promise_pokes(&sim).is_empty());
    assert_eq!(sim.records("PROM-D1", LedgerKind::Declined).len(), 1);
    let mut sim = Sim::configured(|config| config.poke.enabled = false);
    sim.settle_with(worked_then(PROMISE));
    assert!(promise_pokes(&sim).is_empty());
    let declined = sim.records("PROM-D1", LedgerKind::Declined);
    assert!(
        declined[0].reason.contains("supervision is off"),
        "{}",
        declined[0].reason
    );
}

#[test]
fn prom_p1_an_empty_reply_is_the_retrys_not_the_promises() {
    let mut sim = fresh();
    let settled = Settled {
        tail: vec![Message::user("go"), super::sim::thinking_only()],
        ..Settled::default()
    };
    sim.settle_as(settled);
    assert!(promise_pokes(&sim).is_empty());
    assert_eq!(sim.sent_of(texts::CT_RETRY).len(), 1);
}

#[test]
fn prom_d1_a_pending_wakeup_means_the_agent_comes_back_on_its_own() {
    let mut sim = fresh();
    sim.tool_call(
        "w1",
        "schedule_wakeup",
        json!({"delay_seconds": 120, "prompt": "check the CI"}),
    );
    sim.settle_with(worked_then("Let me look at the CI run next."));
    assert!(promise_pokes(&sim).is_empty());
    let declined = sim.records("PROM-D1", LedgerKind::Declined);
    assert!(
        declined[0].reason.contains("a wakeup is pending"),
        "{}",
        declined[0].reason
    );
}
