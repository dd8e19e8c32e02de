//! Restarts of pi, as the session decides them: frozen or dead mid-run, idle, quit by the user, the
//! hourly bound, time pokeshell was away, an abort that never settles, a pending wakeup.

use serde_json::{Value, json};

use super::*;
use crate::bridge::BridgeEvent;
use crate::bridge::{Command, FromBridge, parse_from_bridge};
use crate::supervisor::ledger::rule;

pub(super) const WALL: u64 = 1_700_000_000_000;
pub(super) const FILE: &str = "/s/one.jsonl";

pub(super) fn at(ms: u64) -> Now {
    Now::new(ms, WALL + ms)
}

use super::tests::settings;

/// pi with its bridge, started with a message and a session option, connected at 0.
pub(super) fn pi() -> Session {
    let opts = SessionOptions {
        label: "pi".into(),
        bridge: Some(Ok(())),
        child_args: ["-e", "/b/bridge.ts", "--continue", "fix the bug"]
            .map(String::from)
            .to_vec(),
        ..SessionOptions::default()
    };
    let mut s = Session::new(opts, settings(), 120, 40, at(0));
    s.handle(Input::ChildStarted { pid: 7 }, at(0));
    hello(&mut s, 0);
    s
}

pub(super) fn wire(s: &mut Session, line: Value, ms: u64) -> Vec<Effect> {
    let ev = match parse_from_bridge(line.to_string().as_bytes()).expect("a bridge line") {
        FromBridge::Hello(hello) => BridgeEvent::Connected { conn: 1, hello },
        FromBridge::Event { seq, at, event } => BridgeEvent::Event {
            conn: 1,
            seq,
            at,
            event,
        },
        FromBridge::Heartbeat(heartbeat) => BridgeEvent::Heartbeat {
            conn: 1,
            heartbeat,
            missed: 0,
        },
        FromBridge::Reply(_) => panic!("replies are not wired here"),
    };
    s.handle(Input::Bridge(ev), at(ms))
}

pub(super) fn hello(s: &mut Session, ms: u64) -> Vec<Effect> {
    wire(
        s,
        json!({"type": "hello", "protocol": 1, "token": "t", "piVersion": "1.6.0", "pid": 9,
        "instance": format!("i{ms}"), "reconnect": false, "dropped": 0, "sessionId": "s1",
        "sessionFile": FILE, "sessionName": null, "model": "mock/m", "mode": "tui", "cwd": "/w"}),
        ms,
    )
}

pub(super) fn event(s: &mut Session, event: Value, ms: u64) -> Vec<Effect> {
    wire(
        s,
        json!({"type": "event", "seq": ms, "at": WALL + ms, "event": event}),
        ms,
    )
}

pub(super) fn session_start(s: &mut Session, entries: Value, ms: u64) -> Vec<Effect> {
    event(
        s,
        json!({"type": "session_start", "reason": "startup", "sessionId": "s1", "sessionFile": FILE,
        "customEntries": entries}),
        ms,
    )
}

pub(super) fn heartbeat(s: &mut Session, ms: u64) {
    wire(s, json!({"type": "heartbeat", "seq": ms, "at": WALL + ms}), ms);
}

pub(super) fn tick(s: &mut Session, ms: u64) -> Vec<Effect> {
    s.handle(Input::Tick, at(ms))
}

pub(super) fn respawn(fx: &[Effect]) -> Option<Vec<String>> {
    fx.iter().find_map(|e| match e {
        Effect::Respawn { args } => Some(args.clone()),
        _ => None,
    })
}

pub(super) fn messages(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Bridge {
                command: Command::SendMessage(m),
                ..
            } => Some(m.content.clone()),
            _ => None,
        })
        .collect()
}

pub(super) fn records(fx: &[Effect], rule: &str) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Ledger(r) if r.rule == rule => Some(r.reason.clone()),
            _ => None,
        })
        .collect()
}

/// The new child starts and its bridge says hello and starts its session.
pub(super) fn comes_back(s: &mut Session, entries: Value, ms: u64) -> Vec<Effect> {
    s.handle(Input::ChildStarted { pid: 8 }, at(ms));
    hello(s, ms + 500);
    session_start(s, entries, ms + 600)
}

#[test]
fn rst_f1_a_frozen_pi_mid_run_is_relaunched_on_its_session_and_resumed() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    assert_eq!(respawn(&tick(&mut s, 90_999)), None, "not yet");
    let fx = tick(&mut s, 91_000);
    let args = respawn(&fx).expect("a relaunch after 90 s of silence");
    assert_eq!(args, ["-e", "/b/bridge.ts", "--session", FILE].map(String::from));
    assert_eq!(records(&fx, rule::RESTART_FROZEN).len(), 1, "{fx:?}");
    assert!(fx.iter().any(|e| matches!(e, Effect::Notify { .. })));
    assert_eq!(respawn(&tick(&mut s, 200_000)), None, "asked once");
    let fx = comes_back(&mut s, json!([]), 95_000);
    let sent = messages(&fx);
    assert_eq!(sent.len(), 1, "{fx:?}");
    assert!(
        sent[0].contains("restart pi") && sent[0].contains("90 s"),
        "{}",
        sent[0]
    );
    assert_eq!(records(&fx, rule::RESTART_RESUME).len(), 1);
    let lines: Vec<String> = s
        .live_lines(at(96_000))
        .iter()
        .map(|l| format!("{l:?}"))
        .collect();
    assert!(lines.iter().any(|l| l.contains("Restarts of pi")), "{lines:?}");
}

