//! pi-wakeup [WAK-*]: the original extension's 19 test cases (1–7 pure, 8–19 wiring).
//! pokeshell's additions are in `wakeup_restore`.

use pokeshell_core::supervisor::wakeup::schedule::{clamp_delay, delivery_mode};
use pokeshell_core::supervisor::{DeliverAs, Event, NotifyLevel, texts};
use serde_json::{Value, json};

use super::sim::{START_MONO, START_WALL, Sim};

fn clamp(value: Value) -> u64 {
    clamp_delay(&value, 60, 3600)
}

pub(super) fn schedule(
    sim: &mut Sim,
    call_id: &str,
    delay: Value,
    prompt: &str,
    reason: Option<&str>,
) -> String {
    let mut args = json!({ "delay_seconds": delay, "prompt": prompt });
    if let Some(reason) = reason {
        args["reason"] = json!(reason);
    }
    sim.tool_call(call_id, "schedule_wakeup", args);
    let (_, text, is_error, _) = sim.replies().pop().expect("a reply");
    assert!(!is_error, "{text}");
    text
}

pub(super) fn wakeups_sent(sim: &Sim) -> Vec<super::sim::Sent> {
    sim.sent_of("wakeup")
}

// schedule.ts (WAK-P1..P4)

#[test]
fn wak_01_p2_below_the_minimum_clamps_up() {
    for value in [json!(1), json!(0), json!(-100), json!(59)] {
        assert_eq!(clamp(value.clone()), 60, "{value}");
    }
}

#[test]
fn wak_02_p2_above_the_maximum_clamps_down() {
    assert_eq!(clamp(json!(3601)), 3600);
    assert_eq!(clamp(json!(999_999)), 3600);
}

#[test]
fn wak_03_p2_in_range_is_floored() {
    assert_eq!(clamp(json!(120)), 120);
    assert_eq!(clamp(json!(120.9)), 120);
    assert_eq!(clamp(json!(60)), 60);
    assert_eq!(clamp(json!(3600)), 3600);
}

#[test]
fn wak_04_p2_not_a_finite_number_gives_the_minimum() {
    // JSON has no NaN or Infinity: they arrive as null, like a missing value.
    for value in [
        json!(f64::NAN),
        json!(f64::INFINITY),
        Value::Null,
        json!("120"),
        json!({}),
    ] {
        assert_eq!(clamp(value.clone()), 60, "{value}");
    }
    assert_eq!(clamp_delay(&json!(1e300), 60, 3600), 3600);
    assert_eq!(clamp_delay(&json!(5), 2, 10), 5, "the bounds are configurable");
}

#[test]
fn wak_05_p3_delivery_mode() {
    assert_eq!(delivery_mode(true), DeliverAs::Steer);
    assert_eq!(delivery_mode(false), DeliverAs::FollowUp);
}

#[test]
fn wak_06_p4_message_carries_prompt_and_reason() {
    let message = texts::wakeup_message("check the build", "waiting on CI");
    assert!(message.starts_with("check the build\n\n"), "{message}");
    assert!(message.contains("waiting on CI"), "{message}");
}

#[test]
fn wak_07_p4_blank_reason_leaves_the_prompt_alone() {
    assert_eq!(texts::wakeup_message("check", ""), "check");
    assert_eq!(texts::wakeup_message("check", "   "), "check");
}

// index.ts (WAK-T1..T4)

#[test]
fn wak_08_t1_t2_both_tools_are_answered_others_are_refused() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(120), "x", None);
    sim.tool_call("c2", "cancel_wakeup", json!({}));
    sim.tool_call("c3", "make_coffee", json!({}));
    let replies = sim.replies();
    assert_eq!(replies.len(), 3, "every call gets exactly one reply");
    assert!(!replies[1].2);
    assert!(
        replies[2].2 && replies[2].1.contains("make_coffee"),
        "{:?}",
        replies[2]
    );
}

#[test]
fn wak_09_t1_t3_idle_schedule_then_fire_steers_a_visible_wakeup() {
    let mut sim = Sim::new();
    let text = schedule(&mut sim, "c1", json!(120), "check the build", Some("CI"));
    assert!(text.contains("wake-1") && text.contains("120s"), "{text}");
    assert_eq!(
        sim.sup.next_deadline(),
        Some(START_MONO + 120_000),
        "one timer of 120 s"
    );
    let scheduled = sim.entries("pokeshell-wakeup-scheduled");
    assert_eq!(scheduled.len(), 1);
    assert_eq!(scheduled[0]["delaySeconds"], 120);
    assert_eq!(scheduled[0]["fireAtMs"], START_WALL + 120_000);
    assert_eq!(
        scheduled[0]["prompt"], "check the build",
        "stored so it can be re-armed"
    );
    sim.run_for(119);
    assert!(wakeups_sent(&sim).is_empty());
    sim.run_for(1);
    let sent = wakeups_sent(&sim);
    assert_eq!(sent.len(), 1);
    assert!(sent[0].trigger_turn && sent[0].display);
    assert_eq!(sent[0].deliver_as, DeliverAs::Steer);
    assert!(
        sent[0].text.contains("check the build") && sent[0].text.contains("CI"),
        "{}",
        sent[0].text
    );
    assert_eq!(
        sim.entries("pokeshell-wakeup-fired"),
        vec![json!({"id": "wake-1", "reason": "CI"})]
    );
}

