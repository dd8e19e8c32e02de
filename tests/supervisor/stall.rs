//! The stall watch [STALL-S1, STALL-R1, STALL-F1]: a run in flight with no sign of life for
//! `streamStallSeconds` is aborted by pokeshell, and its aborted settle resumes it.

use pokeshell_core::supervisor::{Action, Event, LedgerKind, StopReason};

use super::sim::Sim;

/// The stall limit of these tests: 120 s, the default.
fn sim() -> Sim {
    Sim::new()
}

/// A run whose stream sent a token, then nothing.
fn stalled_stream(sim: &mut Sim) {
    sim.agent_start().turn_start().event(Event::Progress);
}

/// pi answers pokeshell's abort: the run ends aborted and settles aborted.
fn pi_aborts(sim: &mut Sim) {
    sim.agent_end(StopReason::Aborted).settle_aborted();
}

#[test]
fn stall_s1_a_silent_stream_is_aborted_and_its_settle_resumes_it() {
    let mut sim = sim();
    stalled_stream(&mut sim);
    sim.run_for(119);
    assert_eq!(sim.aborts(), 0, "not before the limit");
    sim.run_for(2);
    assert_eq!(sim.aborts(), 1, "aborted within a second of the limit");
    let acted = sim.records("STALL-S1", LedgerKind::Action);
    assert!(acted[0].reason.contains("120s"), "{}", acted[0].reason);
    assert!(sim.view().stall_abort_pending);
    let (_, text, desktop) = sim.notifications().pop().expect("notified");
    assert!(text.contains("stalled") && desktop, "{text}");

    pi_aborts(&mut sim);
    let sent = sim.sent();
    assert_eq!(sent.len(), 1, "the aborted settle resumes the run: {sent:?}");
    assert_eq!(sent[0].custom_type, "poke");
    assert!(
        sent[0].text.contains("stalled") && sent[0].text.contains("120 seconds"),
        "{}",
        sent[0].text
    );
    assert!(sent[0].trigger_turn);
    assert!(
        sim.records("ARB-ABORT", LedgerKind::Declined).is_empty(),
        "pokeshell's own abort is not the user's Esc"
    );
    assert_eq!(sim.view().stopped_by, None);
    assert!(!sim.view().stall_abort_pending);
}

#[test]
fn stall_s1_twin_a_slow_steady_stream_is_never_touched() {
    let mut sim = sim();
    sim.agent_start().turn_start();
    // A token every 100 s for an hour: slow, but alive.
    for _ in 0..36 {
        sim.run_for(100).event(Event::Progress);
    }
    assert_eq!(sim.aborts(), 0);
    assert!(sim.records("STALL-S1", LedgerKind::Action).is_empty());
    sim.agent_end(StopReason::Stop).settle();
    assert!(sim.sent().is_empty());
}

#[test]
fn stall_s1_twin_a_long_tool_is_not_a_stall() {
    let mut sim = sim();
    sim.agent_start()
        .turn_start()
        .tool_start("t1", "bash")
        .run_for(600);
    assert_eq!(sim.aborts(), 0, "the long-tool watch owns a running tool");
    sim.tool_end("t1").run_for(119);
    assert_eq!(sim.aborts(), 0, "the tool's end is a sign of life");
    sim.run_for(2);
    assert_eq!(sim.aborts(), 1);
}

#[test]
fn stall_s1_twin_nothing_is_watched_while_idle_or_compacting_or_switched_off() {
    let mut sim = sim();
    sim.run_for(1000);
    assert_eq!(sim.aborts(), 0, "idle is not a stall");
    sim.agent_start()
        .event(Event::CompactStart {
            reason: pokeshell_core::supervisor::CompactReason::Overflow,
            will_retry: true,
        })
        .run_for(500);
    assert_eq!(sim.aborts(), 0, "a compaction is not a stalled stream");

    let mut off = Sim::configured(|config| config.poke.stream_stall_seconds = 0);
    stalled_stream(&mut off);
    off.run_for(3600);
    assert_eq!(off.aborts(), 0, "0 turns the watch off");

    let mut disabled = Sim::configured(|config| config.poke.enabled = false);
    stalled_stream(&mut disabled);
    disabled.run_for(3600);
    assert_eq!(disabled.aborts(), 0, "supervision off");
}

#[test]
fn stall_r1_a_run_that_never_settles_is_aborted_and_resumed() {
    let mut sim = sim();
    sim.agent_start().turn_start().event(Event::Progress);
    // The run ends, but an extension awaits forever at agent_end: no settle, no event.
    sim.agent_end(StopReason::Stop).run_for(121);
    assert_eq!(sim.aborts(), 1);
    assert_eq!(sim.records("STALL-R1", LedgerKind::Action).len(), 1);
    assert!(sim.records("STALL-S1", LedgerKind::Action).is_empty());
    sim.settle_aborted();
    let sent = sim.sent();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].text.contains("never finished"), "{}", sent[0].text);
}

