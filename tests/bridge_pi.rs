//! The bridge extension inside real pi 1.6.0, against the project's scripted model server. pi runs
//! in the tests' isolated environment (tests/support/pi.rs): its own agent dir, HOME, session and
//! work dirs, offline, no version check, no telemetry, nothing inherited but an allow-list.
//!
//! Every test scripts the model's answers in the order pi asks for them and checks afterwards what
//! each request was ([`asked`]), so an answer can never go to a request it was not written for.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command as Process, Output, Stdio};
use std::time::Duration;

use pokeshell::bridge::asset::install_bridge_in;
use pokeshell::bridge::protocol::{
    Block, Command, CompactReason, CompactRequest, DeliverAs, HandoffOutcome, InputSource, NotifyLevel,
    PiEvent, Role, SendMessage, SessionReason, StopReason, TailEntry, ToolReply,
};
use pokeshell::bridge::server::ServerOptions;
use pokeshell::bridge::{BridgeEvent, BridgeHandle, BridgeServer, Hello};
use pokeshell::demo::model::{RecordedRequest, RequestKind};
use serde_json::{Value, json};
use support::pi::PiEnv;
use support::{ModelServer, Step, model_server};
use tokio::sync::mpsc::Receiver;

const DEADLINE: Duration = Duration::from_secs(60);

// ------------------------------------------------------------------------------------------ the model

/// The scripted model answering `steps` in order. A request beyond the script gets an error pi does
/// not retry, so an unexpected request shows as a failed run, not as a quietly reused answer.
fn scripted(steps: impl IntoIterator<Item = Step>) -> ModelServer {
    let server = model_server();
    server.push_all(steps);
    server.set_default(Step::error(400, "the test scripted no answer for this request"));
    server
}

fn has_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// Every text the request carries, system prompt included.
fn request_text(request: &RecordedRequest) -> String {
    request.body["messages"].to_string()
}

fn is_handoff_request(request: &RecordedRequest) -> bool {
    !has_tools(&request.body) && request_text(request).contains("You write handoff documents")
}

/// What each model request was, in order: `user: TEXT` when a prompt ends it, `tool result` after a
/// tool ran, `handoff` for the bridge's handoff call, `summary` for pi's own compaction summary.
fn asked(server: &ModelServer) -> Vec<String> {
    server
        .model_requests()
        .iter()
        .map(|r| {
            if r.kind == RequestKind::Summary {
                return "summary".to_owned();
            }
            if is_handoff_request(r) {
                return "handoff".to_owned();
            }
            let last = r.messages().last().cloned().unwrap_or_default();
            match last["role"].as_str() {
                Some("user") => format!("user: {}", r.last_user_text().unwrap_or_default()),
                Some("tool") => "tool result".to_owned(),
                other => format!("{other:?}"),
            }
        })
        .collect()
}

// ------------------------------------------------------------------------------------------ pi

/// The tests' pi environment with the bridge installed next to it. `keepRecentTokens: 1` leaves
/// something for a compaction to summarize after only a couple of short prompts.
struct Pi {
    env: PiEnv,
    bridge: PathBuf,
    _bridge_dir: tempfile::TempDir,
}

impl Pi {
    fn new(server: &ModelServer) -> Pi {
        let env = PiEnv::builder(&server.base_url())
            .settings(json!({"compaction": {"keepRecentTokens": 1}}))
            .build();
        let bridge_dir = tempfile::tempdir().unwrap();
        let bridge = install_bridge_in(&bridge_dir.path().join("rt")).unwrap();
        Pi {
            env,
            bridge,
            _bridge_dir: bridge_dir,
        }
    }

    /// pi with the bridge loaded; `bridge_env` (the socket and token) connects it to pokeshell.
    fn command(&self, bridge_env: Option<&[(&str, std::ffi::OsString)]>, args: &[&str]) -> Process {
        let bridge = self.bridge.to_string_lossy().into_owned();
        let mut all = vec!["-e", bridge.as_str()];
        all.extend_from_slice(args);
        let mut cmd = self.env.command(&all);
        for (k, v) in bridge_env.unwrap_or(&[]) {
            cmd.env(k, v);
        }
        cmd
    }
}

/// Waits for the child's exit within the deadline, killing it (and failing) otherwise.
fn wait_exit(child: Child, deadline: Duration) -> Output {
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(deadline) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // SAFETY: our own child, still running.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("pi did not exit within {deadline:?}");
        }
    }
}

