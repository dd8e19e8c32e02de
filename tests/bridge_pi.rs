//! The bridge extension inside real pi 1.6.0 in print and json mode, against the project's scripted
//! model server. pi runs in the tests' isolated environment (tests/support/pi.rs): its own agent
//! dir, HOME, session and work dirs, offline, no version check, no telemetry, nothing inherited but
//! an allow-list. rpc mode is in `bridge_pi_rpc.rs`.
//!
//! Every test scripts the model's answers in the order pi asks for them and checks afterwards what
//! each request was (`asked`), so an answer can never go to a request it was not written for.

mod support;

use pokeshell::pi::bridge::BridgeEvent;
use pokeshell_core::bridge::{
    Block, Command, DeliverAs, InputSource, PiEvent, Role, SendMessage, SessionReason, StopReason, TailEntry,
    ToolReply,
};
use serde_json::json;
use support::Step;
use support::bridge::*;

/// Print mode from start to exit: hello, the event order, a forwarded schedule_wakeup answered with a
/// tool_reply, a send_message steered into the same run, the settle with its tail, and `pi -p` exiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_events_wakeup_tool_and_send_message() {
    let model = scripted([
        Step::tool(
            "schedule_wakeup",
            json!({"delay_seconds": 120, "prompt": "check the build", "reason": "ci is slow"}),
        ),
        Step::text("All done."),
    ]);
    let pi = Pi::new(&model);
    let (handle, mut events, _dir) = start_server();
    let env = handle.env();
    let child = pi
        .command(Some(&env), &["--no-session", "-p", "start the build"])
        .spawn()
        .unwrap();
    let pid = child.id();

    let hello = connected(&mut events).await;
    assert_eq!(hello.pid, pid);
    assert_eq!(hello.mode.as_deref(), Some("print"));
    assert_eq!(hello.pi_version.as_deref(), Some("1.6.0"));
    assert_eq!(hello.model.as_deref(), Some("mock/mock-model"));
    assert!(hello.session_id.is_some() && !hello.reconnect);

    let (request, before) = until(&mut events, "tool_call_request", |e| match pi_event(e) {
        Some(PiEvent::ToolCallRequest(r)) => Some(r.clone()),
        _ => None,
    })
    .await;
    assert_eq!(request.tool_name, "schedule_wakeup");
    assert_eq!(
        request.args,
        json!({"delay_seconds": 120, "prompt": "check the build", "reason": "ci is slow"})
    );
    let all = names(&before);
    // The tool call streamed in: at least one `progress` line, after the turn started and before
    // the tool ran (its count depends on the stream's speed, at most one a second).
    let turn = all.iter().position(|n| n == "turn_start");
    let progress = all.iter().position(|n| n == "progress");
    let tool = all.iter().position(|n| n == "tool_execution_start");
    assert!(
        turn < progress && progress < tool && progress.is_some(),
        "{all:?}"
    );
    let order: Vec<String> = all
        .into_iter()
        .filter(|n| n != "message_end" && n != "snapshot" && n != "progress")
        .collect();
    assert_eq!(
        order,
        [
            "session_start",
            "input",
            "before_agent_start",
            "agent_start",
            "turn_start",
            "tool_execution_start"
        ],
        "{:#?}",
        names(&before)
    );
    let input = before.iter().find_map(|e| match pi_event(e) {
        Some(PiEvent::Input(i)) => Some(i.clone()),
        _ => None,
    });
    assert_eq!(input.map(|i| i.source), Some(InputSource::Interactive));

    // While pi waits for the tool, steer a hidden message in, then answer the tool.
    let steer = handle
        .send(Command::SendMessage(SendMessage {
            custom_type: "pokeshell-test".into(),
            content: "steered note from pokeshell".into(),
            display: false,
            trigger_turn: true,
            deliver_as: Some(DeliverAs::Steer),
            details: None,
        }))
        .unwrap();
    let (result, _) = until(&mut events, "send_message reply", |e| match e {
        BridgeEvent::Reply { id, result, .. } if *id == steer => Some(result.clone()),
        _ => None,
    })
    .await;
    assert_eq!(result.unwrap()["idleBefore"], json!(false));
    let answer = handle
        .send(Command::ToolReply(ToolReply {
            call_id: request.call_id.clone(),
            text: "wakeup w1 set for 120s".into(),
            is_error: false,
            details: Some(json!({"id": "w1"})),
        }))
        .unwrap();
    let (result, _) = until(&mut events, "tool_reply reply", |e| match e {
        BridgeEvent::Reply { id, result, .. } if *id == answer => Some(result.clone()),
        _ => None,
    })
    .await;
    assert!(result.is_ok(), "{result:?}");

    let (settled, between) = until(&mut events, "agent_settled", |e| match pi_event(e) {
        Some(PiEvent::AgentSettled(s)) => Some(s.clone()),
        _ => None,
    })
    .await;
    let between = names(&between);
    let end = between
        .iter()
        .position(|n| n == "tool_execution_end")
        .expect("tool_execution_end");
    let agent_end = between.iter().position(|n| n == "agent_end").expect("agent_end");
    assert!(end < agent_end, "{between:#?}");

    assert!(!settled.aborted);
    assert_eq!(settled.idle, Some(true));
    let usage = settled.context_usage.expect("context usage at settle");
    assert_eq!(usage.context_window, Some(128000));
    assert!(usage.tokens.is_some());
    let tail = &settled.tail;
    let call = tail.iter().find_map(|t| match t {
        TailEntry::Message(m) if m.role == Role::Assistant => m.content.iter().find_map(|b| match b {
            Block::ToolCall { name, arguments, .. } if name == "schedule_wakeup" => Some(arguments.clone()),
            _ => None,
        }),
        _ => None,
    });
    assert_eq!(
        call.expect("the tool call in the tail")["delay_seconds"],
        json!(120)
    );
    assert!(tail.iter().any(|t| matches!(t, TailEntry::Message(m)
        if m.role == Role::ToolResult && m.tool_name.as_deref() == Some("schedule_wakeup") && m.is_error == Some(false))));
    assert!(tail.iter().any(
        |t| matches!(t, TailEntry::CustomMessage { custom_type, display: false, .. }
        if custom_type == "pokeshell-test")
    ));
    let Some(TailEntry::Message(last)) = tail.last() else {
        panic!("tail ends without a message: {tail:#?}")
    };
    assert_eq!(
        (last.role, last.stop_reason),
        (Role::Assistant, Some(StopReason::Stop))
    );
    assert_eq!(last.content, vec![Block::Text { non_blank: true }]);

    let (shutdown, _) = until(&mut events, "session_shutdown", |e| match pi_event(e) {
        Some(PiEvent::SessionShutdown(s)) => Some(s.reason),
        _ => None,
    })
    .await;
    assert_eq!(shutdown, SessionReason::Quit);
    let (reason, _) = until(&mut events, "Disconnected", |e| match e {
        BridgeEvent::Disconnected { reason, .. } => Some(reason.clone()),
        _ => None,
    })
    .await;
    assert!(reason.contains("closed"), "{reason}");

    let output = wait_exit(child, DEADLINE);
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("All done."));
    assert_no_extension_error(&output.stderr);

    // What the model saw: both tools with their schemas; then the tool result and the steered note.
    let requests = model.model_requests();
    assert_eq!(
        asked(&model),
        ["user: start the build", "user: steered note from pokeshell"],
        "{requests:#?}"
    );
    let first = &requests[0];
    let names = first.tool_names();
    assert!(
        names.contains(&"schedule_wakeup".to_owned()) && names.contains(&"cancel_wakeup".to_owned()),
        "{names:?}"
    );
    let schedule = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "schedule_wakeup")
        .unwrap();
    let params = &schedule["function"]["parameters"];
    assert_eq!(params["required"], json!(["delay_seconds", "prompt"]));
    assert_eq!(params["properties"]["delay_seconds"]["type"], "number");
    let last = requests.last().unwrap();
    assert!(request_text(last).contains("wakeup w1 set for 120s"));
    assert!(request_text(last).contains("steered note from pokeshell"));
}

