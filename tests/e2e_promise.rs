//! A run that ends on a promise, on real pi 1.6.0 inside pokeshell [PROM-P1, PROM-D1]: the agent edits a
//! file, then announces the test run and stops; pokeshell's poke quotes the step and the model makes the
//! call. The healthy twin (a final summary after the same work) gets nothing more.

mod support;

use std::time::Duration;

use serde_json::json;
use support::matrix::Matrix;
use support::{Step, model_server};

const PROMISE: &str =
    "Ok, the parser change is in. Now I'll run the test suite to make sure nothing else broke:";
const STEP: &str = "Now I'll run the test suite to make sure nothing else broke:";
const SUMMARY: &str = "All done. The parser handles nested quotes now and the whole suite passes.";

/// The model answers `steps` in order; a request beyond them fails visibly.
fn start(steps: Vec<Step>) -> Matrix {
    let server = model_server();
    server.push_all(steps);
    server.set_default(Step::error(400, "the test scripted no answer for this request"));
    Matrix::builder()
        .settings(json!({"pokeshell": {"injectionCooldownSeconds": 0}}))
        .start(server)
}

#[test]
fn prom_p1_a_promise_ending_is_poked_and_the_agent_takes_the_step() {
    let mut m = start(vec![
        Step::bash("echo parser edited"),
        Step::text(PROMISE),
        Step::bash("echo 42 tests passed"),
        Step::text(SUMMARY),
    ]);
    m.submit("fix the quote handling in the parser");
    let poked = m.wait_trailing("[Poke] Your last message announced a next step");
    let trailing = m.trailing_user_texts();
    let poke = trailing
        .iter()
        .find(|t| t.starts_with("[Poke] Your last message announced"))
        .expect("the poke reached the model");
    assert!(poke.contains(STEP), "the poke quotes the step: {poke:?}");
    assert!(poke.contains("say in one line what you need"), "{poke:?}");
    // The model's answer to the poke is the bash call; pi runs it and asks again with its result.
    let chats = m.wait_chats(poked + 2);
    let after_call = chats[poked + 1].body["messages"].to_string();
    assert!(
        after_call.contains("42 tests passed"),
        "the tool ran after the poke"
    );
    m.wait_record("PROM-P1", "action", "certain");
    m.wait_record("PROM-P1", "outcome", "acted: the agent made a tool call");
    m.wait_side("promise poke");
    // The run then ends on a summary: nothing more goes out.
    m.assert_model_quiet(Duration::from_secs(4));
    assert_eq!(m.records("PROM-P1", "action").len(), 1, "one poke");
    assert_eq!(m.chat().len(), 4);
}

#[test]
fn prom_d1_a_summary_after_the_same_work_is_left_alone() {
    let mut m = start(vec![Step::bash("echo parser edited"), Step::text(SUMMARY)]);
    m.submit("fix the quote handling in the parser");
    m.wait_chats(2);
    m.assert_model_quiet(Duration::from_secs(6));
    assert!(m.pokes().is_empty(), "{:?}", m.trailing_user_texts());
    assert!(m.records("PROM-P1", "action").is_empty());
    assert_eq!(m.chat().len(), 2);
}

/// PROM-A1's plumbing on real pi: the bridge asks the session's (scripted) model, its answer and cost
/// reach the ledger, and "STEP" brings the poke. The scripted model cannot judge: this checks the path,
/// not the quality of a real model's answers.
#[test]
fn prom_a1_the_second_opinion_asks_the_sessions_model_then_pokes() {
    let server = model_server();
    server.push_all(vec![
        Step::bash("echo config read"),
        Step::text("I'll refactor the config loader."),
        Step::text("STEP"),
        Step::bash("echo loader refactored"),
        Step::text(SUMMARY),
    ]);
    server.set_default(Step::error(400, "the test scripted no answer for this request"));
    let mut m = Matrix::builder()
        .settings(json!({
            "pokeshell": {"injectionCooldownSeconds": 0},
            "stalledAgentRecovery": {"promiseSecondOpinion": true}
        }))
        .start(server);
    m.submit("tidy the config code");
    m.wait_trailing("[Poke] Your last message announced a next step");
    let asked = m
        .chat()
        .into_iter()
        .find(|r| r.body["messages"].to_string().contains("Answer DONE or STEP"))
        .expect("the bridge asked the model");
    assert!(
        asked.body["tools"].as_array().is_none_or(|t| t.is_empty()),
        "the question carries no tools"
    );
    assert!(
        asked.body["messages"]
            .to_string()
            .contains("I'll refactor the config loader.")
    );
    let opinion = m.wait_record("PROM-A1", "outcome", "a step it did not take");
    assert!(
        opinion["reason"].as_str().unwrap_or_default().contains("cost"),
        "{opinion}"
    );
    m.wait_record("PROM-P1", "outcome", "acted");
    m.assert_model_quiet(Duration::from_secs(4));
}