fn start_server() -> (BridgeHandle, Receiver<BridgeEvent>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let options = ServerOptions {
        parent_dir: Some(dir.path().to_owned()),
        ..ServerOptions::default()
    };
    let (handle, events) = BridgeServer::start_with(options).unwrap();
    (handle, events, dir)
}

/// Skips events until `pick` accepts one; the skipped ones are returned for order checks.
async fn until<T>(
    events: &mut Receiver<BridgeEvent>,
    what: &str,
    mut pick: impl FnMut(&BridgeEvent) -> Option<T>,
) -> (T, Vec<BridgeEvent>) {
    let mut skipped = Vec::new();
    loop {
        let event = tokio::time::timeout(DEADLINE, events.recv())
            .await
            .unwrap_or_else(|_| panic!("no {what} in time; saw {:#?}", names(&skipped)))
            .expect("channel closed");
        if let Some(found) = pick(&event) {
            return (found, skipped);
        }
        skipped.push(event);
    }
}

fn pi_event(e: &BridgeEvent) -> Option<&PiEvent> {
    match e {
        BridgeEvent::Event { event, .. } => Some(event),
        _ => None,
    }
}

fn name(e: &BridgeEvent) -> String {
    match e {
        BridgeEvent::Event { event, .. } => serde_json::to_value(event).unwrap()["type"]
            .as_str()
            .unwrap_or("?")
            .to_owned(),
        other => format!("{other:?}")
            .split([' ', '{', '('])
            .next()
            .unwrap_or("?")
            .to_owned(),
    }
}

fn names(events: &[BridgeEvent]) -> Vec<String> {
    events.iter().map(name).collect()
}

fn assert_no_extension_error(stderr: &[u8]) {
    let stderr = String::from_utf8_lossy(stderr);
    assert!(
        !stderr.contains("Extension") && !stderr.contains("    at "),
        "pi printed an extension error:\n{stderr}"
    );
}

async fn connected(events: &mut Receiver<BridgeEvent>) -> Hello {
    let (hello, skipped) = until(events, "Connected", |e| match e {
        BridgeEvent::Connected { hello, .. } => Some(hello.clone()),
        _ => None,
    })
    .await;
    assert!(skipped.is_empty(), "events before Connected: {skipped:?}");
    hello
}

// ------------------------------------------------------------------------------------------ tests

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
    let order: Vec<String> = names(&before)
        .into_iter()
        .filter(|n| n != "message_end" && n != "snapshot")
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

// ------------------------------------------------------------------------------------------ rpc mode

struct Rpc {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
}

impl Rpc {
    fn start(pi: &Pi, env: &[(&str, std::ffi::OsString)]) -> Rpc {
        let mut cmd = pi.command(Some(env), &["--mode", "rpc"]);
        cmd.stdin(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        // pi honours stdout backpressure: keep reading it.
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        Rpc {
            child: Some(child),
            stdin: Some(stdin),
        }
    }

    fn send(&mut self, command: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        // Closing stdin is pi's orderly shutdown in rpc mode.
        drop(self.stdin.take());
        if let Some(child) = self.child.take() {
            let output = wait_exit(child, DEADLINE);
            assert!(output.status.success() || std::thread::panicking(), "{output:?}");
        }
    }
}

async fn prompt_and_settle(rpc: &mut Rpc, events: &mut Receiver<BridgeEvent>, text: &str) {
    rpc.send(json!({"type": "prompt", "message": text}));
    until(events, "agent_settled", |e| {
        matches!(pi_event(e), Some(PiEvent::AgentSettled(_))).then_some(())
    })
    .await;
}

const HANDOFF_DOC: &str = "## Goal\nFinish the parser.\n\n## Next Steps\n1. Run the parser tests.";

/// A compaction pokeshell asks for with the handoff flag is
/// written by the active model as a handoff document, framed as working memory, saved next to the
/// session file, and reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_compaction_writes_and_saves_the_document() {
    let answer = || Step::text("Answer with some words about the parser work.");
    let model = scripted([answer(), answer(), Step::text(HANDOFF_DOC), answer()]);
    let pi = Pi::new(&model);
    let (handle, mut events, _dir) = start_server();
    let mut rpc = Rpc::start(&pi, &handle.env());
    let hello = connected(&mut events).await;
    assert_eq!(hello.mode.as_deref(), Some("rpc"));
    prompt_and_settle(&mut rpc, &mut events, "first: write the parser").await;
    prompt_and_settle(&mut rpc, &mut events, "second: test the parser").await;

