use super::*;

fn marks(begun: u64, settled: u64, going_on: bool) -> Marks {
    Marks {
        begun,
        settled,
        going_on,
    }
}

#[test]
fn texts_that_are_empty_or_too_long_are_refused_with_the_reason() {
    assert!(check_text("fix the test").is_ok());
    let empty = check_text(" \n\t").unwrap_err();
    assert!(empty.contains("empty"), "{empty}");
    assert!(check_text(&"x".repeat(MAX_TEXT_BYTES)).is_ok());
    let long = check_text(&"x".repeat(MAX_TEXT_BYTES + 1)).unwrap_err();
    assert!(
        long.contains("128 KiB") && long.contains("131073 bytes"),
        "{long}"
    );
}

#[test]
fn a_wait_for_idle_waits_for_the_run_the_last_message_started() {
    let idle = Some(Attention::Idle);
    // Nothing sent: an idle session is idle.
    assert_eq!(
        verdict(Until::Idle, idle, marks(0, 0, false), 0),
        Verdict::Reached
    );
    // Message 3 was delivered but its run has not settled: the brief may still say idle (pi has not
    // started the run yet), the wait goes on.
    assert_eq!(
        verdict(Until::Idle, idle, marks(3, 2, false), 3),
        Verdict::Waiting
    );
    assert_eq!(
        verdict(Until::Idle, idle, marks(3, 3, false), 3),
        Verdict::Reached
    );
    // Settled, but pokeshell sent a resume: the run goes on.
    assert_eq!(verdict(Until::Idle, idle, marks(3, 3, true), 3), Verdict::Waiting);
    // Working, stalled, waiting out a limit: not over.
    for a in [Attention::Working, Attention::Stalled, Attention::Limit] {
        assert_eq!(
            verdict(Until::Idle, Some(a), marks(3, 3, false), 3),
            Verdict::Waiting
        );
    }
    // A question or a rule that gave up ends the wait, told apart.
    for a in [Attention::Question, Attention::GaveUp] {
        assert_eq!(
            verdict(Until::Idle, Some(a), marks(3, 3, false), 3),
            Verdict::Stopped
        );
        assert_eq!(
            verdict(Until::Idle, Some(a), marks(3, 2, false), 3),
            Verdict::Waiting
        );
    }
    // Still starting: no brief.
    assert_eq!(
        verdict(Until::Idle, None, marks(0, 0, false), 0),
        Verdict::Waiting
    );
}

#[test]
fn a_wait_for_needs_you_takes_only_what_came_after_the_last_message() {
    // Gave up before the message: the run it starts has not begun, so that is old news.
    let gave_up = Some(Attention::GaveUp);
    assert_eq!(
        verdict(Until::NeedsYou, gave_up, marks(1, 1, false), 2),
        Verdict::Waiting
    );
    assert_eq!(
        verdict(Until::NeedsYou, gave_up, marks(2, 1, false), 2),
        Verdict::Reached
    );
    // A limit met mid-run needs the person while the run has not settled.
    assert_eq!(
        verdict(Until::NeedsYou, Some(Attention::Limit), marks(2, 1, false), 2),
        Verdict::Reached
    );
    for a in [Attention::Idle, Attention::Working, Attention::Exited] {
        assert_eq!(
            verdict(Until::NeedsYou, Some(a), marks(2, 2, false), 2),
            Verdict::Waiting
        );
    }
    // The session's end decides an exit, never a brief.
    assert_eq!(
        verdict(Until::Exited, Some(Attention::Exited), marks(0, 0, false), 0),
        Verdict::Waiting
    );
}

#[test]
fn needs_you_is_the_lists_first_four() {
    let needing: Vec<Attention> = [
        Attention::Question,
        Attention::GaveUp,
        Attention::Limit,
        Attention::Stalled,
        Attention::Working,
        Attention::Idle,
        Attention::Exited,
    ]
    .into_iter()
    .filter(|a| a.needs_you())
    .collect();
    assert_eq!(
        needing,
        [
            Attention::Question,
            Attention::GaveUp,
            Attention::Limit,
            Attention::Stalled
        ]
    );
}

#[test]
fn an_event_reads_as_one_line() {
    let state = Event {
        kind: "state".into(),
        attention: Some("idle".into()),
        state: Some("idle".into()),
        ..Default::default()
    };
    assert_eq!(state.line(), "state idle");
    let stalled = Event {
        kind: "state".into(),
        attention: Some("stalled".into()),
        state: Some("stalled 12s".into()),
        ..Default::default()
    };
    assert_eq!(stalled.line(), "state stalled (stalled 12s)");
    let poke = Event {
        kind: "intervention".into(),
        rule: Some("POKE-W4".into()),
        text: Some("resumed after a compaction stall".into()),
        ..Default::default()
    };
    assert_eq!(
        poke.line(),
        "intervention POKE-W4 resumed after a compaction stall"
    );
    let started = Event {
        kind: "started".into(),
        by: Some("1:lead".into()),
        ..Default::default()
    };
    assert_eq!(started.line(), "started by 1:lead");
    let ended = Event {
        kind: "ended".into(),
        code: Some(0),
        ..Default::default()
    };
    assert_eq!(ended.line(), "ended (code 0)");
}

#[test]
fn the_transcript_document_keeps_its_field_names() {
    let doc = Transcript {
        schema: SCHEMA,
        session: "2:w".into(),
        attention: "idle".into(),
        state: "idle".into(),
        reply: Some("done".into()),
        messages: vec![Message {
            role: "assistant".into(),
            text: "done".into(),
            tool_calls: vec![ToolCall {
                name: "bash".into(),
                arguments: serde_json::json!({"command": "ls"}),
            }],
            tokens: Some(Tokens {
                input: 10,
                output: 2,
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    };
    let v = serde_json::to_value(&doc).unwrap();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["messages"][0]["tool_calls"][0]["name"], "bash");
    assert_eq!(v["messages"][0]["tokens"]["output"], 2);
    assert!(
        v["messages"][0].get("tool_name").is_none(),
        "absent fields are left out"
    );
    let back: Transcript = serde_json::from_value(v).unwrap();
    assert_eq!(back, doc);
}

/// Second red-team pass (issue 34): pi drew a sent text as it was, so `send` could put escape
/// sequences on its screen (a notification in the session's name, a cleared screen, a clipboard
/// write where allowed). They are written out; lines, tabs and the words stay.
#[test]
fn a_sent_text_holds_nothing_a_terminal_acts_on() {
    assert_eq!(defused("fix it\n\tplease"), "fix it\n\tplease");
    assert_eq!(defused("a\r\nb"), "a\nb");
    assert_eq!(
        defused("x\u{1b}]9;done\u{7} \u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2J\ry"),
        "x\\x1b]9;done\\x07 \\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\ry"
    );
    assert_eq!(defused("\u{202e}evil \u{9b}31m"), "\\u{202e}evil \\x9b31m");
    assert_eq!(defused("Grüße, 世界"), "Grüße, 世界");
}