/// The stall watch (STALL-S1) would rightly abort a run that long without progress; these tests are
/// about the freeze watch alone.
pub(super) fn without_stall_watch(s: &mut Session) {
    let off = crate::config::Change {
        key: crate::config::KeyId::PokeStreamStallSeconds,
        value: crate::config::SettingValue::Int(0),
    };
    s.handle(Input::ApplySettings(vec![off]), at(0));
}

#[test]
fn heartbeats_or_output_keep_pi_alive() {
    let mut s = pi();
    without_stall_watch(&mut s);
    event(&mut s, json!({"type": "agent_start"}), 1000);
    for t in (5_000..300_000).step_by(5_000) {
        heartbeat(&mut s, t);
        assert_eq!(respawn(&tick(&mut s, t + 1)), None);
    }
    for t in (300_000..600_000).step_by(30_000) {
        let modes = crate::screen::ChildModes::default();
        s.handle(
            Input::ChildOutput {
                modes,
                host_bytes: Vec::new(),
            },
            at(t),
        );
        assert_eq!(respawn(&tick(&mut s, t + 1)), None);
    }
}

#[test]
fn a_pi_whose_bridge_went_away_is_not_taken_for_frozen() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    let gone = BridgeEvent::Disconnected {
        conn: 1,
        reason: "the socket closed".into(),
    };
    s.handle(Input::Bridge(gone), at(2000));
    assert_eq!(respawn(&tick(&mut s, 500_000)), None);
    hello(&mut s, 600_000);
    assert!(
        respawn(&tick(&mut s, 690_000)).is_some(),
        "watched again after its hello"
    );
}

#[test]
fn a_frozen_idle_pi_is_relaunched_without_a_resume() {
    let mut s = pi();
    let fx = tick(&mut s, 90_000);
    assert!(respawn(&fx).is_some());
    let fx = comes_back(&mut s, json!([]), 95_000);
    assert!(messages(&fx).is_empty(), "nothing was running: {fx:?}");
}

#[test]
fn rst_d1_death_mid_run_is_a_restart_and_a_quit_or_a_polite_idle_end_is_not() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    let fx = s.handle(
        Input::ChildExited {
            code: 137,
            signal: Some(9),
        },
        at(2000),
    );
    assert!(respawn(&fx).is_some(), "{fx:?}");
    assert_eq!(records(&fx, rule::RESTART_DIED).len(), 1);

    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    let fx = s.handle(
        Input::ChildExited {
            code: 0,
            signal: None,
        },
        at(2000),
    );
    assert_eq!(respawn(&fx), None, "the user quit (/quit, Ctrl+D, Ctrl+C twice)");

    let mut s = pi();
    let fx = s.handle(
        Input::ChildExited {
            code: 143,
            signal: Some(15),
        },
        at(2000),
    );
    assert_eq!(respawn(&fx), None, "pi was idle and asked to end");
}

#[test]
fn rst_b1_the_hourly_bound_stops_restarts_and_says_so() {
    let mut s = pi();
    let mut t = 0;
    for _ in 0..3 {
        event(&mut s, json!({"type": "agent_start"}), t + 100);
        let fx = s.handle(
            Input::ChildExited {
                code: 1,
                signal: None,
            },
            at(t + 200),
        );
        assert!(respawn(&fx).is_some());
        comes_back(&mut s, json!([]), t + 300);
        t += 60_000;
    }
    event(&mut s, json!({"type": "agent_start"}), t + 100);
    let fx = s.handle(
        Input::ChildExited {
            code: 1,
            signal: None,
        },
        at(t + 200),
    );
    assert_eq!(respawn(&fx), None);
    let refused = records(&fx, rule::RESTART_LIMIT);
    assert_eq!(refused.len(), 1, "{fx:?}");
    assert!(
        refused[0].contains("3 restart(s) in the last hour"),
        "{}",
        refused[0]
    );
    assert!(fx.iter().any(|e| matches!(e, Effect::Notify { .. })));
    let side: Vec<String> = s.restart_lines().iter().map(|l| format!("{l:?}")).collect();
    assert!(side.iter().any(|l| l.contains("does not restart")), "{side:?}");
    // An hour after the first, restarts are allowed again.
    let mut s2 = pi();
    for k in 0..3 {
        event(&mut s2, json!({"type": "agent_start"}), k * 1000 + 10);
        assert!(
            respawn(&s2.handle(
                Input::ChildExited {
                    code: 1,
                    signal: None
                },
                at(k * 1000 + 20)
            ))
            .is_some()
        );
        comes_back(&mut s2, json!([]), k * 1000 + 30);
    }
    event(&mut s2, json!({"type": "agent_start"}), 3_700_000);
    let fx = s2.handle(
        Input::ChildExited {
            code: 1,
            signal: None,
        },
        at(3_700_100),
    );
    assert!(respawn(&fx).is_some());
}

