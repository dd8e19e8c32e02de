//! Relaunching pi through the real loop: a pi that froze mid-run is ended (SIGTERM, SIGKILL after the
//! grace) and started again on its session with the user's options, the loop goes on with the new
//! child, and the new pi is asked to carry on; a pi that dies mid-run is started again at once; a
//! pokeshell that is being ended never relaunches.

use pokeshell::server::event_loop::{Signal, WorldEvent};
use pokeshell::term::pty::{ChildExit, PtyEvent};
use serde_json::json;

use super::world::{World, event};

const FILE: &str = "/s/one.jsonl";

fn hello(w: &World, instance: &str) {
    w.wire(
        json!({"type": "hello", "protocol": 1, "token": "t", "piVersion": "1.6.0", "pid": 9,
        "instance": instance, "reconnect": false, "dropped": 0, "sessionId": "s1", "sessionFile": FILE,
        "sessionName": null, "model": "mock/mock-model", "mode": "tui", "cwd": "/w"}),
    );
}

fn session_start(w: &World, seq: u64) {
    w.wire(event(
        seq,
        json!({"type": "session_start", "reason": "startup", "sessionId": "s1", "sessionFile": FILE,
        "customEntries": []}),
    ));
}

const KILLED: ChildExit = ChildExit {
    code: 137,
    signal: Some(libc::SIGKILL),
};

fn relaunch() -> Vec<String> {
    ["-e", "/b/bridge.ts", "--session", FILE]
        .map(String::from)
        .to_vec()
}

#[tokio::test(start_paused = true)]
async fn a_frozen_pi_is_ended_relaunched_on_its_session_and_resumed() {
    let mut w = World::new();
    hello(&w, "a");
    session_start(&w, 1);
    w.wire(event(2, json!({"type": "agent_start"})));
    w.run_secs(89).await;
    assert!(w.lp.child.signals.is_empty(), "silent for less than 90 s");
    w.run_secs(2).await;
    assert_eq!(w.lp.child.signals, vec![libc::SIGTERM], "frozen: asked to end");
    w.run_for_ms(2_900).await;
    assert_eq!(
        w.lp.child.signals,
        vec![libc::SIGTERM, libc::SIGKILL],
        "killed after the grace"
    );
    assert!(w.lp.child.respawns.is_empty(), "the old child has not exited yet");
    w.send(WorldEvent::Pty(PtyEvent::Exited(KILLED)));
    w.settle().await;
    assert_eq!(
        w.lp.child.respawns,
        vec![relaunch()],
        "the loop goes on with a new pi"
    );
    assert!(
        w.screen_text().contains("restarted: pi stopped"),
        "{}",
        w.screen_text()
    );
    hello(&w, "b");
    session_start(&w, 1);
    w.settle().await;
    let sent = w.lp.bridge.messages();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].1.content.contains("restart pi"), "{}", sent[0].1.content);
    assert_eq!(w.records("RST-F1", "action").len(), 1, "{:?}", w.ledger());
    assert_eq!(w.records("RST-R1", "action").len(), 1, "{:?}", w.ledger());
    w.run_secs(60).await;
    assert_eq!(
        w.lp.child.signals.len(),
        2,
        "the new pi is not killed by the old grace"
    );
}

/// A killed pi that is never reaped (a tracer holds it) does not hold the relaunch: after the bound,
/// it is left behind, the ledger and the side pane say so, and the new pi starts; the healthy twin,
/// reaped just before the bound, is waited for as before.
#[tokio::test(start_paused = true)]
async fn a_killed_pi_that_is_never_reaped_is_left_behind_and_a_new_pi_starts() {
    for reaped_in_time in [true, false] {
        let mut w = World::new();
        hello(&w, "a");
        session_start(&w, 1);
        w.wire(event(2, json!({"type": "agent_start"})));
        // SIGTERM between 89 s and 91 s, SIGKILL 3 s later: by 93.9 s.
        w.run_secs(91).await;
        w.run_for_ms(2_900).await;
        assert_eq!(w.lp.child.signals, vec![libc::SIGTERM, libc::SIGKILL]);
        w.run_for_ms(3_000).await;
        assert!(w.lp.child.respawns.is_empty(), "still within the bound");
        if reaped_in_time {
            w.send(WorldEvent::Pty(PtyEvent::Exited(KILLED)));
            w.settle().await;
            w.run_secs(10).await;
            assert_eq!(w.lp.child.respawns, vec![relaunch()]);
            assert_eq!(w.lp.child.abandoned, 0, "a pi reaped in time is not given up on");
            assert!(w.records("RST-K1", "action").is_empty());
            continue;
        }
        w.run_for_ms(3_000).await;
        assert_eq!(w.lp.child.abandoned, 1, "given up on after the bound");
        assert_eq!(w.lp.child.respawns, vec![relaunch()], "and the new pi starts");
        let said = w.records("RST-K1", "action");
        assert_eq!(said.len(), 1, "{:?}", w.ledger());
        assert!(said[0].contains("not reaped"), "{said:?}");
        assert!(w.screen_text().contains("not reaped"), "{}", w.screen_text());
        w.run_secs(60).await;
        assert_eq!(w.lp.child.signals.len(), 2, "the new pi is left alone");
        assert_eq!(w.lp.child.respawns.len(), 1);
    }
}