    let id = handle
        .send(Command::Compact(CompactRequest {
            custom_instructions: Some("the parser edge cases".into()),
            handoff: true,
            save: true,
        }))
        .unwrap();
    let (before, _) = until(&mut events, "session_before_compact", |e| match pi_event(e) {
        Some(PiEvent::SessionBeforeCompact(b)) => Some(b.clone()),
        _ => None,
    })
    .await;
    assert_eq!((before.reason, before.handoff), (CompactReason::Manual, true));
    let (report, _) = until(&mut events, "handoff", |e| match pi_event(e) {
        Some(PiEvent::Handoff(h)) => Some(h.clone()),
        _ => None,
    })
    .await;
    assert_eq!(report.outcome, HandoffOutcome::Written, "{report:?}");
    let path = PathBuf::from(report.path.clone().expect("saved path"));
    let (compact, _) = until(&mut events, "session_compact", |e| match pi_event(e) {
        Some(PiEvent::SessionCompact(c)) => Some(c.clone()),
        _ => None,
    })
    .await;
    assert!(compact.from_extension);
    let (result, _) = until(&mut events, "compact reply", |e| match e {
        BridgeEvent::Reply { id: i, result, .. } if *i == id => Some(result.clone()),
        _ => None,
    })
    .await;
    let result = result.expect("compaction succeeded");
    assert_eq!(result["handoff"]["outcome"], "written");

    // Saved next to the session file, named handoff-<timestamp>.md.
    let session_dir = Path::new(hello.session_file.as_deref().expect("a session file"))
        .parent()
        .unwrap()
        .to_owned();
    assert_eq!(path.parent().unwrap(), session_dir);
    let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        file_name.starts_with("handoff-") && file_name.ends_with(".md"),
        "{file_name}"
    );
    assert!(std::fs::read_to_string(&path).unwrap().starts_with(HANDOFF_DOC));

    // The model was asked with our instructions, the conversation and the focus line.
    let handoff = model
        .model_requests()
        .into_iter()
        .find(is_handoff_request)
        .expect("a handoff request");
    let handoff = request_text(&handoff);
    assert!(
        handoff.contains("<conversation>") && handoff.contains("first: write the parser"),
        "{handoff}"
    );
    assert!(handoff.contains("Additional focus: the parser edge cases"));

    // The next request carries the framed document as the summary.
    prompt_and_settle(&mut rpc, &mut events, "third: go on").await;
    assert_eq!(
        asked(&model),
        [
            "user: first: write the parser",
            "user: second: test the parser",
            "handoff",
            "user: third: go on"
        ]
    );
    let last = request_text(model.model_requests().last().unwrap());
    assert!(
        last.contains("<handoff>") && last.contains("Finish the parser."),
        "{last}"
    );
    assert!(last.contains("own working memory"));
}

/// When the model call for the document fails, the bridge returns nothing and pi writes its
/// default summary; the fallback and its reason are reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_falls_back_to_the_default_summary_when_the_model_fails() {
    let model = scripted([
        Step::text("Some answer."),
        Step::text("Some answer."),
        Step::error(400, "mock: no handoff today"),
    ]);
    // pi's own compaction: the history, then the prefix of the turn it splits.
    model.push_summary(Step::text("Default summary."));
    model.push_summary(Step::text("Default summary of the turn's start."));
    let pi = Pi::new(&model);
    let (handle, mut events, _dir) = start_server();
    let mut rpc = Rpc::start(&pi, &handle.env());
    connected(&mut events).await;
    prompt_and_settle(&mut rpc, &mut events, "one").await;
    prompt_and_settle(&mut rpc, &mut events, "two").await;

    let id = handle
        .send(Command::Compact(CompactRequest {
            custom_instructions: None,
            handoff: true,
            save: true,
        }))
        .unwrap();
    let (report, _) = until(&mut events, "handoff", |e| match pi_event(e) {
        Some(PiEvent::Handoff(h)) => Some(h.clone()),
        _ => None,
    })
    .await;
    assert_eq!(report.outcome, HandoffOutcome::Fallback);
    assert!(
        report
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("no handoff today"),
        "{report:?}"
    );
    assert_eq!(report.path, None);
    let (compact, _) = until(&mut events, "session_compact", |e| match pi_event(e) {
        Some(PiEvent::SessionCompact(c)) => Some(c.clone()),
        _ => None,
    })
    .await;
    assert!(!compact.from_extension);
    let (result, _) = until(&mut events, "compact reply", |e| match e {
        BridgeEvent::Reply { id: i, result, .. } if *i == id => Some(result.clone()),
        _ => None,
    })
    .await;
    assert_eq!(
        result.expect("the default compaction succeeded")["handoff"]["outcome"],
        "fallback"
    );
    assert_eq!(
        asked(&model),
        ["user: one", "user: two", "handoff", "summary", "summary"]
    );
    let saved: Vec<_> = std::fs::read_dir(pi.env.session_dir())
        .unwrap()
        .flatten()
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with("handoff-"))
        .collect();
    assert!(
        saved.is_empty(),
        "no document should be saved on fallback: {saved:?}"
    );
}

