//! The stall watch on real pi 1.6.0 inside pokeshell [STALL-S1]: a stream stalled behind keep-alive
//! comments is aborted and resumed; a slow but steady stream is left alone. The scripted model plays
//! both; `poke.streamStallSeconds` is shortened to 3 s.

mod support;

use std::time::Duration;

use serde_json::json;
use support::matrix::Matrix;
use support::{Step, model_server};

const STALL_SECONDS: u64 = 3;
const RESUME: &str = "[Poke] The model provider's reply stream stalled: nothing arrived for";

fn start(first: Step) -> Matrix {
    let server = model_server();
    server.push(first);
    server.set_default(Step::text("Picking up where I left off."));
    Matrix::builder()
        .settings(json!({"poke": {"streamStallSeconds": STALL_SECONDS}}))
        .start(server)
}

#[test]
fn stall_s1_a_stream_stalled_behind_keep_alives_is_aborted_and_resumed() {
    let mut m = start(Step::stall("Let me look at", 500));
    m.submit("look at the build");
    let resumed = m.wait_trailing(RESUME);
    let chat = m.chat();
    assert_eq!(
        resumed, 1,
        "the request right after the stalled one is the resume"
    );
    let next = &chat[resumed];
    let text = support::matrix::trailing_user_text(next).unwrap_or_default();
    assert!(
        text.contains(&format!("nothing arrived for {STALL_SECONDS} seconds"))
            && text.contains("Continue from where you were"),
        "what the model received next: {text:?}"
    );
    let waited = next.at - chat[0].at;
    eprintln!("stall → resumed request: {waited:?} (streamStallSeconds {STALL_SECONDS})");
    assert!(
        waited >= Duration::from_secs(STALL_SECONDS),
        "not before the limit: {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(STALL_SECONDS + 8),
        "promptly after it: {waited:?}"
    );
    m.wait_record("STALL-S1", "action", "aborted the agent");
    m.wait_record("STALL-S1", "action", "sent the resume after a");
    assert!(
        m.records("ARB-ABORT", "declined").is_empty(),
        "pokeshell's own abort is not a stop: {:?}",
        m.ledger()
    );
    m.wait_text("Picking up where I left off.");
    m.assert_model_quiet(Duration::from_secs(STALL_SECONDS + 2));
    assert_eq!(m.pokes().len(), 1, "one resume: {:?}", m.trailing_user_texts());
}

#[test]
fn stall_s1_twin_a_slow_steady_stream_is_left_alone() {
    // A token every second for eight seconds, against a 3 s limit.
    let mut m = start(Step::slow(8, 1000, "tick "));
    m.submit("count slowly");
    m.wait_text("tick tick tick tick tick tick tick tick");
    let chat = m.wait_chats(1);
    m.assert_model_quiet(Duration::from_secs(STALL_SECONDS + 2));
    assert_eq!(m.chat().len(), chat.len(), "no further request");
    assert!(m.pokes().is_empty(), "{:?}", m.trailing_user_texts());
    let stall: Vec<_> = m
        .ledger()
        .into_iter()
        .filter(|r| r["rule"].as_str().is_some_and(|rule| rule.starts_with("STALL")))
        .collect();
    assert!(stall.is_empty(), "the watch never acted: {stall:?}");
}
