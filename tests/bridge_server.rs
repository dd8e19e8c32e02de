//! The bridge socket server against hand-written clients: handshake, bad input of every kind,
//! replies, heartbeats, cleanup; which connection is live in `admission`.

#[path = "bridge_server/admission.rs"]
mod admission;
#[path = "bridge_server/client.rs"]
mod client;
#[path = "support/foreign_peer.rs"]
mod foreign_peer;

use std::time::Duration;

use client::{Client, WAIT, hello_line, poke, start, start_with};
use pokeshell::pi::bridge::{BridgeEvent, SendError};
use pokeshell_core::bridge::{Command, ENV_SOCKET, MAX_LINE_BYTES, PROTOCOL_VERSION, PiEvent};
use serde_json::json;

#[tokio::test]
async fn hello_with_the_right_token_connects_and_events_flow() {
    let mut server = start();
    assert!(!server.handle.is_connected());
    let (mut client, conn) = server.connect_ok().await;
    assert!(server.handle.is_connected());
    client
        .send_event(1, json!({"type": "agent_settled", "aborted": true}))
        .await;
    let (seq, event) = server
        .expect("agent_settled", |e| match e {
            BridgeEvent::Event {
                conn: c, seq, event, ..
            } if c == conn => Some((seq, event)),
            _ => None,
        })
        .await;
    assert_eq!(seq, 1);
    let PiEvent::AgentSettled(settled) = event else {
        panic!("{event:?}")
    };
    assert!(settled.aborted);
    assert!(settled.tail.is_empty());
}

#[tokio::test]
async fn commands_are_sent_and_replies_matched_by_id() {
    let mut server = start();
    let (mut client, _) = server.connect_ok().await;
    let first = server.handle.send(poke()).unwrap();
    let second = server.handle.send(Command::IsIdle).unwrap();
    assert_ne!(first, second);

    let line = client.read_json().await;
    assert_eq!(line["type"], "command");
    assert_eq!(line["id"], first);
    assert_eq!(line["command"]["type"], "send_message");
    assert_eq!(line["command"]["customType"], "pokeshell-poke");
    assert_eq!(line["command"]["triggerTurn"], true);
    assert_eq!(client.read_json().await["command"]["type"], "is_idle");

    // Answer out of order.
    let answer = json!({"type": "reply", "id": second, "ok": true, "result": {"idle": true}}).to_string();
    client.write_raw(format!("{answer}\n").as_bytes()).await;
    let answer = json!({"type": "reply", "id": first, "ok": false, "error": "no session"}).to_string();
    client.write_raw(format!("{answer}\n").as_bytes()).await;

    let r = server
        .expect("reply", |e| match e {
            BridgeEvent::Reply { id, command, result } => Some((id, command, result)),
            _ => None,
        })
        .await;
    assert_eq!(r, (second, "is_idle", Ok(json!({"idle": true}))));
    let r = server
        .expect("reply", |e| match e {
            BridgeEvent::Reply { id, command, result } => Some((id, command, result)),
            _ => None,
        })
        .await;
    assert_eq!(r, (first, "send_message", Err("no session".to_owned())));
}

#[tokio::test]
async fn send_without_a_bridge_says_not_connected() {
    let server = start();
    assert_eq!(server.handle.send(Command::Abort), Err(SendError::NotConnected));
}

#[tokio::test]
async fn env_names_the_socket_and_a_64_char_token() {
    let server = start();
    let env = server.handle.env();
    let socket = env.iter().find(|(k, _)| *k == ENV_SOCKET).unwrap();
    assert_eq!(std::path::Path::new(&socket.1), server.handle.socket_path());
    assert_eq!(server.token().len(), 64);
    let dir = server.handle.socket_path().parent().unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(dir).unwrap().mode() & 0o777, 0o700);
}

