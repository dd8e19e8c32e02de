//! Round trips of every message, and the exact JSON shapes the TypeScript side reads and writes.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

mod samples;
use samples::{every_command, every_event};

fn round_trip_from_bridge(msg: FromBridge) {
    let line = serde_json::to_string(&msg).unwrap();
    assert!(!line.contains('\n'));
    assert_eq!(parse_from_bridge(line.as_bytes()).unwrap(), msg, "{line}");
}

fn round_trip_to_bridge(msg: ToBridge) {
    let line = encode_to_bridge(&msg).unwrap();
    assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
    assert_eq!(serde_json::from_str::<ToBridge>(&line).unwrap(), msg, "{line}");
}

fn event(event: PiEvent) -> FromBridge {
    FromBridge::Event {
        seq: 7,
        at: 1_700_000_000_000,
        event,
    }
}

fn hello() -> Hello {
    Hello {
        protocol: PROTOCOL_VERSION,
        token: "t0k".into(),
        pi_version: Some("1.6.0".into()),
        pid: 4242,
        instance: "i-1".into(),
        reconnect: true,
        dropped: 3,
        session_id: Some("s1".into()),
        session_file: Some("/tmp/s1.jsonl".into()),
        session_name: None,
        mode: Some("tui".into()),
        model: Some("mock/mock-model".into()),
        cwd: Some("/work".into()),
    }
}

#[test]
fn the_bridges_progress_line_parses_and_an_unknown_kind_is_kept_as_other() {
    let parsed: PiEvent = serde_json::from_value(json!({"type": "progress", "kind": "toolcall"})).unwrap();
    assert_eq!(
        parsed,
        PiEvent::Progress(Progress {
            kind: ProgressKind::Toolcall
        })
    );
    let newer: PiEvent = serde_json::from_value(json!({"type": "progress", "kind": "image"})).unwrap();
    assert_eq!(
        newer,
        PiEvent::Progress(Progress {
            kind: ProgressKind::Other
        })
    );
}

#[test]
fn every_bridge_message_round_trips() {
    round_trip_from_bridge(FromBridge::Hello(hello()));
    for e in every_event() {
        round_trip_from_bridge(event(e));
    }
    round_trip_from_bridge(FromBridge::Reply(Reply {
        seq: Some(12),
        id: 3,
        ok: true,
        result: json!({"idle": true}),
        error: None,
    }));
    round_trip_from_bridge(FromBridge::Reply(Reply {
        seq: None,
        id: 4,
        ok: false,
        result: Value::Null,
        error: Some("no session".into()),
    }));
}

#[test]
fn every_pokeshell_message_round_trips() {
    round_trip_to_bridge(ToBridge::Welcome {
        protocol: PROTOCOL_VERSION,
    });
    round_trip_to_bridge(ToBridge::Rejected {
        reason: "wrong token".into(),
    });
    for (i, command) in every_command().into_iter().enumerate() {
        round_trip_to_bridge(ToBridge::Command {
            id: i as u64 + 1,
            command,
        });
    }
}

#[test]
fn command_names_match_their_wire_tags() {
    for command in every_command() {
        let value = serde_json::to_value(&command).unwrap();
        assert_eq!(value["type"], command.name());
    }
}

/// The shapes below are what pokeshell-bridge.ts writes; they pin the field names.
#[test]
fn parses_lines_as_the_bridge_writes_them() {
    let hello = r#"{"type":"hello","protocol":1,"token":"abc","piVersion":"1.6.0","pid":9,"instance":"u",
        "reconnect":false,"dropped":0,"sessionId":"s","sessionFile":null,"sessionName":null,
        "model":"mock/mock-model","mode":"print","cwd":"/w"}"#;
    let FromBridge::Hello(h) = parse_from_bridge(hello.as_bytes()).unwrap() else {
        panic!("not a hello")
    };
    assert_eq!(
        (h.token.as_str(), h.pid, h.mode.as_deref()),
        ("abc", 9, Some("print"))
    );

    let turn_end = r#"{"type":"event","seq":11,"at":4,"event":{"type":"turn_end","turnIndex":3,
        "tail":[],"tailTruncated":false,"holdId":7}}"#;
    let FromBridge::Event {
        event: PiEvent::TurnEnd(t),
        ..
    } = parse_from_bridge(turn_end.as_bytes()).unwrap()
    else {
        panic!("not a turn_end")
    };
    assert_eq!((t.turn_index, t.hold_id), (3, Some(7)));

    let settled = r#"{"type":"event","seq":12,"at":5,"event":{"type":"agent_settled","aborted":true,"idle":true,
        "pendingMessages":false,"contextUsage":{"tokens":null,"contextWindow":16000,"percent":null},
        "tail":[{"kind":"message","id":"x","role":"assistant","stopReason":"aborted",
                 "errorMessage":"This operation was aborted","content":[],"toolCallId":null,"toolName":null,
                 "isError":null,"customType":null},
                {"kind":"message","id":"y","role":"toolResult","stopReason":null,"errorMessage":null,
                 "content":[{"type":"text","nonBlank":true}],"toolCallId":"c","toolName":"bash","isError":true,
                 "customType":null},
                {"kind":"custom_message","id":"z","customType":"wakeup","display":true}],
        "tailTruncated":false,"finalText":"Now I'll run the tests:"}}"#;
    let FromBridge::Event {
        seq,
        event: PiEvent::AgentSettled(s),
        ..
    } = parse_from_bridge(settled.as_bytes()).unwrap()
    else {
        panic!("not a settle")
    };
    assert_eq!(seq, 12);
    assert!(s.aborted);
    assert_eq!(s.context_usage.unwrap().tokens, None);
    assert_eq!(s.tail.len(), 3);
    assert_eq!(s.final_text.as_deref(), Some("Now I'll run the tests:"));
    let TailEntry::Message(m) = &s.tail[1] else {
        panic!("not a message")
    };
    assert_eq!(
        (m.role, m.is_error, m.tool_call_id.as_deref()),
        (Role::ToolResult, Some(true), Some("c"))
    );

    let reply = r#"{"type":"reply","id":5,"ok":false,"error":"no tool call c9 is waiting for a reply"}"#;
    let FromBridge::Reply(r) = parse_from_bridge(reply.as_bytes()).unwrap() else {
        panic!("not a reply")
    };
    assert_eq!(
        r.into_result(),
        Err("no tool call c9 is waiting for a reply".to_owned())
    );

    let start = r#"{"type":"event","seq":1,"at":2,"event":{"type":"agent_start"}}"#;
    assert!(matches!(
        parse_from_bridge(start.as_bytes()).unwrap(),
        FromBridge::Event {
            event: PiEvent::AgentStart,
            ..
        }
    ));
}