#[tokio::test(start_paused = true)]
async fn a_pi_killed_mid_run_is_relaunched_at_once() {
    let mut w = World::new();
    hello(&w, "a");
    w.wire(event(1, json!({"type": "agent_start"})));
    w.settle().await;
    w.send(WorldEvent::Pty(PtyEvent::Exited(KILLED)));
    w.settle().await;
    assert_eq!(w.lp.child.respawns, vec![relaunch()]);
    assert!(w.lp.child.signals.is_empty(), "it was dead already");
}

#[tokio::test(start_paused = true)]
async fn an_idle_pi_asked_to_end_or_a_shutdown_ends_pokeshell_as_before() {
    let mut w = World::new();
    hello(&w, "a");
    w.settle().await;
    let asked = ChildExit {
        code: 143,
        signal: Some(libc::SIGTERM),
    };
    w.send(WorldEvent::Pty(PtyEvent::Exited(asked)));
    assert_eq!(w.run_for(std::time::Duration::from_secs(5)).await, Some(asked));
    assert!(w.lp.child.respawns.is_empty());

    let mut w = World::new();
    hello(&w, "a");
    w.wire(event(1, json!({"type": "agent_start"})));
    w.send(WorldEvent::Signal(Signal::Term));
    w.settle().await;
    let ended = ChildExit {
        code: 143,
        signal: Some(libc::SIGTERM),
    };
    w.send(WorldEvent::Pty(PtyEvent::Exited(ended)));
    assert_eq!(w.run_for(std::time::Duration::from_secs(5)).await, Some(ended));
    assert!(w.lp.child.respawns.is_empty(), "pokeshell was asked to end");
}

/// RST-D1: a pi killed outright (the out-of-memory killer's SIGKILL) while idle comes back on its
/// session; pokeshell does not end with it.
#[tokio::test(start_paused = true)]
async fn an_idle_pi_killed_outright_is_relaunched() {
    let mut w = World::new();
    hello(&w, "a");
    w.settle().await;
    w.send(WorldEvent::Pty(PtyEvent::Exited(KILLED)));
    w.settle().await;
    assert_eq!(w.lp.child.respawns, vec![relaunch()]);
}

#[tokio::test(start_paused = true)]
async fn heartbeats_keep_a_busy_pi_alive() {
    let mut w = World::new();
    hello(&w, "a");
    w.wire(event(1, json!({"type": "agent_start"})));
    // A long tool keeps the run busy without model progress, so only the freeze watch is at play.
    w.wire(event(
        2,
        json!({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash",
               "args": {"command": "make"}}),
    ));
    for seq in 0..60 {
        w.wire(json!({"type": "heartbeat", "seq": seq, "at": 0}));
        w.run_secs(5).await;
    }
    assert!(w.lp.child.signals.is_empty());
    assert!(w.lp.child.respawns.is_empty());
}

/// Keys typed while a relaunched pi starts wait for its screen (its PTY is in cooked mode until pi
/// takes it), as at the first start, when the loop holds keys at all (the server's sessions do).
#[tokio::test(start_paused = true)]
async fn keys_typed_while_a_relaunched_pi_starts_wait_for_its_screen() {
    let mut w = World::new();
    w.lp.hold_keys_until_ready();
    w.lp.child.output(b"\x1b[?2004h");
    w.settle().await;
    hello(&w, "a");
    session_start(&w, 1);
    w.wire(event(2, json!({"type": "agent_start"})));
    w.settle().await;
    w.send(WorldEvent::Pty(PtyEvent::Exited(KILLED)));
    w.settle().await;
    assert_eq!(
        w.lp.child.respawns,
        vec![relaunch()],
        "a death mid-run is relaunched"
    );
    let before = w.lp.child.written().len();
    w.stdin(b"\x03typed early");
    w.settle().await;
    assert_eq!(
        w.lp.child.written().len(),
        before,
        "held while the new pi has not taken its terminal"
    );
    w.lp.child.output(b"\x1b[?2004h");
    w.settle().await;
    let written = w.lp.child.written();
    assert!(
        written[before..].ends_with(b"\x03typed early"),
        "given once pi's screen is up: {:?}",
        String::from_utf8_lossy(&written[before..])
    );
}