#[test]
fn wak_10_t3_busy_fire_is_a_follow_up() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(300), "ping", None);
    sim.agent_start().run_for(300);
    let sent = wakeups_sent(&sim);
    assert_eq!(sent.len(), 1);
    assert!(sent[0].trigger_turn);
    assert_eq!(sent[0].deliver_as, DeliverAs::FollowUp);
}

#[test]
fn wak_11_t1_short_delay_is_clamped_to_sixty() {
    let mut sim = Sim::new();
    assert!(schedule(&mut sim, "c1", json!(1), "x", None).contains("60s"));
    assert_eq!(sim.sup.next_deadline(), Some(START_MONO + 60_000));
}

#[test]
fn wak_12_t1_long_delay_is_clamped_to_an_hour() {
    let mut sim = Sim::new();
    assert!(schedule(&mut sim, "c1", json!(999_999), "x", None).contains("3600s"));
    assert_eq!(sim.sup.next_deadline(), Some(START_MONO + 3_600_000));
}

#[test]
fn wak_13_t2_cancel_one() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(120), "x", None);
    sim.tool_call("c2", "cancel_wakeup", json!({"id": "wake-1"}));
    let (_, text, _, _) = sim.replies().pop().expect("reply");
    assert!(text.contains("wake-1") && text.contains("cancelled"), "{text}");
    assert_eq!(sim.sup.next_deadline(), None, "the timer is gone");
    sim.run_for(200);
    assert!(wakeups_sent(&sim).is_empty());
    assert_eq!(
        sim.entries("pokeshell-wakeup-cancelled"),
        vec![json!({"id": "wake-1"})]
    );
}

#[test]
fn wak_14_t2_cancel_unknown_id() {
    let mut sim = Sim::new();
    sim.tool_call("c1", "cancel_wakeup", json!({"id": "wake-999"}));
    let (_, text, is_error, _) = sim.replies().pop().expect("reply");
    assert!(text.contains("no pending wakeup wake-999") && !is_error, "{text}");
    assert!(sim.entries("pokeshell-wakeup-cancelled").is_empty());
}

#[test]
fn wak_15_t2_cancel_all() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(120), "a", None);
    schedule(&mut sim, "c2", json!(200), "b", None);
    sim.tool_call("c3", "cancel_wakeup", json!({}));
    let (_, text, _, _) = sim.replies().pop().expect("reply");
    assert!(text.starts_with("2 pending wakeups"), "{text}");
    sim.run_for(300);
    assert!(wakeups_sent(&sim).is_empty());
    assert_eq!(
        sim.entries("pokeshell-wakeup-cancelled"),
        vec![json!({"all": true, "count": 2})]
    );
}

#[test]
fn wak_16_t2_cancel_all_with_nothing_pending() {
    let mut sim = Sim::new();
    sim.tool_call("c1", "cancel_wakeup", json!({"id": ""}));
    let (_, text, _, _) = sim.replies().pop().expect("reply");
    assert!(text.starts_with("0 pending wakeups"), "{text}");
    assert!(sim.entries("pokeshell-wakeup-cancelled").is_empty());
}

#[test]
fn wak_17_t3_delivery_failure_is_recorded_once() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(60), "x", None);
    sim.refuse_sends("pi is gone").run_for(60);
    assert_eq!(
        sim.entries("pokeshell-wakeup-failed"),
        vec![json!({"id": "wake-1", "error": "pi is gone"})]
    );
    assert!(sim.entries("pokeshell-wakeup-fired").is_empty());
    let failures: Vec<_> = sim
        .notifications()
        .into_iter()
        .filter(|(level, _, _)| *level == NotifyLevel::Error)
        .collect();
    assert_eq!(failures.len(), 1);
    sim.tick().run_for(600);
    assert_eq!(wakeups_sent(&sim).len(), 1, "one-shot: not sent again");
    assert_eq!(sim.entries("pokeshell-wakeup-failed").len(), 1);
}

#[test]
fn wak_18_t3_unknown_agent_state_fires_as_follow_up() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(60), "x", None);
    // A new bridge instance connected and pi has not said where it is yet.
    sim.event(Event::BridgeConnected).run_for(60);
    let sent = wakeups_sent(&sim);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].deliver_as, DeliverAs::FollowUp);
    assert!(sent[0].trigger_turn);
}

#[test]
fn wak_19_t4_shutdown_clears_every_timer() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(60), "a", None);
    schedule(&mut sim, "c2", json!(90), "b", None);
    sim.event(Event::SessionShutdown);
    assert_eq!(sim.sup.next_deadline(), None);
    sim.tick().run_for(600).tick();
    assert!(wakeups_sent(&sim).is_empty());
    assert!(sim.view().wakeups.is_empty());
}
