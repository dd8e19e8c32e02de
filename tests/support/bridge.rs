//! The bridge inside real pi against the scripted model: pi with the bridge loaded, a bridge server
//! to connect to, and bounded waits for the events it reports. Used by `bridge_pi` (print and json
//! mode) and `bridge_pi_rpc` (rpc mode).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command as Process, Output, Stdio};
use std::time::Duration;

use pokeshell::demo::model::{RecordedRequest, RequestKind};
use pokeshell::pi::bridge::asset::install_bridge_in;
use pokeshell::pi::bridge::server::ServerOptions;
use pokeshell::pi::bridge::{BridgeEvent, BridgeHandle, BridgeServer, Hello};
use pokeshell_core::bridge::{Command, PiEvent};
use serde_json::{Value, json};
use tokio::sync::mpsc::Receiver;

use super::pi::PiEnv;
use super::{ModelServer, Step, model_server};

pub const DEADLINE: Duration = Duration::from_secs(60);

// ------------------------------------------------------------------------------------------ the model

/// The scripted model answering `steps` in order. A request beyond the script gets an error pi does
/// not retry, so an unexpected request shows as a failed run, not as a quietly reused answer.
pub fn scripted(steps: impl IntoIterator<Item = Step>) -> ModelServer {
    let server = model_server();
    server.push_all(steps);
    server.set_default(Step::error(400, "the test scripted no answer for this request"));
    server
}

pub fn has_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// Every text the request carries, system prompt included.
pub fn request_text(request: &RecordedRequest) -> String {
    request.body["messages"].to_string()
}

pub fn is_handoff_request(request: &RecordedRequest) -> bool {
    !has_tools(&request.body) && request_text(request).contains("You write handoff documents")
}

/// What each model request was, in order: `user: TEXT` when a prompt ends it, `tool result` after a
/// tool ran, `handoff` for the bridge's handoff call, `summary` for pi's own compaction summary.
pub fn asked(server: &ModelServer) -> Vec<String> {
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
pub struct Pi {
    pub env: PiEnv,
    bridge: PathBuf,
    _bridge_dir: tempfile::TempDir,
}

impl Pi {
    pub fn new(server: &ModelServer) -> Pi {
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
    pub fn command(&self, bridge_env: Option<&[(&str, std::ffi::OsString)]>, args: &[&str]) -> Process {
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
pub fn wait_exit(child: Child, deadline: Duration) -> Output {
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

pub fn start_server() -> (BridgeHandle, Receiver<BridgeEvent>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let options = ServerOptions {
        parent_dir: Some(dir.path().to_owned()),
        ..ServerOptions::default()
    };
    let (handle, events) = BridgeServer::start_with(options).unwrap();
    (handle, events, dir)
}

/// Skips events until `pick` accepts one; the skipped ones are returned for order checks.
pub async fn until<T>(
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

pub fn pi_event(e: &BridgeEvent) -> Option<&PiEvent> {
    match e {
        BridgeEvent::Event { event, .. } => Some(event),
        _ => None,
    }
}

pub fn name(e: &BridgeEvent) -> String {
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

pub fn names(events: &[BridgeEvent]) -> Vec<String> {
    events.iter().map(name).collect()
}

pub fn assert_no_extension_error(stderr: &[u8]) {
    let stderr = String::from_utf8_lossy(stderr);
    assert!(
        !stderr.contains("Extension") && !stderr.contains("    at "),
        "pi printed an extension error:\n{stderr}"
    );
}

pub async fn connected(events: &mut Receiver<BridgeEvent>) -> Hello {
    let (hello, skipped) = until(events, "Connected", |e| match e {
        BridgeEvent::Connected { hello, .. } => Some(hello.clone()),
        _ => None,
    })
    .await;
    assert!(skipped.is_empty(), "events before Connected: {skipped:?}");
    hello
}

// ------------------------------------------------------------------------------------------ rpc mode

pub struct Rpc {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
}

impl Rpc {
    pub fn start(pi: &Pi, env: &[(&str, std::ffi::OsString)]) -> Rpc {
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

    pub fn send(&mut self, command: Value) {
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

pub async fn prompt_and_settle(rpc: &mut Rpc, events: &mut Receiver<BridgeEvent>, text: &str) {
    rpc.send(json!({"type": "prompt", "message": text}));
    until(events, "agent_settled", |e| {
        matches!(pi_event(e), Some(PiEvent::AgentSettled(_))).then_some(())
    })
    .await;
}

/// A command and the reply it gets, within the deadline.
pub async fn call(
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
