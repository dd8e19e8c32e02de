//! The bridge's heartbeat inside real pi 1.6.0 (issue 10): while a tool runs, heartbeats name it and say
//! pi is busy, and every line the bridge sends is numbered without a gap.

mod support;

use std::time::Duration;

use pokeshell::pi::bridge::asset::install_bridge_in;
use pokeshell::pi::bridge::server::ServerOptions;
use pokeshell::pi::bridge::{BridgeEvent, BridgeServer};
use pokeshell_core::bridge::PiEvent;
use support::pi::PiEnv;
use support::{Step, model_server};

const DEADLINE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_name_the_running_tool_and_the_numbering_has_no_gap() {
    let model = model_server();
    model.push(Step::bash("sleep 2"));
    model.push(Step::text("slept"));
    let env = PiEnv::new(&model.base_url());
    let dirs = tempfile::tempdir().unwrap();
    let bridge = install_bridge_in(&dirs.path().join("rt")).unwrap();
    let options = ServerOptions {
        parent_dir: Some(dirs.path().to_owned()),
        ..ServerOptions::default()
    };
    let (handle, mut events) = BridgeServer::start_with(options).unwrap();
    let mut pi = env.command(&["-e", bridge.to_str().unwrap(), "-p", "take a nap"]);
    pi.envs(handle.env()).env("POKESHELL_HEARTBEAT_MS", "200");
    let mut child = pi.spawn().expect("spawn pi");

    let mut running_call = None;
    let mut beats_while_running = Vec::new();
    let mut numbers = Vec::new();
    let outcome = tokio::time::timeout(DEADLINE, async {
        while let Some(event) = events.recv().await {
            match event {
                BridgeEvent::Event { seq, event, .. } => {
                    numbers.push(seq);
                    match event {
                        PiEvent::ToolExecutionStart(t) => running_call = Some(t.tool_call_id),
                        PiEvent::ToolExecutionEnd(_) => running_call = None,
                        PiEvent::AgentSettled(_) => return,
                        _ => {}
                    }
                }
                BridgeEvent::Heartbeat {
                    heartbeat, missed, ..
                } => {
                    numbers.push(heartbeat.seq);
                    assert_eq!(missed, 0, "a line went missing before {heartbeat:?}");
                    if let Some(call) = &running_call {
                        beats_while_running.push((call.clone(), heartbeat));
                    }
                }
                _ => {}
            }
        }
    })
    .await;
    let _ = child.kill();
    let _ = child.wait();
    assert!(outcome.is_ok(), "pi did not settle within {DEADLINE:?}");

    assert!(
        beats_while_running.len() >= 3,
        "a 2 s tool and a 200 ms heartbeat: {beats_while_running:?}"
    );
    for (call, beat) in &beats_while_running {
        assert_eq!(beat.running_tools, std::slice::from_ref(call), "{beat:?}");
        assert_eq!(beat.idle, Some(false), "{beat:?}");
    }
    assert!(
        numbers.windows(2).all(|w| w[0] < w[1]),
        "the numbers rise: {numbers:?}"
    );
}
