//! A run that a compaction cut off, through the real loop: the bridge's events (in the wire JSON of
//! docs/protocol.md, modelled on the mid-run stall pi 1.6.0 goes through in tests/e2e_matrix_poke.rs)
//! make the loop send the resume poke, and when the resumed run fails again, the second poke waits for
//! the cooldown and goes out when the paused clock passes it.

use serde_json::{Value, json};

use super::world::{World, event};

const REJECTED: &str = "request after compaction rejected";

fn user(id: &str) -> Value {
    json!({"kind": "message", "id": id, "role": "user", "stopReason": null, "errorMessage": null,
           "content": [{"type": "text", "nonBlank": true}], "toolCallId": null, "toolName": null,
           "isError": null, "customType": null})
}

/// The assistant message of a request the provider refused: no content, the error.
fn refused(id: &str) -> Value {
    json!({"kind": "message", "id": id, "role": "assistant", "stopReason": "error",
           "errorMessage": REJECTED, "content": [], "toolCallId": null, "toolName": null,
           "isError": null, "customType": null})
}

fn failed_run_end(seq: u64) -> Value {
    event(
        seq,
        json!({"type": "agent_end", "stopReason": "error", "errorMessage": REJECTED, "messageCount": 4}),
    )
}

fn settled(seq: u64, tail: Vec<Value>) -> Value {
    event(
        seq,
        json!({"type": "agent_settled", "aborted": false, "idle": true, "pendingMessages": false,
               "contextUsage": {"tokens": null, "contextWindow": 16000, "percent": null},
               "tail": tail, "tailTruncated": false}),
    )
}

/// pi starts, the user asks, a tool's output crosses the threshold, pi compacts between turns, and
/// the request after the compaction is refused: the run ends there.
fn stalled_run(w: &World) {
    w.connect();
    w.wire(event(
        1,
        json!({"type": "session_start", "reason": "startup", "previousSessionFile": null,
               "sessionId": "s1", "sessionFile": null, "sessionName": null,
               "model": "mock/mock-model", "customEntries": []}),
    ));
    w.wire(event(
        2,
        json!({"type": "input", "source": "interactive", "streamingBehavior": null,
               "textChars": 20, "hasImages": false}),
    ));
    w.wire(event(3, json!({"type": "agent_start"})));
    w.wire(event(4, json!({"type": "turn_start", "turnIndex": 0})));
    w.wire(event(
        5,
        json!({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash",
               "args": {"command": "cat big.txt"}}),
    ));
    w.wire(event(
        6,
        json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash",
               "isError": false, "durationMs": 40}),
    ));
    w.wire(event(
        7,
        json!({"type": "session_before_compact", "reason": "threshold", "willRetry": false,
               "tokensBefore": 9400}),
    ));
    w.wire(event(
        8,
        json!({"type": "session_compact", "reason": "threshold", "willRetry": false,
               "fromExtension": false, "tokensBefore": 9400}),
    ));
    w.wire(event(9, json!({"type": "turn_start", "turnIndex": 1})));
    w.wire(failed_run_end(10));
    let compaction = json!({"kind": "compaction", "id": "k1", "tokensBefore": 9400});
    w.wire(settled(11, vec![user("m1"), compaction, refused("m2")]));
}

#[tokio::test(start_paused = true)]
async fn a_run_cut_off_by_a_compaction_is_poked_and_a_second_failure_is_poked_after_the_cooldown() {
    let mut w = World::new();
    stalled_run(&w);
    w.settle().await;
    let pokes = w.lp.bridge.messages();
    assert_eq!(pokes.len(), 1, "the settle pokes at once: {:?}", w.lp.bridge.sent);
    let (first_id, first) = &pokes[0];
    assert_eq!(first.custom_type, "poke");
    assert!(
        first.content.starts_with("[Poke] The context was compacted") && first.content.contains(REJECTED),
        "{}",
        first.content
    );
    assert_eq!(
        w.records("POKE-W4", "action"),
        vec!["sent the post-compaction resume poke"]
    );
    w.reply(*first_id, Ok(json!({})));

    // pi runs the poke, and its request is refused again.
    w.wire(event(12, json!({"type": "agent_start"})));
    w.wire(event(13, json!({"type": "turn_start", "turnIndex": 2})));
    w.wire(failed_run_end(14));
    let poke_entry = json!({"kind": "custom_message", "id": "p1", "customType": "poke", "display": false});
    w.wire(settled(
        15,
        vec![user("m1"), refused("m2"), poke_entry, refused("m3")],
    ));
    w.settle().await;
    assert_eq!(
        w.lp.bridge.messages().len(),
        1,
        "no second poke within the cooldown"
    );
    let waits = w.records("POKE-W4", "declined");
    assert!(
        waits
            .iter()
            .any(|r| r.contains("waits") && r.contains("cooldown")),
        "the wait is logged: {waits:?}"
    );
    assert!(
        w.screen_text().contains("(cooldown)"),
        "the side pane shows the wait"
    );

    w.run_secs(25).await;
    assert_eq!(w.lp.bridge.messages().len(), 1, "still within the 30 s cooldown");
    w.run_secs(5).await;
    let pokes = w.lp.bridge.messages();
    assert_eq!(
        pokes.len(),
        2,
        "the cooldown ended: poke #2 {:?}",
        w.lp.bridge.sent
    );
    assert!(pokes[1].0 > *first_id, "a new command id");
    assert!(pokes[1].1.content.starts_with("[Poke] The context was compacted"));
    assert_eq!(
        w.records("POKE-W4", "action").len(),
        2,
        "both pokes are in the ledger: {:?}",
        w.ledger()
    );
}
