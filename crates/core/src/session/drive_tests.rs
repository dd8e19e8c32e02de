//! A session driven by a script or an agent: messages to pi (held until the bridge is up), the
//! marks a wait reads, the transcript and the ledger.

use serde_json::json;

use super::drive::{ANSWER_BYTES, HOLD_MS, KEPT_MESSAGES, KEPT_TEXT_BYTES};
use super::restart_tests::{at, event, hello, records};
use super::tests::settings;
use super::*;
use crate::bridge::{BridgeEvent, Command, DeliverAs};
use crate::drive::{self, FromSession, Marks, ToSession, Transcript};
use crate::spec::SessionSpec;

/// Session 2 "w", started by session 1's agent, pi's bridge not connected yet.
fn worker(prompted: bool) -> Session {
    let opts = SessionOptions {
        label: "pi".into(),
        bridge: Some(Ok(())),
        spec: SessionSpec {
            number: 2,
            name: "w".into(),
            dir: "/w".into(),
            parent: Some("lead".into()),
            prompted,
            ..SessionSpec::default()
        },
        ..SessionOptions::default()
    };
    let mut s = Session::new(opts, settings(), 120, 40, at(0));
    let fx = s.handle(Input::ChildStarted { pid: 7 }, at(0));
    let started = records(&fx, drive::rule::STARTED);
    assert_eq!(started, ["started by the agent of session lead"]);
    let fx = s.handle(Input::ChildStarted { pid: 8 }, at(0));
    assert!(records(&fx, drive::rule::STARTED).is_empty(), "said once");
    s
}

fn send(s: &mut Session, marker: u64, text: &str, steer: bool, ms: u64) -> Vec<Effect> {
    let msg = ToSession::Send {
        marker,
        text: text.into(),
        steer,
        from: Some("lead".into()),
    };
    s.handle(Input::Drive(msg), at(ms))
}

/// The user messages the session asked the bridge for: (id, text, deliverAs).
fn user_messages(fx: &[Effect]) -> Vec<(u64, String, Option<DeliverAs>)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Bridge {
                id,
                command: Command::SendUserMessage(m),
            } => Some((*id, m.text.clone(), m.deliver_as)),
            _ => None,
        })
        .collect()
}

fn answers(fx: &[Effect]) -> Vec<FromSession> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Drive(out) => Some(out.clone()),
            _ => None,
        })
        .collect()
}

fn reply(s: &mut Session, id: u64, result: Result<serde_json::Value, String>, ms: u64) -> Vec<Effect> {
    let ev = BridgeEvent::Reply {
        id,
        command: "send_user_message",
        result,
    };
    s.handle(Input::Bridge(ev), at(ms))
}

fn settle(s: &mut Session, ms: u64, pending: bool) {
    event(
        s,
        json!({"type": "agent_settled", "aborted": false, "idle": true, "pendingMessages": pending, "tail": []}),
        ms,
    );
}

#[test]
fn a_message_waits_for_the_bridge_then_goes_as_the_users_prompt_and_is_recorded() {
    let mut s = worker(false);
    let fx = send(&mut s, 1, "fix the test", false, 100);
    assert!(user_messages(&fx).is_empty(), "no bridge yet: held");
    let fx = hello(&mut s, 500);
    let sent = user_messages(&fx);
    assert_eq!(sent.len(), 1, "{fx:?}");
    assert_eq!(sent[0].1, "fix the test");
    assert_eq!(sent[0].2, Some(DeliverAs::FollowUp), "a follow-up while pi works");
    let messages = records(&fx, drive::rule::MESSAGE);
    assert_eq!(messages, ["a message from the agent of session lead (12 bytes)"]);
    assert!(answers(&fx).is_empty(), "pi has not taken it yet");
    let fx = reply(&mut s, sent[0].0, Ok(json!({"idleBefore": true})), 600);
    assert_eq!(
        answers(&fx),
        [FromSession::Delivered {
            marker: 1,
            error: None
        }]
    );
    // The second message is steered in at once.
    let fx = send(&mut s, 2, "stop and commit", true, 700);
    assert_eq!(user_messages(&fx)[0].2, Some(DeliverAs::Steer));
}