#[tokio::test]
async fn a_wrong_token_is_rejected() {
    let mut server = start();
    let mut client = server
        .connect_with(hello_line("not-the-token", PROTOCOL_VERSION))
        .await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("wrong token"), "{reason}");
    assert_eq!(
        client.read_json().await,
        json!({"type": "rejected", "reason": "wrong token"})
    );
    client.expect_eof().await;
    assert!(!server.handle.is_connected());
}

#[tokio::test]
async fn another_protocol_version_is_rejected() {
    let mut server = start();
    let token = server.token();
    let mut client = server
        .connect_with(hello_line(&token, PROTOCOL_VERSION + 1))
        .await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("protocol"), "{reason}");
    assert_eq!(client.read_json().await["type"], "rejected");
}

#[tokio::test]
async fn garbage_instead_of_a_hello_is_rejected() {
    let mut server = start();
    let mut client = server.connect_with("\u{1b}[31mhello?\n".to_owned()).await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("not a valid hello"), "{reason}");
    client.read_json().await;
    client.expect_eof().await;
}

#[tokio::test]
async fn a_silent_peer_is_rejected_after_the_hello_timeout() {
    let mut server = start_with(Duration::from_millis(200));
    let mut client = Client::open(&server.handle).await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("no hello"), "{reason}");
    assert_eq!(client.read_json().await["type"], "rejected");
}

#[tokio::test]
async fn an_oversized_hello_is_rejected() {
    let mut server = start();
    let mut client = Client::open(&server.handle).await;
    let big = vec![b'x'; MAX_LINE_BYTES + 10];
    client.write_raw(&big).await;
    client.write_raw(b"\n").await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("over the limit"), "{reason}");
}

#[tokio::test]
async fn malformed_json_is_skipped_and_the_next_good_line_arrives() {
    let mut server = start();
    let (mut client, conn) = server.connect_ok().await;
    client.write_raw(b"{\"type\":\"event\",\"seq\":1,\n").await;
    client.write_raw(b"not json at all\n").await;
    client.write_raw(b"\xff\xfe\xfd\n").await;
    client
        .send_event(2, json!({"type": "turn_start", "turnIndex": 4}))
        .await;
    for _ in 0..3 {
        let reason = server
            .expect("Warning", |e| match e {
                BridgeEvent::Warning { conn: c, reason } if c == conn => Some(reason),
                _ => None,
            })
            .await;
        assert!(reason.contains("malformed"), "{reason}");
    }
    let event = server
        .expect("turn_start", |e| match e {
            BridgeEvent::Event { event, .. } => Some(event),
            _ => None,
        })
        .await;
    assert!(matches!(event, PiEvent::TurnStart(t) if t.turn_index == 4));
}

