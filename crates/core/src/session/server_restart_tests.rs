//! RST-S1: a session that a restarted pokeshell server brought back while its agent was mid-run asks
//! the agent to carry on once, through the arbiter, like after one of its own restarts.

use serde_json::json;

use super::restart_tests::{at, event, heartbeat, hello, messages, records, respawn, session_start, tick};
use super::*;
use crate::spec::SessionSpec;
use crate::supervisor::ledger::rule;

/// A session of pi with its bridge; `flag`: brought back by a restarted server mid-run.
fn brought_back(flag: bool) -> Session {
    let opts = SessionOptions {
        label: "pi".into(),
        bridge: Some(Ok(())),
        child_args: ["-e", "/b/bridge.ts", "--session", super::restart_tests::FILE]
            .map(String::from)
            .to_vec(),
        spec: SessionSpec {
            resume: flag,
            ..SessionSpec::default()
        },
        ..SessionOptions::default()
    };
    Session::new(opts, super::tests::settings(), 120, 40, at(0))
}

/// The first child starts, its bridge says hello and starts its session; every effect, in order.
fn first_child(s: &mut Session) -> Vec<Effect> {
    let mut fx = s.handle(Input::ChildStarted { pid: 7 }, at(100));
    fx.extend(hello(s, 500));
    fx.extend(session_start(s, json!([]), 600));
    fx
}

#[test]
fn rst_s1_the_agent_gets_exactly_one_resume_through_the_arbiter() {
    let mut s = brought_back(true);
    let started = s.handle(Input::ChildStarted { pid: 7 }, at(100));
    assert_eq!(respawn(&started), None, "the server already started this pi");
    let action = records(&started, rule::RESTART_SERVER);
    assert_eq!(action.len(), 1, "{started:?}");
    assert!(action[0].contains("server was restarted"), "{}", action[0]);
    assert!(started.iter().any(|e| matches!(e, Effect::Notify { .. })));
    assert!(
        messages(&started).is_empty(),
        "nothing before the session started"
    );

    let mut fx = hello(&mut s, 500);
    assert!(
        messages(&fx).is_empty(),
        "not at the hello: the session has not started"
    );
    fx.extend(session_start(&mut s, json!([]), 600));
    let sent = messages(&fx);
    assert_eq!(sent.len(), 1, "{fx:?}");
    assert!(sent[0].contains("server was restarted"), "{}", sent[0]);
    assert_eq!(
        records(&fx, rule::RESTART_RESUME).len(),
        1,
        "the arbiter's resume"
    );
    for t in (1_000..300_000).step_by(5_000) {
        heartbeat(&mut s, t);
        assert!(messages(&tick(&mut s, t + 1)).is_empty(), "one resume only");
    }
    let side: Vec<String> = s.restart_lines().iter().map(|l| format!("{l:?}")).collect();
    assert!(
        side.iter().any(|l| l.contains("server was restarted")),
        "{side:?}"
    );
}

#[test]
fn without_the_flag_nothing_resumes() {
    let mut s = brought_back(false);
    let fx = first_child(&mut s);
    assert!(messages(&fx).is_empty(), "{fx:?}");
    assert!(records(&fx, rule::RESTART_SERVER).is_empty());
    assert!(records(&fx, rule::RESTART_RESUME).is_empty());
}

#[test]
fn rst_s1_only_the_first_child_and_only_pi_with_its_bridge() {
    let mut s = brought_back(true);
    first_child(&mut s);
    // The same pi relaunched again later (by the user's /reload, say) is not resumed a second time.
    let fx = s.handle(Input::ChildStarted { pid: 8 }, at(10_000));
    assert!(records(&fx, rule::RESTART_SERVER).is_empty(), "{fx:?}");

    let opts = SessionOptions {
        label: "htop".into(),
        bridge: None,
        spec: SessionSpec {
            resume: true,
            ..SessionSpec::default()
        },
        ..SessionOptions::default()
    };
    let mut hosted = Session::new(opts, super::tests::settings(), 120, 40, at(0));
    let fx = hosted.handle(Input::ChildStarted { pid: 7 }, at(100));
    assert!(
        records(&fx, rule::RESTART_SERVER).is_empty(),
        "a hosted command has no agent"
    );
}