#[test]
fn a_message_pi_did_not_take_or_that_waited_too_long_is_refused() {
    let mut s = worker(false);
    send(&mut s, 1, "one", false, 0);
    assert_eq!(s.next_deadline(at(0)), Some(HOLD_MS).min(s.next_deadline(at(0))));
    let fx = s.handle(Input::Tick, at(HOLD_MS - 1));
    assert!(answers(&fx).is_empty());
    let fx = s.handle(Input::Tick, at(HOLD_MS));
    match &answers(&fx)[..] {
        [
            FromSession::Delivered {
                marker: 1,
                error: Some(e),
            },
        ] => {
            assert!(e.contains("did not connect within 30 s"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(
        user_messages(&hello(&mut s, HOLD_MS + 10)).is_empty(),
        "it never goes later"
    );
    let fx = send(&mut s, 2, "two", false, HOLD_MS + 20);
    let id = user_messages(&fx)[0].0;
    let fx = reply(
        &mut s,
        id,
        Err("pi has not started a session yet".into()),
        HOLD_MS + 30,
    );
    assert_eq!(
        answers(&fx),
        [FromSession::Delivered {
            marker: 2,
            error: Some("pi has not started a session yet".into())
        }]
    );
    assert_eq!(s.drive_marks().settled, 0);
}

#[test]
fn the_marks_follow_the_runs_the_messages_started() {
    let mut s = worker(true);
    hello(&mut s, 0);
    // The first prompt on pi's command line is message 1: its run has not begun.
    assert_eq!(s.drive_marks(), Marks::default());
    event(&mut s, json!({"type": "agent_start"}), 100);
    assert_eq!(s.drive_marks().begun, 1);
    // A settle with a queued message is not the end.
    settle(&mut s, 200, true);
    assert_eq!(s.drive_marks().settled, 0);
    settle(&mut s, 300, false);
    assert_eq!(
        s.drive_marks(),
        Marks {
            begun: 1,
            settled: 1,
            going_on: false
        }
    );
    // Message 2, taken while pi is idle: neither begun nor settled until its run is.
    let fx = send(&mut s, 2, "next", false, 400);
    reply(&mut s, user_messages(&fx)[0].0, Ok(json!({})), 410);
    assert_eq!((s.drive_marks().begun, s.drive_marks().settled), (1, 1));
    event(&mut s, json!({"type": "agent_start"}), 500);
    settle(&mut s, 600, false);
    assert_eq!((s.drive_marks().begun, s.drive_marks().settled), (2, 2));
}

#[test]
fn pokeshell_carrying_the_run_on_is_not_the_end() {
    let mut s = worker(false);
    hello(&mut s, 0);
    event(&mut s, json!({"type": "agent_start"}), 100);
    // An empty reply: the supervisor asks the model to continue at this settle.
    let empty =
        json!({"kind": "message", "id": "a", "role": "assistant", "stopReason": "stop", "content": []});
    event(
        &mut s,
        json!({"type": "agent_settled", "aborted": false, "idle": true, "pendingMessages": false,
               "tail": [empty]}),
        200,
    );
    assert!(s.drive_marks().going_on, "a retry went out");
    event(&mut s, json!({"type": "agent_start"}), 300);
    settle(&mut s, 400, false);
    assert!(!s.drive_marks().going_on);
}

fn message_end(
    s: &mut Session,
    message: serde_json::Value,
    text: Option<&str>,
    usage: serde_json::Value,
    ms: u64,
) {
    event(
        s,
        json!({"type": "message_end", "message": message, "usage": usage, "text": text}),
        ms,
    );
}

fn read(s: &mut Session, last: Option<u32>) -> Transcript {
    let fx = s.handle(Input::Drive(ToSession::Read { ticket: 9, last }), at(10_000));
    match &answers(&fx)[..] {
        [
            FromSession::Transcript {
                ticket: 9,
                transcript,
            },
        ] => transcript.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_transcript_keeps_replies_tool_calls_and_spend_and_read_answers_from_it() {
    let mut s = worker(false);
    hello(&mut s, 0);
    let empty = read(&mut s, None);
    assert_eq!((empty.reply, empty.messages.len()), (None, 0));
    message_end(
        &mut s,
        json!({"role": "user", "content": []}),
        Some("fix it"),
        json!(null),
        10,
    );
    let call = json!({"role": "assistant", "stopReason": "toolUse",
        "content": [{"type": "text", "nonBlank": true},
                    {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cargo test"}}]});
    let usage = json!({"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 0, "costUsd": 0.5});
    message_end(&mut s, call, Some("Running the tests."), usage.clone(), 20);
    let result = json!({"role": "toolResult", "toolName": "bash", "isError": true, "content": []});
    message_end(&mut s, result, Some("1 failed"), json!(null), 30);
    let done =
        json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "nonBlank": true}]});
    message_end(&mut s, done, Some("Fixed: both pass."), usage, 40);
    let doc = read(&mut s, None);
    assert_eq!(doc.session, "2:w");
    assert_eq!(doc.reply.as_deref(), Some("Fixed: both pass."));
    assert_eq!(doc.messages.len(), 1);
    assert_eq!(doc.messages[0].stop_reason.as_deref(), Some("stop"));
    assert_eq!(doc.attention, "idle");
    let doc = read(&mut s, Some(3));
    let roles: Vec<&str> = doc.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["assistant", "tool_result", "assistant"]);
    assert_eq!(doc.messages[0].tool_calls[0].name, "bash");
    assert_eq!(doc.messages[0].tool_calls[0].arguments["command"], "cargo test");
    assert_eq!(doc.messages[0].tokens.map(|t| t.input), Some(100));
    assert_eq!(doc.messages[0].cost_usd, Some(0.5));
    assert_eq!(doc.messages[1].tool_name.as_deref(), Some("bash"));
    assert_eq!(doc.messages[1].is_error, Some(true));
    assert_eq!(doc.tokens.output, 40, "the session's spend");
    assert_eq!(read(&mut s, Some(50)).messages.len(), 4);
    assert!(!read(&mut s, Some(50)).truncated, "nothing was let go");
}

#[test]
fn the_transcript_is_bounded_and_an_answer_fits_a_frame() {
    let mut s = worker(false);
    hello(&mut s, 0);
    let big = "x".repeat(30_000);
    for i in 0..KEPT_MESSAGES as u64 + 20 {
        let m = json!({"role": "assistant", "stopReason": "stop", "content": []});
        message_end(&mut s, m, Some(&format!("{i} {big}")), json!(null), i);
    }
    let doc = read(&mut s, Some(1000));
    let kept: usize = doc.messages.iter().map(|m| m.text.len()).sum();
    assert!(kept <= KEPT_TEXT_BYTES, "{kept}");
    assert!(doc.truncated);
    assert!(
        doc.reply
            .as_deref()
            .unwrap()
            .starts_with(&format!("{} ", KEPT_MESSAGES + 19))
    );
    assert!(serde_json::to_vec(&doc).unwrap().len() <= ANSWER_BYTES);
    // Control characters are escaped six times over in JSON: the answer still fits.
    let controls = "\u{1}".repeat(30_000);
    for i in 0..20 {
        let m = json!({"role": "user", "content": []});
        message_end(&mut s, m, Some(&controls), json!(null), 1000 + i);
    }
    let doc = read(&mut s, Some(1000));
    assert!(serde_json::to_vec(&doc).unwrap().len() <= ANSWER_BYTES);
    assert!(doc.truncated && !doc.messages.is_empty());
}

#[test]
fn an_agent_ending_the_session_is_recorded_first() {
    let mut s = worker(false);
    let fx = s.handle(Input::Drive(ToSession::Killed { by: "lead".into() }), at(5));
    assert_eq!(
        records(&fx, drive::rule::KILLED),
        ["ended by the agent of session lead"]
    );
}
