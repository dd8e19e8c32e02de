//! Which connection is live: the same process replaces its own connection, another process is refused
//! while one is live and welcomed once it is gone, another uid never gets in.

use crate::foreign_peer::{ForeignPeer, can_pose};
use pokeshell::pi::bridge::BridgeEvent;
use pokeshell_core::bridge::{Command, PROTOCOL_VERSION};
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::client::{CHILD_REJECTED, CHILD_WELCOMED, WAIT, child_exit, hello_from_child, hello_line, start};

/// Both clients are this test process: one pi process replacing its extension runtime (/new, /reload).
#[tokio::test]
async fn a_second_connection_from_the_same_process_replaces_the_first() {
    let mut server = start();
    let (mut first, first_conn) = server.connect_ok().await;
    let pending = server.handle.send(Command::IsIdle).unwrap();
    first.read_json().await;

    let mut second = server.connect().await;
    assert_eq!(second.read_json().await["type"], "welcome");
    // The old connection ends before the new one is announced; its command fails.
    let reason = server
        .expect("Disconnected of the first", |e| match e {
            BridgeEvent::Disconnected { conn, reason } if conn == first_conn => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("replaced"), "{reason}");
    let failed = server
        .expect("Reply", |e| match e {
            BridgeEvent::Reply {
                id, result: Err(_), ..
            } => Some(id),
            _ => None,
        })
        .await;
    assert_eq!(failed, pending);
    let second_conn = server
        .expect("Connected", |e| match e {
            BridgeEvent::Connected { conn, .. } => Some(conn),
            _ => None,
        })
        .await;
    assert_ne!(first_conn, second_conn);
    first.expect_eof().await;

    // Commands go to the new one; a late reply from the old one is not delivered.
    let id = server.handle.send(Command::Abort).unwrap();
    assert_eq!(second.read_json().await["id"], id);
    let _ = first
        .writer
        .write_all(format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":true}}\n").as_bytes())
        .await;
    second
        .write_raw(
            format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":true,\"result\":{{\"from\":2}}}}\n").as_bytes(),
        )
        .await;
    let result = server
        .expect("Reply", |e| match e {
            BridgeEvent::Reply { id: i, result, .. } if i == id => Some(result),
            _ => None,
        })
        .await;
    assert_eq!(result, Ok(json!({"from": 2})));
}

/// SO_PEERCRED reports the effective uid at connect time. As root, a child can switch its effective uid
/// to nobody while keeping filesystem uid 0 (setfsuid), so it still reaches the 0700 socket dir and the
/// server sees a foreign peer. Not root: the check itself is covered by the unit tests of `auth`.
#[test]
fn a_peer_of_another_uid_is_rejected() {
    if !can_pose() {
        eprintln!("not root: cannot simulate a foreign peer here (auth::check_peer_uid is unit-tested)");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let mut server = start();
    let path = server.handle.socket_path().as_os_str().to_owned();
    let token = server.token();
    let hello = hello_line(&token, PROTOCOL_VERSION);

    let peer = ForeignPeer::connect(&path, hello.as_ref());
    let event = runtime.block_on(async { tokio::time::timeout(WAIT, server.events.recv()).await });
    let status = peer.reap();
    let event = event.unwrap_or_else(|_| panic!("no event; child exit status {}", status));
    match event {
        Some(BridgeEvent::Rejected { reason }) => assert!(reason.contains("uid 65534"), "{reason}"),
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert!(!server.handle.is_connected());
}

/// A leaked token is not enough to take the bridge over: while a connection is live, a hello from
/// another process is refused and the live connection keeps carrying the commands.
#[test]
fn a_hello_from_another_process_is_refused_while_a_bridge_is_live() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let mut server = start();
    let (mut live, _) = runtime.block_on(server.connect_ok());
    let hello = hello_line(&server.token(), PROTOCOL_VERSION);

    let child = hello_from_child(&server, &hello);
    assert_eq!(child_exit(child), CHILD_REJECTED, "the child was not refused");
    let reason = runtime.block_on(server.expect("Rejected", |e| match e {
        BridgeEvent::Rejected { reason } => Some(reason),
        _ => None,
    }));
    assert!(reason.contains("holds the live bridge connection"), "{reason}");

    assert!(server.handle.is_connected());
    let id = server.handle.send(Command::IsIdle).unwrap();
    runtime.block_on(async {
        let command = live.read_json().await;
        assert_eq!(command["id"], id, "the live connection still gets the commands");
        live.write_raw(
            format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":true,\"result\":{{}}}}\n").as_bytes(),
        )
        .await;
        // `expect` takes the very next event: no Disconnected of the live connection came first.
        let got = server
            .expect("the reply", |e| match e {
                BridgeEvent::Reply {
                    id, result: Ok(_), ..
                } => Some(id),
                _ => None,
            })
            .await;
        assert_eq!(got, id);
    });
}

/// A connection pokeshell dropped (SIGUSR1) or one that broke is not live: the next hello, from any
/// process, is welcomed.
#[test]
fn a_hello_from_another_process_is_welcomed_once_the_live_connection_was_dropped() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let mut server = start();
    let (_first, first_conn) = runtime.block_on(server.connect_ok());
    server.handle.disconnect("dropped on request").unwrap();
    runtime.block_on(server.expect("Disconnected", |e| match e {
        BridgeEvent::Disconnected { conn, .. } if conn == first_conn => Some(()),
        _ => None,
    }));
    let hello = hello_from_child(&server, &hello_line(&server.token(), PROTOCOL_VERSION));
    assert_eq!(child_exit(hello), CHILD_WELCOMED, "the child was not welcomed");
    let conn = runtime.block_on(server.expect("Connected", |e| match e {
        BridgeEvent::Connected { conn, .. } => Some(conn),
        _ => None,
    }));
    assert_ne!(conn, first_conn);
}