#[test]
fn rst_s1_with_supervision_off_in_the_session_no_resume_is_sent() {
    let mut s = brought_back(true);
    s.handle(Input::ChildStarted { pid: 7 }, at(100));
    hello(&mut s, 500);
    // The user had switched supervision off in this pi session; the entry comes back with it.
    let off = json!({"id": "e1", "customType": "pokeshell-config", "timestamp": "x",
        "data": {"version": 1, "settings": {"poke": {"enabled": false}}}});
    let fx = session_start(&mut s, json!([off]), 600);
    assert!(messages(&fx).is_empty(), "{fx:?}");
    let declined = records(&fx, rule::RESTART_RESUME);
    assert_eq!(declined.len(), 1, "{fx:?}");
    assert!(declined[0].contains("supervision is off"), "{}", declined[0]);
}

#[test]
fn rst_s1_the_users_esc_on_the_resumed_run_is_not_fought() {
    let mut s = brought_back(true);
    let fx = first_child(&mut s);
    assert_eq!(messages(&fx).len(), 1);
    event(&mut s, json!({"type": "agent_start"}), 1_000);
    let fx = event(
        &mut s,
        json!({"type": "agent_settled", "aborted": true, "idle": true, "tail": []}),
        2_000,
    );
    assert!(messages(&fx).is_empty(), "{fx:?}");
    for t in (5_000..300_000).step_by(5_000) {
        heartbeat(&mut s, t);
        assert!(
            messages(&tick(&mut s, t + 1)).is_empty(),
            "the stop holds until the user types"
        );
    }
}

#[test]
fn rst_s1_does_not_count_against_the_hourly_restart_bound() {
    let mut s = brought_back(true);
    s.handle(Input::ChildStarted { pid: 7 }, at(100));
    hello(&mut s, 500);
    let one = json!({"id": "e1", "customType": "pokeshell-config", "timestamp": "x",
        "data": {"version": 1, "settings": {"poke": {"maxRestartsPerHour": 1}}}});
    session_start(&mut s, json!([one.clone()]), 600);
    let died = |s: &mut Session, ms| {
        event(s, json!({"type": "agent_start"}), ms);
        s.handle(
            Input::ChildExited {
                code: 137,
                signal: Some(9),
            },
            at(ms + 1_000),
        )
    };
    let fx = died(&mut s, 2_000);
    assert!(
        respawn(&fx).is_some(),
        "the one restart of the hour is still there: {fx:?}"
    );
    assert!(records(&fx, rule::RESTART_LIMIT).is_empty());
    // The bound itself is in force: the second death within the hour is refused.
    s.handle(Input::ChildStarted { pid: 8 }, at(4_000));
    hello(&mut s, 4_500);
    session_start(&mut s, json!([one]), 4_600);
    let fx = died(&mut s, 6_000);
    assert_eq!(respawn(&fx), None, "{fx:?}");
    assert_eq!(records(&fx, rule::RESTART_LIMIT).len(), 1);
}

#[test]
fn a_session_brought_back_counts_as_mid_run_until_its_resume_went_out() {
    let mut s = brought_back(true);
    assert!(!s.mid_run(), "nothing is known before pi starts");
    s.handle(Input::ChildStarted { pid: 7 }, at(100));
    assert!(
        s.mid_run(),
        "a server that ends now must still resume it next time"
    );
    hello(&mut s, 500);
    assert!(s.mid_run());
    session_start(&mut s, json!([]), 600);
    assert!(
        !s.mid_run(),
        "the resume went out: pi's own events tell from now on"
    );
    let mut idle = brought_back(false);
    first_child(&mut idle);
    assert!(!idle.mid_run(), "an idle session brought back is not mid-run");
}