#[test]
fn stall_s1_bounded_per_episode_then_gives_up_and_a_healthy_run_resets() {
    let mut sim = sim();
    for round in 1..=2 {
        stalled_stream(&mut sim);
        sim.run_for(121);
        assert_eq!(sim.aborts(), round);
        pi_aborts(&mut sim);
        assert_eq!(sim.sent().len() as u64, round as u64);
        sim.run_for(10);
    }
    stalled_stream(&mut sim);
    sim.run_for(121);
    assert_eq!(
        sim.aborts(),
        2,
        "the third stall of the episode is left to the user"
    );
    let declined = sim.records("STALL-S1", LedgerKind::Declined);
    assert!(
        declined.iter().any(|r| r.reason.contains("already resumed 2")),
        "{declined:?}"
    );
    let (_, text, desktop) = sim.notifications().pop().expect("told");
    assert!(desktop && text.contains("leaves it to you"), "{text}");
    sim.run_for(600);
    assert_eq!(sim.aborts(), 2, "given up for this run");

    // The stuck run ends and a healthy run settles: a new episode.
    sim.agent_end(StopReason::Stop).settle();
    stalled_stream(&mut sim);
    sim.run_for(121);
    assert_eq!(sim.aborts(), 3, "a healthy settle starts a new episode");
}

#[test]
fn stall_s1_esc_during_a_stall_abort_still_stops_when_the_user_pressed_it_first() {
    let mut sim = sim();
    stalled_stream(&mut sim);
    sim.run_for(60);
    // The user presses Esc before the watch acts: their stop, nothing resumes.
    pi_aborts(&mut sim);
    sim.run_for(300);
    assert_eq!(sim.aborts(), 0);
    assert!(sim.sent().is_empty());
    assert_eq!(sim.records("ARB-ABORT", LedgerKind::Declined).len(), 1);
}

#[test]
fn stall_s1_the_resume_obeys_the_compaction_hold() {
    let mut sim = sim();
    stalled_stream(&mut sim);
    sim.run_for(121);
    sim.agent_end(StopReason::Aborted);
    sim.event(Event::CompactStart {
        reason: pokeshell_core::supervisor::CompactReason::Threshold,
        will_retry: false,
    });
    sim.settle_aborted();
    assert!(sim.sent().is_empty(), "held while the compaction runs");
    sim.event(Event::Compact {
        reason: pokeshell_core::supervisor::CompactReason::Threshold,
        will_retry: false,
        tokens_before: None,
    })
    .tick();
    assert_eq!(sim.sent().len(), 1, "sent when it ends");
}

#[test]
fn stall_f1_an_abort_without_a_settle_reports_pi_as_unresponsive_once() {
    let mut sim = sim();
    stalled_stream(&mut sim);
    sim.run_for(121);
    assert_eq!(sim.aborts(), 1);
    // The abort went out at 120 s of silence; 30 s later pi counts as frozen.
    sim.run_for(28);
    let unresponsive = |sim: &Sim| {
        sim.actions
            .iter()
            .filter(|action| matches!(action, Action::Unresponsive { .. }))
            .count()
    };
    assert_eq!(unresponsive(&sim), 0);
    sim.run_for(3);
    assert_eq!(unresponsive(&sim), 1, "30 s without a settle: pi looks frozen");
    assert_eq!(sim.records("STALL-F1", LedgerKind::Declined).len(), 1);
    sim.run_for(600);
    assert_eq!(unresponsive(&sim), 1, "said once");
    assert_eq!(sim.aborts(), 1, "no second abort while the first is unanswered");
}

#[test]
fn stall_r1_twin_pis_own_retry_wait_after_an_error_is_not_a_stall() {
    let mut sim = Sim::configured(|config| config.poke.stream_stall_seconds = 3);
    sim.agent_start().turn_start().event(Event::Progress);
    // The request failed; pi waits 8 s before its retry, with no event meanwhile.
    sim.agent_end(StopReason::Error).run_for(8);
    assert_eq!(sim.aborts(), 0, "a retry wait is not a stall");
    sim.agent_start().turn_start().event(Event::Progress).run_for(4);
    assert_eq!(
        sim.aborts(),
        1,
        "the retried request's stream is watched as usual"
    );
}

#[test]
fn stall_r1_after_an_error_a_minute_of_silence_still_counts() {
    let mut sim = Sim::configured(|config| config.poke.stream_stall_seconds = 3);
    sim.agent_start().agent_end(StopReason::Error).run_for(59);
    assert_eq!(sim.aborts(), 0);
    sim.run_for(2);
    assert_eq!(sim.aborts(), 1, "no retry takes a minute: the run never settled");
}

/// The bridge reconnects while the stream is stalled: the snapshot after the welcome says pi is
/// still busy, and the watch goes on (simulation seed 1026: it lost the run for good).
#[test]
fn stall_s1_a_stream_stalled_across_a_bridge_reconnect_is_still_aborted() {
    let mut sim = sim();
    stalled_stream(&mut sim);
    sim.run_for(60);
    sim.event(Event::BridgeDisconnected {
        reason: "dropped on request (SIGUSR1)".into(),
    })
    .event(Event::BridgeConnected)
    .event(Event::Snapshot { idle: Some(false) });
    sim.run_for(119);
    assert_eq!(sim.aborts(), 0, "the silence counts again from the reconnect");
    sim.run_for(2);
    assert_eq!(sim.aborts(), 1, "the stalled stream is aborted");
}

/// The twin: after the same reconnect a slow but steady stream is left alone.
#[test]
fn stall_s1_twin_a_steady_stream_across_a_bridge_reconnect_is_never_touched() {
    let mut sim = sim();
    sim.agent_start().turn_start();
    sim.event(Event::BridgeDisconnected {
        reason: "gone".into(),
    })
    .event(Event::BridgeConnected)
    .event(Event::Snapshot { idle: Some(false) });
    for _ in 0..20 {
        sim.run_for(100).event(Event::Progress);
    }
    assert_eq!(sim.aborts(), 0);
    sim.agent_end(StopReason::Stop).settle();
    assert!(sim.sent().is_empty());
}
