//! How real pi 1.6.0 meets provider failures, as docs/pi-facts.md ("Provider errors") states them:
//! which statuses it retries, on whose schedule, and the error text it reports.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::pi::PiEnv;
use support::{Step, model_server};

const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The `errorMessage` of every failed assistant message in a `--mode json` run.
fn error_messages(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["stopReason"] == "error")
        .filter_map(|e| e["message"]["errorMessage"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_rate_limit_is_retried_on_pis_schedule_not_the_one_retry_after_asks_for() {
    let server = model_server();
    server.push_all([
        Step::rate_limited(30),
        Step::rate_limited(30),
        Step::text("recovered"),
    ]);
    let env = PiEnv::builder(&server.base_url())
        .settings(json!({"retry": {"maxRetries": 3, "baseDelayMs": 300}}))
        .build();
    let out = env.run(&["--mode", "json", "-p", "hello"], RUN_LIMIT);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3, "two retries, then the answer\n{out}");
    let first_gap = requests[1].at - requests[0].at;
    let second_gap = requests[2].at - requests[1].at;
    assert!(
        first_gap >= Duration::from_millis(250) && first_gap < Duration::from_secs(10),
        "pi waited {first_gap:?}, not its own 300 ms nor the 30 s asked for"
    );
    assert!(
        second_gap > first_gap,
        "the delay doubles: {first_gap:?} then {second_gap:?}"
    );
    let errors = error_messages(&out.events());
    assert_eq!(errors.len(), 2, "{out}");
    assert!(
        errors[0].starts_with("429: {\"message\":\"Rate limit reached")
            && errors[0].ends_with("\"code\":\"rate_limit_exceeded\"}"),
        "{}",
        errors[0]
    );
    let retries: Vec<u64> = out
        .events()
        .iter()
        .filter(|e| e["type"] == "auto_retry_start")
        .filter_map(|e| e["delayMs"].as_u64())
        .collect();
    assert_eq!(retries, [300, 600]);
    assert!(out.stdout.contains("recovered"));
}

#[test]
fn statuses_that_do_not_look_transient_end_the_run_at_once() {
    for (status, message) in [(401, "bad key"), (400, "bad request"), (529, "busy")] {
        let server = model_server();
        server.push_all([Step::error(status, message), Step::text("never asked")]);
        let env = PiEnv::new(&server.base_url());
        let out = env.run(&["-p", "hello"], RUN_LIMIT);
        assert_eq!(server.chat_requests().len(), 1, "{status} was retried\n{out}");
        assert_eq!(out.code, Some(1), "{out}");
        assert!(
            out.stderr
                .contains(&format!("{status}: {{\"message\":\"{message}\"")),
            "{out}"
        );
    }
}

#[test]
fn a_529_that_says_overloaded_is_retried() {
    let server = model_server();
    server.push_all([Step::error(529, "Overloaded"), Step::text("back")]);
    let env = PiEnv::new(&server.base_url());
    let out = env.run(&["-p", "hello"], RUN_LIMIT);
    assert_eq!(server.chat_requests().len(), 2, "{out}");
    assert!(out.stdout.contains("back"), "{out}");
}
