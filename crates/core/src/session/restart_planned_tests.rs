//! RST-D1 while pi is idle: a pi that dies while pokeshell has its next step planned (a provider
//! limit's resume) comes back with the plan; one killed outright comes back without a resume; one
//! that ends politely or quits with nothing planned ends the session as before.

use serde_json::{Value, json};

use super::restart_tests::{at, comes_back, event, messages, pi, records, respawn, tick};
use super::*;
use crate::bridge::Command;
use crate::supervisor::ledger::rule;

const ERROR: &str = "429: Rate limit reached for mock-model. Please try again in 25s.";

/// A run ends on a rate limit pi's retries did not get past; returns the session entry that saves
/// the planned resume, as pi would hand it back to a relaunched pi.
fn waiting_out_a_limit(s: &mut Session) -> Value {
    event(s, json!({"type": "agent_start"}), 1000);
    event(
        s,
        json!({"type": "agent_end", "stopReason": "error", "errorMessage": ERROR}),
        2000,
    );
    let failed = json!({"kind": "message", "role": "assistant", "stopReason": "error",
        "errorMessage": ERROR, "content": []});
    let user = json!({"kind": "message", "role": "user", "content": [{"type": "text", "nonBlank": true}]});
    let fx = event(
        s,
        json!({"type": "agent_settled", "aborted": false, "idle": true, "tail": [user, failed]}),
        2100,
    );
    assert!(
        s.supervisor_view(at(2200)).limit_wait.is_some(),
        "a planned resume"
    );
    fx.iter()
        .find_map(|e| match e {
            Effect::Bridge {
                command: Command::AppendEntry { custom_type, data },
                ..
            } => Some(json!({"id": "e1", "customType": custom_type, "data": data, "timestamp": "x"})),
            _ => None,
        })
        .expect("the wait is saved in the session")
}

fn exit(s: &mut Session, code: i32, signal: Option<i32>, ms: u64) -> Vec<Effect> {
    s.handle(Input::ChildExited { code, signal }, at(ms))
}

#[test]
fn soak_seed_20261203_a_pi_killed_while_waiting_out_a_rate_limit_comes_back_and_resumes_at_the_reset() {
    let mut s = pi();
    let entry = waiting_out_a_limit(&mut s);
    let fx = exit(&mut s, 137, Some(9), 5000);
    assert!(respawn(&fx).is_some(), "the session's work is not done: {fx:?}");
    assert_eq!(records(&fx, rule::RESTART_DIED).len(), 1, "{fx:?}");
    let fx = comes_back(&mut s, json!([entry]), 6000);
    assert!(messages(&fx).is_empty(), "not before the reset: {fx:?}");
    assert!(
        s.supervisor_view(at(6700)).limit_wait.is_some(),
        "the planned resume came back with the session"
    );
    let sent: Vec<String> = (7..40).flat_map(|t| messages(&tick(&mut s, t * 1000))).collect();
    assert_eq!(sent.len(), 1, "resumed once, at the reset: {sent:?}");
}

#[test]
fn rst_d1_a_pi_failing_while_a_resume_is_planned_comes_back_whatever_its_code() {
    let mut s = pi();
    waiting_out_a_limit(&mut s);
    assert!(respawn(&exit(&mut s, 1, None, 5000)).is_some());
}

#[test]
fn rst_d1_healthy_twin_a_quit_while_a_resume_is_planned_ends_the_session() {
    let mut s = pi();
    waiting_out_a_limit(&mut s);
    let fx = exit(&mut s, 0, None, 5000);
    assert_eq!(respawn(&fx), None, "the user quit: {fx:?}");
}

#[test]
fn rst_d1_an_idle_pi_killed_outright_comes_back_without_a_resume() {
    for signal in [9, 11, 6] {
        let mut s = pi();
        let fx = exit(&mut s, 128 + signal, Some(signal), 2000);
        assert!(respawn(&fx).is_some(), "signal {signal}: {fx:?}");
        let fx = comes_back(&mut s, json!([]), 3000);
        assert!(messages(&fx).is_empty(), "nothing was running: {fx:?}");
    }
}

#[test]
fn rst_d1_healthy_twin_an_idle_pi_ended_politely_or_failing_with_nothing_planned_is_left_ended() {
    for (code, signal) in [(143, Some(15)), (129, Some(1)), (130, Some(2)), (1, None)] {
        let mut s = pi();
        let fx = exit(&mut s, code, signal, 2000);
        assert_eq!(respawn(&fx), None, "code {code}, signal {signal:?}: {fx:?}");
    }
}
