//! PROM-A1: with the second opinion on, an unsure ending asks the session's model first; only its
//! "STEP" brings the poke, through the arbiter. No answer, a failure, "DONE" or the user typing: left
//! alone. Certain endings are poked without asking.

use pokeshell_core::supervisor::{Action, Event, InputSource, LedgerKind, Message, ModelAnswer, texts};
use serde_json::json;

use super::sim::{Sim, call_and_result, text_reply};

const UNSURE: &str = "I'll refactor the config loader.";

fn asking() -> Sim {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.recovery.promise_second_opinion = true;
    });
    let mut tail = vec![Message::user("tidy the config code")];
    tail.extend(call_and_result(
        "c1",
        "read",
        json!({"path": "src/config.rs"}),
        false,
    ));
    tail.push(text_reply(UNSURE));
    sim.settle_with(tail);
    sim
}

fn asks(sim: &Sim) -> Vec<(u64, String)> {
    sim.actions
        .iter()
        .filter_map(|action| match action {
            Action::AskModel { ask_id, question, .. } => Some((*ask_id, question.clone())),
            _ => None,
        })
        .collect()
}

fn answer(sim: &mut Sim, ask_id: u64, text: &str) {
    sim.event(Event::ModelAnswer {
        ask_id,
        result: Ok(ModelAnswer {
            text: text.into(),
            input_tokens: Some(120),
            output_tokens: Some(2),
        }),
    });
}

fn pokes(sim: &Sim) -> usize {
    sim.sent_of(texts::CT_PROMISE).len()
}

#[test]
fn prom_a1_an_unsure_ending_asks_the_model_and_its_step_brings_the_poke() {
    let mut sim = asking();
    let asked = asks(&sim);
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].1.contains(UNSURE) && asked[0].1.contains("DONE or STEP"),
        "{}",
        asked[0].1
    );
    assert_eq!(pokes(&sim), 0, "nothing goes out before the answer");
    answer(&mut sim, asked[0].0, "STEP");
    assert_eq!(pokes(&sim), 1);
    let opinion = sim.records("PROM-A1", LedgerKind::Outcome);
    assert!(
        opinion[0].reason.contains("120 input + 2 output tokens"),
        "{}",
        opinion[0].reason
    );
    assert!(
        sim.records("PROM-P1", LedgerKind::Action)[0]
            .reason
            .contains("unsure")
    );
}

#[test]
fn prom_a1_done_a_failure_or_no_answer_leaves_the_ending_alone() {
    let mut sim = asking();
    let id = asks(&sim)[0].0;
    answer(&mut sim, id, "DONE");
    assert_eq!(pokes(&sim), 0);

    let mut sim = asking();
    let id = asks(&sim)[0].0;
    sim.event(Event::ModelAnswer {
        ask_id: id,
        result: Err("no answer within 20s".into()),
    });
    assert_eq!(pokes(&sim), 0);
    assert!(
        sim.records("PROM-A1", LedgerKind::Declined)[0]
            .reason
            .contains("failed")
    );

    let mut sim = asking();
    let id = asks(&sim)[0].0;
    sim.run_for(30);
    assert_eq!(pokes(&sim), 0);
    assert!(
        sim.records("PROM-A1", LedgerKind::Declined)[0]
            .reason
            .contains("no second opinion")
    );
    answer(&mut sim, id, "STEP");
    assert_eq!(pokes(&sim), 0, "a late answer is ignored");
}

#[test]
fn prom_a1_typing_before_the_answer_drops_the_question() {
    let mut sim = asking();
    let id = asks(&sim)[0].0;
    sim.input(InputSource::Interactive);
    answer(&mut sim, id, "STEP");
    assert_eq!(pokes(&sim), 0);
    assert!(
        sim.records("PROM-A1", LedgerKind::Declined)[0]
            .reason
            .contains("you typed")
    );
}

#[test]
fn prom_a1_a_certain_ending_is_poked_without_asking_and_the_setting_is_off_by_default() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.recovery.promise_second_opinion = true;
    });
    sim.settle_with(vec![Message::user("go"), text_reply("Let me open the file.")]);
    assert!(asks(&sim).is_empty());
    assert_eq!(pokes(&sim), 1);
    assert!(
        !pokeshell_core::supervisor::SupervisorConfig::default()
            .recovery
            .promise_second_opinion
    );
}