#[test]
fn time_pokeshell_was_away_is_not_silence() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    heartbeat(&mut s, 5000);
    // pokeshell was stopped for 200 s; when it runs again, the loop says so before anything else.
    s.handle(Input::LoopAway { ms: 200_000 }, at(205_000));
    assert_eq!(respawn(&tick(&mut s, 205_000)), None);
    assert_eq!(respawn(&tick(&mut s, 94_000 + 200_000)), None);
    assert!(
        respawn(&tick(&mut s, 95_000 + 200_000)).is_some(),
        "silence after the return counts"
    );
}

#[test]
fn rst_f2_an_abort_that_does_not_settle_in_30_s_restarts_pi() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    // Esc by hand is not pokeshell's abort; an automatic one is, whoever in pokeshell sent it.
    let mut fx = Vec::new();
    s.perform(vec![crate::supervisor::Action::Abort], at(2000), &mut fx);
    for t in (5_000..32_000).step_by(5_000) {
        heartbeat(&mut s, t);
        assert_eq!(respawn(&tick(&mut s, t)), None);
    }
    heartbeat(&mut s, 32_000);
    let fx = tick(&mut s, 32_000);
    assert!(respawn(&fx).is_some(), "{fx:?}");
    assert_eq!(records(&fx, rule::RESTART_ABORT).len(), 1);

    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    s.perform(vec![crate::supervisor::Action::Abort], at(2000), &mut Vec::new());
    event(
        &mut s,
        json!({"type": "agent_settled", "aborted": true, "idle": true, "tail": []}),
        3000,
    );
    heartbeat(&mut s, 32_000);
    assert_eq!(respawn(&tick(&mut s, 33_000)), None, "the abort settled");
}

#[test]
fn a_restart_while_a_wakeup_is_pending_keeps_the_wakeup() {
    let mut s = pi();
    session_start(&mut s, json!([]), 100);
    let fx = event(
        &mut s,
        json!({"type": "tool_call_request", "callId": "c1", "toolName": "schedule_wakeup",
        "args": {"delay_seconds": 600, "prompt": "check the build", "reason": "build"}}),
        1000,
    );
    let entry = fx
        .iter()
        .find_map(|e| match e {
            Effect::Bridge {
                command: Command::AppendEntry { custom_type, data },
                ..
            } => Some(json!({"id": "e1", "customType": custom_type, "data": data, "timestamp": "x"})),
            _ => None,
        })
        .expect("the wakeup is saved in the session");
    event(&mut s, json!({"type": "agent_start"}), 2000);
    assert!(
        respawn(&s.handle(
            Input::ChildExited {
                code: 137,
                signal: Some(9)
            },
            at(3000)
        ))
        .is_some()
    );
    comes_back(&mut s, json!([entry]), 4000);
    let view = s.supervisor_view(at(5000));
    assert_eq!(view.wakeups.len(), 1, "{:?}", view.wakeups);
    assert_eq!(view.wakeups[0].prompt, "check the build");
}

#[test]
fn without_a_session_file_pi_is_not_restarted() {
    let opts = SessionOptions {
        bridge: Some(Ok(())),
        ..SessionOptions::default()
    };
    let mut s = Session::new(opts, settings(), 120, 40, at(0));
    s.handle(Input::ChildStarted { pid: 7 }, at(0));
    wire(
        &mut s,
        json!({"type": "hello", "protocol": 1, "token": "t", "pid": 9, "instance": "i",
        "sessionId": "s1", "sessionFile": null}),
        0,
    );
    event(&mut s, json!({"type": "agent_start"}), 1000);
    let fx = s.handle(
        Input::ChildExited {
            code: 137,
            signal: Some(9),
        },
        at(2000),
    );
    assert_eq!(respawn(&fx), None);
    assert!(records(&fx, rule::RESTART_LIMIT)[0].contains("no session file"));
}

#[test]
fn pis_own_status_report_shows_when_the_bridge_is_not_connected() {
    let opts = SessionOptions {
        bridge: Some(Err("the extension failed to load".into())),
        ..SessionOptions::default()
    };
    let mut s = Session::new(opts, settings(), 120, 40, at(0));
    let status = crate::screen::ProgramStatus {
        state: crate::screen::ProgramState::Working,
        app: Some("pi".into()),
        kind: None,
        msg: None,
    };
    s.handle(Input::ProgramStatus(Some(status)), at(10));
    let line = format!("{:?}", s.reported_state().expect("a state line"));
    assert!(line.contains("working"), "{line}");
    assert_eq!(s.state_source(), "pi's status reports (OSC 7501)");
    let footer = s.footer_view(at(20), Some(1)).suffix.expect("a footer suffix");
    assert_eq!(footer.0, "pi: working");
    let mut s = pi();
    s.handle(Input::ProgramStatus(None), at(10));
    assert_eq!(s.state_source(), "the bridge");
    assert!(s.reported_state().is_none());
    assert_eq!(s.footer_view(at(20), Some(1)).suffix, None);
}