/// A command and the reply it gets, within the deadline.
async fn call(
    handle: &BridgeHandle,
    events: &mut Receiver<BridgeEvent>,
    command: Command,
) -> Result<Value, String> {
    let id = handle.send(command).unwrap();
    until(events, "reply", |e| match e {
        BridgeEvent::Reply { id: i, result, .. } if *i == id => Some(result.clone()),
        _ => None,
    })
    .await
    .0
}

/// pi replaces the extension runtime on /new and on a resume: the old connection closes, a new instance
/// connects and announces the session, and session_start carries pokeshell's own persisted entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_replacement_reconnects_and_restores_own_entries() {
    let model = scripted([Step::text("ok")]);
    let pi = Pi::new(&model);
    let (handle, mut events, _dir) = start_server();
    let mut rpc = Rpc::start(&pi, &handle.env());
    let first = connected(&mut events).await;
    prompt_and_settle(&mut rpc, &mut events, "make the session file exist").await;

    let wakeup = json!({"id": "w1", "fireAtMs": 1234});
    let own = Command::AppendEntry {
        custom_type: "pokeshell-wakeup".into(),
        data: wakeup.clone(),
    };
    call(&handle, &mut events, own).await.unwrap();
    let other = Command::AppendEntry {
        custom_type: "other-extension".into(),
        data: json!(1),
    };
    call(&handle, &mut events, other).await.unwrap();
    let listed = Command::GetEntries {
        custom_type_prefix: Some("pokeshell".into()),
        scope: pokeshell::bridge::protocol::EntryScope::Branch,
        limit: None,
    };
    let listed = call(&handle, &mut events, listed).await.unwrap();
    assert_eq!(listed["entries"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["entries"][0]["data"], wakeup);

    rpc.send(json!({"type": "new_session"}));
    let (reason, _) = until(&mut events, "session_shutdown", |e| match pi_event(e) {
        Some(PiEvent::SessionShutdown(s)) => Some(s.reason),
        _ => None,
    })
    .await;
    assert_eq!(reason, SessionReason::New);
    let (second, skipped) = until(&mut events, "Connected", |e| match e {
        BridgeEvent::Connected { hello, .. } => Some(hello.clone()),
        _ => None,
    })
    .await;
    assert!(
        skipped
            .iter()
            .any(|e| matches!(e, BridgeEvent::Disconnected { .. })),
        "{skipped:?}"
    );
    assert_ne!(first.instance, second.instance);
    assert_ne!(first.session_id, second.session_id);
    let (start, _) = until(&mut events, "session_start", |e| match pi_event(e) {
        Some(PiEvent::SessionStart(s)) => Some(s.clone()),
        _ => None,
    })
    .await;
    assert_eq!(start.reason, SessionReason::New);
    assert!(start.custom_entries.is_empty(), "{:?}", start.custom_entries);
    let idle = call(&handle, &mut events, Command::IsIdle).await.unwrap();
    assert_eq!(idle["idle"], json!(true));
    let usage = call(&handle, &mut events, Command::ContextUsage).await.unwrap();
    assert_eq!(usage["usage"]["contextWindow"], json!(128000), "{usage}");
    assert!(call(&handle, &mut events, Command::Abort).await.is_ok());
    let notify = Command::Notify {
        message: "hello from pokeshell".into(),
        level: NotifyLevel::Info,
    };
    assert_eq!(
        call(&handle, &mut events, notify).await.unwrap(),
        json!({"shown": true})
    );
    // Bad commands get error replies; the bridge keeps working.
    let stray = Command::ToolReply(ToolReply {
        call_id: "nope".into(),
        text: "x".into(),
        is_error: false,
        details: None,
    });
    let error = call(&handle, &mut events, stray).await.unwrap_err();
    assert!(error.contains("no tool call nope"), "{error}");
    let empty = Command::AppendEntry {
        custom_type: String::new(),
        data: Value::Null,
    };
    assert!(
        call(&handle, &mut events, empty)
            .await
            .unwrap_err()
            .contains("customType")
    );

    let first_file = first.session_file.clone().expect("a session file");
    rpc.send(json!({"type": "switch_session", "sessionPath": first_file}));
    let (start, _) = until(
        &mut events,
        "session_start after the resume",
        |e| match pi_event(e) {
            Some(PiEvent::SessionStart(s)) => Some(s.clone()),
            _ => None,
        },
    )
    .await;
    assert_eq!(start.reason, SessionReason::Resume);
    assert_eq!(start.session_id, first.session_id);
    let restored: Vec<_> = start
        .custom_entries
        .iter()
        .map(|e| (e.custom_type.as_str(), e.data.clone()))
        .collect();
    assert_eq!(restored, vec![("pokeshell-wakeup", wakeup)]);
}

