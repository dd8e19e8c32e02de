use serde_json::json;

use super::*;
use crate::bridge::{
    AgentEnd, AgentSettled, Block, InputEvent, InputSource, MessageEnd, MessageSummary, PiEvent, Role,
    StopReason, TokenUsage,
};
use crate::supervisor::{LedgerKind, LedgerRecord};

fn summary(role: Role) -> MessageSummary {
    MessageSummary {
        id: None,
        role,
        stop_reason: None,
        error_message: None,
        content: Vec::new(),
        tool_call_id: None,
        tool_name: None,
        is_error: None,
        custom_type: None,
    }
}

fn end(message: MessageSummary, text: Option<&str>, cost: Option<f64>) -> PiEvent {
    PiEvent::MessageEnd(MessageEnd {
        message,
        usage: cost.map(|c| TokenUsage {
            output: 10,
            cost_usd: Some(c),
            ..TokenUsage::default()
        }),
        text: text.map(Box::from),
    })
}

fn input(source: InputSource) -> PiEvent {
    PiEvent::Input(InputEvent {
        source,
        streaming_behavior: None,
        text_chars: 3,
        has_images: false,
    })
}

fn settled(aborted: bool) -> PiEvent {
    PiEvent::AgentSettled(AgentSettled {
        aborted,
        idle: Some(true),
        pending_messages: Some(false),
        context_usage: None,
        tail: Vec::new(),
        tail_truncated: false,
        final_text: None,
    })
}

#[test]
fn a_run_becomes_prompt_reply_with_its_calls_result_and_end_with_its_cost() {
    let mut h = Heard::default();
    assert_eq!(h.event(&input(InputSource::Interactive)), None);
    assert_eq!(h.event(&PiEvent::AgentStart), None);
    let prompt = h.event(&end(summary(Role::User), Some("fix the test"), None));
    assert_eq!(
        prompt,
        Some(Said::Prompt {
            by: By::You,
            text: "fix the test".into()
        })
    );
    let mut reply = summary(Role::Assistant);
    reply.content = vec![
        Block::Text { non_blank: true },
        Block::ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: json!({"command": "cargo   test\n  --lib", "timeout": 60}),
        },
    ];
    let said = h.event(&end(reply, Some("Running the tests."), Some(0.01)));
    assert_eq!(
        said,
        Some(Said::Reply {
            text: "Running the tests.".into(),
            tools: vec![ToolUse {
                id: "c1".into(),
                name: "bash".into(),
                call: "cargo test --lib".into()
            }]
        })
    );
    let mut result = summary(Role::ToolResult);
    (result.tool_call_id, result.tool_name, result.is_error) =
        (Some("c1".into()), Some("bash".into()), Some(true));
    assert_eq!(
        h.event(&end(result, Some("1 failed"), None)),
        Some(Said::Result {
            id: "c1".into(),
            name: "bash".into(),
            ok: false,
            text: "1 failed".into()
        })
    );
    h.event(&end(
        summary(Role::Assistant),
        Some("Should I also fix the docs?"),
        Some(0.02),
    ));
    assert_eq!(
        h.event(&settled(false)),
        Some(Said::RunEnd {
            ending: Ending::Done,
            error: None,
            cost_usd: Some(0.03),
            tokens_out: 20
        })
    );
    // The next run starts from nothing.
    assert!(matches!(
        h.event(&settled(false)),
        Some(Said::RunEnd {
            cost_usd: None,
            tokens_out: 0,
            ..
        })
    ));
}

#[test]
fn pokeshell_s_own_messages_are_told_apart_and_thinking_only_replies_say_nothing() {
    let mut h = Heard::default();
    h.event(&input(InputSource::Extension));
    assert_eq!(
        h.event(&end(summary(Role::User), Some("Please continue."), None)),
        Some(Said::Prompt {
            by: By::Pokeshell,
            text: "Please continue.".into()
        })
    );
    // The next prompt without an input event of its own is the person's again.
    assert!(matches!(
        h.event(&end(summary(Role::User), Some("go"), None)),
        Some(Said::Prompt { by: By::You, .. })
    ));
    let mut custom = summary(Role::Custom);
    custom.custom_type = Some("pokeshell-resume".into());
    assert!(matches!(
        h.event(&end(custom, Some("Carry on"), None)),
        Some(Said::Prompt {
            by: By::Pokeshell,
            ..
        })
    ));
    let mut other = summary(Role::Custom);
    other.custom_type = Some("someone-else".into());
    assert_eq!(h.event(&end(other, Some("x"), None)), None);
    assert_eq!(h.event(&end(summary(Role::Assistant), None, None)), None);
    assert_eq!(h.event(&end(summary(Role::System), Some("sys"), None)), None);
}

#[test]
fn an_aborted_or_failed_run_says_so() {
    let mut h = Heard::default();
    h.event(&PiEvent::AgentStart);
    h.event(&PiEvent::AgentEnd(AgentEnd {
        stop_reason: Some(StopReason::Error),
        error_message: Some("429 rate limited".into()),
        message_count: 1,
    }));
    assert_eq!(
        h.event(&settled(false)),
        Some(Said::RunEnd {
            ending: Ending::Failed,
            error: Some("429 rate limited".into()),
            cost_usd: None,
            tokens_out: 0
        })
    );
    assert!(matches!(
        h.event(&settled(true)),
        Some(Said::RunEnd {
            ending: Ending::Aborted,
            error: None,
            ..
        })
    ));
}