/// Without POKESHELL_SOCKET/POKESHELL_TOKEN the extension registers nothing and prints nothing.
#[test]
fn without_the_environment_the_bridge_does_nothing() {
    let model = scripted([Step::text("Plain answer.")]);
    let pi = Pi::new(&model);
    let output = wait_exit(
        pi.command(None, &["--no-session", "-p", "hello"])
            .spawn()
            .unwrap(),
        DEADLINE,
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "Plain answer.");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    assert_eq!(asked(&model), ["user: hello"]);
    let names = requests[0].tool_names();
    assert!(!names.is_empty(), "the built-in tools should be there");
    assert!(!names.iter().any(|n| n.contains("wakeup")), "{names:?}");
}

/// With a socket nobody listens on, a forwarded tool says so to the model, and `pi -p` still exits
/// (the socket and the reconnect timer are unref'ed).
#[test]
fn a_forwarded_tool_without_pokeshell_reports_not_connected_and_pi_exits() {
    let model = scripted([Step::tool("cancel_wakeup", json!({})), Step::text("Understood.")]);
    let pi = Pi::new(&model);
    let dir = tempfile::tempdir().unwrap();
    let env = [
        (
            "POKESHELL_SOCKET",
            dir.path().join("nobody.sock").into_os_string(),
        ),
        ("POKESHELL_TOKEN", "t".into()),
    ];
    let output = wait_exit(
        pi.command(Some(&env), &["--no-session", "-p", "cancel"])
            .spawn()
            .unwrap(),
        DEADLINE,
    );
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("Understood."));
    assert_no_extension_error(&output.stderr);
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert_eq!(asked(&model), ["user: cancel", "tool result"]);
    assert!(request_text(&requests[1]).contains("pokeshell is not connected, so cancel_wakeup did nothing."));
}