/// The file lists in a handoff summary are cumulative. The second handoff no longer sees the
/// first step's write in the messages it summarizes; the file still appears because the bridge merges
/// the previous compaction's lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_file_lists_accumulate_across_compactions() {
    let handoff = || Step::text(HANDOFF_DOC);
    let model = scripted([
        Step::tool("write", json!({"path": "notes.txt", "content": "first notes\n"})),
        Step::text("Step finished."),
        Step::tool("read", json!({"path": "spec.md"})),
        Step::text("Step finished."),
        Step::text("ok"),
        handoff(),
        Step::tool("write", json!({"path": "other.txt", "content": "more\n"})),
        Step::text("Step finished."),
        Step::text("ok"),
        handoff(),
        Step::text("ok"),
    ]);
    let pi = Pi::new(&model);
    std::fs::write(pi.env.work_dir().join("spec.md"), "# spec\n").unwrap();
    let (handle, mut events, _dir) = start_server();
    let mut rpc = Rpc::start(&pi, &handle.env());
    connected(&mut events).await;
    prompt_and_settle(&mut rpc, &mut events, "step-one").await;
    prompt_and_settle(&mut rpc, &mut events, "step-two").await;
    prompt_and_settle(&mut rpc, &mut events, "filler").await;
    let handoff = || {
        Command::Compact(CompactRequest {
            custom_instructions: None,
            handoff: true,
            save: false,
        })
    };
    let first = call(&handle, &mut events, handoff())
        .await
        .expect("first handoff");
    assert_eq!(first["handoff"]["outcome"], "written", "{first}");
    assert_eq!(first["handoff"]["path"], Value::Null);

    prompt_and_settle(&mut rpc, &mut events, "step-three").await;
    prompt_and_settle(&mut rpc, &mut events, "filler again").await;
    let second = call(&handle, &mut events, handoff())
        .await
        .expect("second handoff");
    assert_eq!(second["handoff"]["outcome"], "written", "{second}");
    assert_eq!(second["handoff"]["modifiedFiles"], json!(2), "{second}");

    prompt_and_settle(&mut rpc, &mut events, "after").await;
    assert_eq!(
        asked(&model),
        [
            "user: step-one",
            "tool result",
            "user: step-two",
            "tool result",
            "user: filler",
            "handoff",
            "user: step-three",
            "tool result",
            "user: filler again",
            "handoff",
            "user: after"
        ]
    );
    let text = request_text(model.model_requests().last().unwrap()).replace("\\n", "\n");
    let modified = text
        .split("<modified-files>")
        .nth(1)
        .and_then(|s| s.split("</modified-files>").next());
    let modified = modified.expect("a modified-files block");
    assert!(
        modified.contains("notes.txt") && modified.contains("other.txt"),
        "{modified}"
    );
    let read = text
        .split("<read-files>")
        .nth(1)
        .and_then(|s| s.split("</read-files>").next());
    assert!(read.expect("a read-files block").contains("spec.md"), "{text}");
}