#[test]
fn interventions_are_pokeshell_s_actions_only() {
    let mut h = Heard::default();
    let mut r = LedgerRecord {
        wall_ms: 1,
        session_id: None,
        rule: "STALL-S1",
        kind: LedgerKind::Action,
        reason: "aborted the agent after a stalled stream".into(),
        sent: None,
    };
    assert_eq!(
        h.record(&r),
        Some(Said::Intervention {
            rule: "STALL-S1".into(),
            text: "aborted the agent after a stalled stream".into()
        })
    );
    r.kind = LedgerKind::Declined;
    assert_eq!(h.record(&r), None);
}

#[test]
fn long_texts_keep_their_start_and_their_end() {
    let text = format!("Start{}End?", "x".repeat(10_000));
    let b = bounded(&text, 400);
    assert!(b.starts_with("Start") && b.ends_with("End?"), "{b}");
    assert!(b.contains("[9609 characters left out]"), "{b}");
    assert_eq!(bounded("short", 400), "short");
    let long_call = call_line(&json!({"path": "a".repeat(1000)}));
    assert_eq!(long_call.chars().count(), CALL_MAX);
    assert_eq!(call_line(&json!({})), "");
    assert_eq!(call_line(&json!({"n": 3})), r#"{"n":3}"#);
}

fn prompt(text: &str) -> Said {
    Said::Prompt {
        by: By::You,
        text: text.into(),
    }
}

#[test]
fn the_log_numbers_items_and_gives_what_came_after_one() {
    let mut t = Talk::new(77);
    assert_eq!(t.last_seq(), 0);
    t.push(prompt("a"), 1000);
    t.push(prompt("b"), 2000);
    let e = t.push(prompt("c"), 3000);
    assert_eq!((e.seq, e.at_ms), (3, 3000));
    let after = t.since(77, 1);
    assert_eq!(after.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![2, 3]);
    assert_eq!(t.since(77, 3), vec![]);
    assert_eq!(t.since(5, 3).len(), 3, "another log: everything kept");
}

#[test]
fn the_log_is_bounded_in_count_and_in_bytes() {
    let mut t = Talk::new(1);
    for i in 0..(MAX_ENTRIES + 20) {
        t.push(prompt(&i.to_string()), 0);
    }
    let all = t.since(1, 0);
    assert_eq!(all.len(), MAX_ENTRIES);
    assert_eq!(all[0].seq, 21, "the oldest went first");
    let mut t = Talk::new(1);
    let big = "y".repeat(TEXT_MAX);
    for _ in 0..100 {
        t.push(prompt(&big), 0);
    }
    let kept: usize = t.since(1, 0).iter().map(|e| e.said.weight()).sum();
    assert!(kept <= MAX_BYTES, "{kept} bytes kept");
    assert_eq!(t.last_seq(), 100);
    assert!(t.digest(1, 0).partial, "the digest says older items were dropped");
}

#[test]
fn a_digest_counts_what_happened_after_an_item() {
    let mut t = Talk::new(9);
    t.push(prompt("old"), 0);
    let seen = t.last_seq();
    t.push(
        Said::Reply {
            text: "ok".into(),
            tools: vec![ToolUse {
                id: "1".into(),
                name: "bash".into(),
                call: "ls".into(),
            }],
        },
        0,
    );
    t.push(
        Said::Result {
            id: "1".into(),
            name: "bash".into(),
            ok: false,
            text: String::new(),
        },
        0,
    );
    for i in 0..4 {
        t.push(
            Said::Intervention {
                rule: "R".into(),
                text: format!("did {i}"),
            },
            0,
        );
    }
    for cost in [Some(0.5), None, Some(0.25)] {
        t.push(
            Said::RunEnd {
                ending: Ending::Done,
                error: None,
                cost_usd: cost,
                tokens_out: 1,
            },
            0,
        );
    }
    let d = t.digest(9, seen);
    assert_eq!(
        (
            d.prompts,
            d.replies,
            d.tool_calls,
            d.tool_errors,
            d.interventions,
            d.runs
        ),
        (0, 1, 1, 1, 4, 3)
    );
    assert_eq!(d.quoted, vec!["did 1", "did 2", "did 3"]);
    assert_eq!(d.cost_usd, Some(0.75));
    assert_eq!((d.epoch, d.seq, d.partial), (9, t.last_seq(), false));
    assert_eq!(t.digest(9, t.last_seq()).runs, 0, "nothing after the newest");
    assert_eq!(t.digest(9, t.last_seq()).cost_usd, None);
}

#[test]
fn entries_travel_as_flat_json() {
    let e = Entry {
        seq: 4,
        at_ms: 5,
        said: prompt("hi"),
    };
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(
        v,
        json!({"seq": 4, "at_ms": 5, "kind": "prompt", "by": "you", "text": "hi"})
    );
    assert_eq!(serde_json::from_value::<Entry>(v).unwrap(), e);
}