#[test]
fn commands_are_written_as_the_bridge_reads_them() {
    let send = ToBridge::Command {
        id: 3,
        command: Command::SendMessage(SendMessage {
            custom_type: "pokeshell-poke".into(),
            content: "go".into(),
            display: false,
            trigger_turn: true,
            deliver_as: Some(DeliverAs::FollowUp),
            details: None,
        }),
    };
    assert_eq!(
        serde_json::to_value(&send).unwrap(),
        json!({"type": "command", "id": 3, "command": {"type": "send_message", "customType": "pokeshell-poke",
               "content": "go", "display": false, "triggerTurn": true, "deliverAs": "followUp"}})
    );
    let reply = ToBridge::Command {
        id: 4,
        command: Command::ToolReply(ToolReply {
            call_id: "c".into(),
            text: "ok".into(),
            is_error: true,
            details: None,
        }),
    };
    assert_eq!(
        serde_json::to_value(&reply).unwrap(),
        json!({"type": "command", "id": 4, "command": {"type": "tool_reply", "callId": "c", "text": "ok", "isError": true}})
    );
    assert_eq!(
        serde_json::to_value(ToBridge::Command {
            id: 5,
            command: Command::Abort
        })
        .unwrap(),
        json!({"type": "command", "id": 5, "command": {"type": "abort"}})
    );
    assert_eq!(
        serde_json::to_value(ToBridge::Command {
            id: 6,
            command: Command::CommandAnswer {
                request_id: 2,
                text: "Poke sent.".into(),
                level: NotifyLevel::Warning,
            }
        })
        .unwrap(),
        json!({"type": "command", "id": 6, "command": {"type": "command_answer", "requestId": 2,
               "text": "Poke sent.", "level": "warning"}})
    );
    assert_eq!(
        serde_json::to_value(ToBridge::Command {
            id: 6,
            command: Command::ReleaseTurn { hold_id: 9 }
        })
        .unwrap(),
        json!({"type": "command", "id": 6, "command": {"type": "release_turn", "holdId": 9}})
    );
}

#[test]
fn unknown_events_and_values_are_tolerated() {
    let newer = r#"{"type":"event","seq":1,"at":2,"event":{"type":"some_future_event","x":1}}"#;
    assert!(matches!(
        parse_from_bridge(newer.as_bytes()).unwrap(),
        FromBridge::Event {
            event: PiEvent::Unknown,
            ..
        }
    ));
    let end = r#"{"type":"event","seq":1,"at":2,"event":{"type":"agent_end","stopReason":"brand_new","messageCount":1}}"#;
    let FromBridge::Event {
        event: PiEvent::AgentEnd(end),
        ..
    } = parse_from_bridge(end.as_bytes()).unwrap()
    else {
        panic!("not an agent_end")
    };
    assert_eq!(end.stop_reason, Some(StopReason::Other));
}

#[test]
fn malformed_lines_are_errors_not_panics() {
    for bad in [
        &b""[..],
        b"not json",
        b"{\"type\":\"hello\"}",
        b"{\"type\":\"event\",\"seq\":\"x\"}",
        b"{\"no_type\":1}",
        b"[1,2,3]",
        b"\xff\xfe\x00",
        b"{\"type\":\"reply\",\"id\":-1,\"ok\":true}",
    ] {
        assert!(
            parse_from_bridge(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn reply_without_error_text_still_says_something() {
    let r = Reply {
        seq: None,
        id: 1,
        ok: false,
        result: Value::Null,
        error: None,
    };
    assert!(!r.into_result().unwrap_err().is_empty());
}

proptest! {
    #[test]
    fn any_send_message_round_trips(
        custom_type in "\\PC{0,40}",
        content in "\\PC{0,400}",
        display: bool,
        trigger_turn: bool,
        id in 0u64..u64::MAX,
    ) {
        let msg = ToBridge::Command {
            id,
            command: Command::SendMessage(SendMessage {
                custom_type, content, display, trigger_turn, deliver_as: None, details: None,
            }),
        };
        let line = encode_to_bridge(&msg).unwrap();
        prop_assert_eq!(line.matches('\n').count(), 1);
        prop_assert_eq!(serde_json::from_str::<ToBridge>(&line).unwrap(), msg);
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_parser(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_from_bridge(&bytes);
    }
}
