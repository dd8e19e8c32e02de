//! The stall watch on real pi 1.6.0 inside pokeshell [STALL-S1]: a stream stalled behind keep-alive
//! comments is aborted and resumed; a slow but steady stream is left alone. The scripted model plays
//! both; `poke.streamStallSeconds` is shortened to 3 s.

mod support;

use std::time::{Duration, Instant};

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

/// An extension that never lets a run end: its `agent_end` handler awaits a promise that never
/// settles, so pi never reaches `agent_settled`.
const ENDLESS: &str = r#"
let stuck = true;
export default function (pi: any) {
	pi.on("agent_end", async () => {
		if (!stuck) return;
		stuck = false;
		await new Promise(() => {});
	});
}
"#;

/// pi 1.6.0 cannot settle while an extension still awaits at `agent_end`, even after an abort: the
/// watch aborts the run (STALL-R1), and 30 s later, with no settle, reports pi as frozen (STALL-F1)
/// and the restart watch relaunches it (RST-F2).
#[test]
fn stall_r1_a_run_that_never_settles_is_aborted_then_reported_frozen() {
    let server = model_server();
    server.set_default(Step::text("All done here."));
    let mut m = Matrix::builder()
        .settings(json!({"poke": {"streamStallSeconds": STALL_SECONDS}}))
        .extension(ENDLESS)
        .start(server);
    m.submit("say something");
    m.wait_text("All done here.");
    let started = Instant::now();
    let abort = m.wait_record("STALL-R1", "action", "aborted the agent");
    assert!(
        abort["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("the run after its end was silent"),
        "{abort}"
    );
    let aborted_after = started.elapsed();
    let deadline = Instant::now() + Duration::from_secs(45);
    while m.records("STALL-F1", "declined").is_empty() {
        assert!(Instant::now() < deadline, "no STALL-F1: {:?}", m.ledger());
        std::thread::sleep(Duration::from_millis(200));
    }
    let frozen_after = started.elapsed();
    eprintln!(
        "endless run: aborted {aborted_after:?} after the reply showed, reported frozen {frozen_after:?} after it"
    );
    assert!(
        frozen_after >= aborted_after + Duration::from_secs(29),
        "30 s after the abort: {aborted_after:?} then {frozen_after:?}"
    );
    // The same moment, the restart watch saw the abort go unanswered: pi is relaunched (RST-F2).
    m.wait_record("RST-F2", "action", "did not stop its run within 30 s");
    m.wait_side("restarted: pi did not stop its run");
    assert_eq!(
        m.trailing_user_texts().first().map(String::as_str),
        Some("say something"),
        "nothing was resumed before the restart"
    );
}