#[tokio::test]
async fn an_oversized_line_is_skipped_and_the_next_good_line_arrives() {
    let mut server = start();
    let (mut client, _) = server.connect_ok().await;
    let big = format!(
        "{{\"type\":\"event\",\"pad\":\"{}\"}}\n",
        "y".repeat(MAX_LINE_BYTES)
    );
    client.write_raw(big.as_bytes()).await;
    client.send_event(2, json!({"type": "agent_start"})).await;
    let reason = server
        .expect("Warning", |e| match e {
            BridgeEvent::Warning { reason, .. } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains(&format!("{} bytes", big.len() - 1)), "{reason}");
    let event = server
        .expect("agent_start", |e| match e {
            BridgeEvent::Event { event, .. } => Some(event),
            _ => None,
        })
        .await;
    assert_eq!(event, PiEvent::AgentStart);
}

#[tokio::test]
async fn half_lines_across_writes_are_joined() {
    let mut server = start();
    let (mut client, _) = server.connect_ok().await;
    let line = json!({"type": "event", "seq": 9, "at": 1, "event": {"type": "turn_start", "turnIndex": 1}})
        .to_string();
    let (a, rest) = line.split_at(7);
    let (b, c) = rest.split_at(20);
    client.write_raw(a.as_bytes()).await;
    tokio::task::yield_now().await;
    client.write_raw(b.as_bytes()).await;
    tokio::task::yield_now().await;
    client.write_raw(format!("{c}\n").as_bytes()).await;
    let seq = server
        .expect("turn_start", |e| match e {
            BridgeEvent::Event {
                seq,
                event: PiEvent::TurnStart(_),
                ..
            } => Some(seq),
            _ => None,
        })
        .await;
    assert_eq!(seq, 9);
}

#[tokio::test]
async fn a_peer_closing_mid_line_disconnects_cleanly_and_fails_its_commands() {
    let mut server = start();
    let (mut client, conn) = server.connect_ok().await;
    let id = server.handle.send(Command::ContextUsage).unwrap();
    assert_eq!(client.read_json().await["id"], id);
    client
        .write_raw(b"{\"type\":\"event\",\"seq\":3,\"at\":1,\"ev")
        .await;
    drop(client);

    let reason = server
        .expect("Warning", |e| match e {
            BridgeEvent::Warning { conn: c, reason } if c == conn => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("middle of a line"), "{reason}");
    server
        .expect("Disconnected", |e| {
            matches!(e, BridgeEvent::Disconnected { conn: c, .. } if c == conn).then_some(())
        })
        .await;
    let (reply_id, result) = server
        .expect("Reply", |e| match e {
            BridgeEvent::Reply { id, result, .. } => Some((id, result)),
            _ => None,
        })
        .await;
    assert_eq!(reply_id, id);
    assert!(result.unwrap_err().contains("ended before replying"));
    assert!(!server.handle.is_connected());
    assert_eq!(server.handle.send(Command::Abort), Err(SendError::NotConnected));
}

#[tokio::test]
async fn a_reply_to_an_unknown_id_is_a_warning() {
    let mut server = start();
    let (mut client, _) = server.connect_ok().await;
    client
        .write_raw(b"{\"type\":\"reply\",\"id\":999,\"ok\":true}\n")
        .await;
    let reason = server
        .expect("Warning", |e| match e {
            BridgeEvent::Warning { reason, .. } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("999"), "{reason}");
}

#[tokio::test]
async fn dropping_the_handle_removes_the_socket_dir_and_ends_the_events() {
    let mut server = start();
    let dir = server.handle.socket_path().parent().unwrap().to_owned();
    assert!(dir.exists());
    drop(server.handle);
    assert!(!dir.exists());
    let end = tokio::time::timeout(WAIT, server.events.recv()).await.unwrap();
    assert_eq!(end, None);
}

/// Heartbeats reach the app with the count of lines missing from the numbering since the previous one:
/// lines the bridge never sent, and lines skipped here.
#[tokio::test]
async fn heartbeats_carry_the_lines_missing_from_the_numbering() {
    let mut server = start();
    let (mut client, conn) = server.connect_ok().await;
    let beat = |seq: u64, tools: &[&str]| {
        json!({"type": "heartbeat", "seq": seq, "at": 5, "idle": false, "pendingMessages": false,
               "runningTools": tools})
        .to_string()
            + "\n"
    };
    client.send_event(1, json!({"type": "agent_start"})).await;
    client.write_raw(beat(2, &[]).as_bytes()).await;
    client
        .send_event(3, json!({"type": "turn_start", "turnIndex": 0}))
        .await;
    // 4 and 5 never come; 6 is garbage and skipped.
    client.write_raw(b"{\"type\":\"event\",\"seq\":6,\"at\":\n").await;
    client.write_raw(beat(7, &["call_1"]).as_bytes()).await;

    let mut beats = Vec::new();
    while beats.len() < 2 {
        if let BridgeEvent::Heartbeat {
            conn: c,
            heartbeat,
            missed,
        } = server.next().await
        {
            assert_eq!(c, conn);
            beats.push((heartbeat.seq, missed, heartbeat.running_tools, heartbeat.idle));
        }
    }
    assert_eq!(
        beats,
        [
            (2, 0, vec![], Some(false)),
            (7, 3, vec!["call_1".to_owned()], Some(false))
        ]
    );
}
