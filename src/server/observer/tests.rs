//! The observer pushes what changed with the input that changed it: no clock has to pass.

use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::*;
use crate::pi::bridge::server::BridgeEvent;
use pokeshell_core::bridge::{FromBridge, parse_from_bridge};
use pokeshell_core::config::Settings;
use pokeshell_core::session::SessionOptions;

const FILE: &str = "/s/one.jsonl";

fn settings() -> Settings {
    let dir = std::env::temp_dir();
    let paths = pokeshell_core::config::ConfigPaths::resolve(
        Some(&dir.join("pokeshell-no-home")),
        None,
        &dir.join("pokeshell-no-work"),
    )
    .expect("paths");
    Settings::from_loaded(paths, Vec::new())
}

fn bridge(line: Value) -> Input {
    Input::Bridge(
        match parse_from_bridge(line.to_string().as_bytes()).expect("a bridge line") {
            FromBridge::Hello(hello) => BridgeEvent::Connected { conn: 1, hello },
            FromBridge::Event { seq, at, event } => BridgeEvent::Event {
                conn: 1,
                seq,
                at,
                event,
            },
            other => panic!("not used here: {other:?}"),
        },
    )
}

/// The loop's order: the layer sees the input, the session takes it, the layer sees the effects,
/// then acts.
fn feed(o: &mut Observer, s: &mut Session, input: Input, ms: u64) {
    let now = Now::new(ms, 1_700_000_000_000 + ms);
    o.observe(&input);
    for e in s.handle(input, now) {
        o.observe_effect(&e);
    }
    o.act(now, s);
}

fn reports(rx: &mut UnboundedReceiver<ServerMsg>) -> Vec<Report> {
    let mut out = Vec::new();
    while let Ok(msg) = rx.try_recv() {
        if let ServerMsg::Event(ServerEvent::Report { number: 4, report }) = msg {
            out.push(report);
        }
    }
    out
}

#[test]
fn a_run_that_starts_is_reported_with_the_input_that_started_it() {
    let opts = SessionOptions {
        label: "pi".into(),
        bridge: Some(Ok(())),
        ..SessionOptions::default()
    };
    let mut s = Session::new(opts, settings(), 120, 40, Now::new(0, 1_700_000_000_000));
    let (tx, mut rx) = unbounded_channel();
    let mut o = Observer::new(4, tx, String::new());
    feed(&mut o, &mut s, Input::ChildStarted { pid: 7 }, 10);
    feed(
        &mut o,
        &mut s,
        bridge(
            json!({"type": "hello", "protocol": 1, "token": "t", "piVersion": "1.6.0", "pid": 9,
            "instance": "a", "reconnect": false, "dropped": 0, "sessionId": "s1", "sessionFile": FILE,
            "sessionName": null, "model": "mock/m", "mode": "tui", "cwd": "/w"}),
        ),
        20,
    );
    let before = reports(&mut rx);
    assert!(before.iter().all(|r| !r.mid_run), "{before:?}");
    assert_eq!(before.last().and_then(|r| r.session_file.as_deref()), Some(FILE));
    // Keys and pane output alone do not make the layer look again.
    feed(
        &mut o,
        &mut s,
        Input::Stdin {
            client: 1,
            bytes: b"x".to_vec(),
        },
        21,
    );
    assert!(reports(&mut rx).is_empty());
    feed(
        &mut o,
        &mut s,
        bridge(
            json!({"type": "event", "seq": 1, "at": 1_700_000_000_030u64, "event": {"type": "agent_start"}}),
        ),
        30,
    );
    let now = reports(&mut rx);
    assert_eq!(now.len(), 1, "reported at once, at the same instant: {now:?}");
    assert!(now[0].mid_run);
}

#[test]
fn a_notification_goes_to_the_server_with_the_command_of_the_moment() {
    let (tx, mut rx) = unbounded_channel();
    let mut o = Observer::new(4, tx, "notify-send".into());
    o.observe_effect(&Effect::Notify {
        text: "done".into(),
        bell: true,
        desktop: false,
    });
    match rx.try_recv() {
        Ok(ServerMsg::Event(ServerEvent::Notify {
            number: 4,
            text,
            command,
            ..
        })) => assert_eq!((text.as_str(), command.as_str()), ("done", "notify-send")),
        other => panic!("no notification: {other:?}"),
    }
}

#[test]
fn what_the_bridge_says_of_the_conversation_goes_to_the_server_as_it_comes() {
    let opts = SessionOptions {
        label: "pi".into(),
        bridge: Some(Ok(())),
        ..SessionOptions::default()
    };
    let mut s = Session::new(opts, settings(), 120, 40, Now::new(0, 1_700_000_000_000));
    let (tx, mut rx) = unbounded_channel();
    let mut o = Observer::new(4, tx, String::new());
    let reply = json!({"type": "event", "seq": 1, "at": 1_700_000_000_030u64, "event": {
        "type": "message_end", "text": "Shall I migrate the old rows?",
        "message": {"id": null, "role": "assistant", "stopReason": "stop", "errorMessage": null,
            "content": [{"type": "text", "nonBlank": true},
                        {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls -l"}}],
            "toolCallId": null, "toolName": null, "isError": null, "customType": null},
        "usage": null}});
    feed(&mut o, &mut s, bridge(reply), 30);
    let mut heard = Vec::new();
    while let Ok(msg) = rx.try_recv() {
        if let ServerMsg::Event(ServerEvent::Talk { number: 4, said }) = msg {
            heard.extend(said);
        }
    }
    assert_eq!(
        heard,
        vec![pokeshell_core::talk::Said::Reply {
            text: "Shall I migrate the old rows?".into(),
            tools: vec![pokeshell_core::talk::ToolUse {
                id: "c1".into(),
                name: "bash".into(),
                call: "ls -l".into()
            }]
        }]
    );
}
