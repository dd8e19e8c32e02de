//! pi-poke: pokeshell's fixes of the original's bugs B1–B8 (docs/supervision.md, "Where pokeshell
//! differs"), the anti-loop limit, the outcome records and the view.

use pokeshell_core::supervisor::{CompactReason, DeliverAs, Event, InputSource, LedgerKind, StopReason};

use super::sim::{Settled, Sim};

#[test]
fn fix_b1_automatic_pokes_do_not_reset_the_episode() {
    let mut sim = Sim::new();
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
    // pi-poke's own poke used to come back as input{source:"extension"} and reset the count.
    sim.input(InputSource::Extension);
    assert_eq!(sim.pokes_in_episode(), 1);
    for _ in 0..4 {
        sim.advance(31)
            .agent_start()
            .agent_end(StopReason::Error)
            .compact(false)
            .settle();
        sim.input(InputSource::Extension);
    }
    assert_eq!(sim.auto_pokes(), 2, "postCompactMaxPokes holds");
}

#[test]
fn fix_b2_session_change_cancels_a_parked_poke() {
    for change in ["start", "tree", "shutdown"] {
        let mut sim = Sim::new();
        sim.agent_start()
            .agent_end(StopReason::Error)
            .compact(false)
            .settle();
        sim.turn_start().agent_end(StopReason::Error).settle();
        assert!(sim.view().pending_resume.is_some(), "{change}: a retry is parked");
        match change {
            "start" => sim.session("s2"),
            "tree" => sim.event(Event::SessionTree),
            _ => sim.event(Event::SessionShutdown),
        };
        sim.run_for(120);
        assert_eq!(sim.auto_pokes(), 1, "{change}: the parked poke never goes out");
    }
}

#[test]
fn fix_b4_switching_supervision_on_starts_the_monitor_at_once() {
    let mut sim = Sim::configured(|config| {
        config.poke.enabled = false;
        config.poke.auto_abort = true;
    });
    sim.agent_start().tool_start("t1", "bash").run_for(120);
    assert_eq!(sim.aborts(), 0, "off: nothing");
    sim.set_config(|config| config.poke.enabled = true);
    assert_eq!(sim.aborts(), 1, "the tool, already 120s old, is aborted at once");
}

#[test]
fn fix_b5_armed_wake_is_dropped_by_the_users_esc() {
    let mut sim = Sim::new();
    // Compaction completed mid-run, then Esc before the next turn started.
    sim.agent_start()
        .turn_start()
        .compact(false)
        .agent_end(StopReason::Aborted)
        .settle_aborted();
    assert_eq!(sim.auto_pokes(), 0);
    assert!(sim.view().wake.is_none());
    assert!(!sim.records("ARB-ABORT", LedgerKind::Declined).is_empty());
}

#[test]
fn fix_b6_no_orphan_poke_after_the_users_esc() {
    let mut sim = Sim::new();
    sim.agent_start()
        .tool_start("t1", "bash")
        .agent_end(StopReason::Aborted)
        .settle_aborted()
        .run_for(120);
    assert_eq!(sim.auto_pokes(), 0);
    // Even a later run that dies does not poke until the user types.
    sim.agent_start()
        .agent_end(StopReason::Error)
        .settle()
        .run_for(60);
    assert_eq!(sim.auto_pokes(), 0);
    sim.user_types()
        .agent_start()
        .tool_start("t2", "bash")
        .advance(31)
        .agent_end(StopReason::Error)
        .settle()
        .tick();
    assert_eq!(
        sim.auto_pokes(),
        1,
        "after the user typed, stall evidence counts again"
    );
}

#[test]
fn fix_b7_automatic_poke_is_a_hidden_custom_message_follow_up_when_busy() {
    let mut sim = Sim::new();
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
    let poke = &sim.sent()[0];
    assert_eq!(poke.custom_type, "poke");
    assert!(!poke.display && poke.trigger_turn);
    assert_eq!(poke.deliver_as, DeliverAs::Steer, "idle: it starts a turn");
    // Busy when the message goes out (pi settled but reported queued work): follow-up.
    let mut busy = Sim::new();
    busy.agent_start().agent_end(StopReason::Error).compact(false);
    busy.settle_as(Settled {
        is_idle: false,
        ..Settled::default()
    });
    assert_eq!(busy.sent()[0].deliver_as, DeliverAs::FollowUp);
}

#[test]
fn fix_b7_poke_waits_while_a_compaction_runs() {
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Error).compact(false);
    sim.event(Event::CompactStart {
        reason: CompactReason::Manual,
        will_retry: false,
    });
    sim.settle().run_for(60);
    assert_eq!(sim.auto_pokes(), 0, "held while pi would refuse or race it");
    sim.event(Event::Compact {
        reason: CompactReason::Manual,
        will_retry: false,
        tokens_before: None,
    });
    sim.run_for(1);
    assert_eq!(sim.auto_pokes(), 1, "sent once the compaction ended");
}

#[test]
fn fix_b7_manual_poke_waits_for_a_running_compaction() {
    let mut sim = Sim::new();
    sim.event(Event::CompactStart {
        reason: CompactReason::Manual,
        will_retry: false,
    })
    .manual_poke();
    assert!(sim.sent().is_empty());
    assert!(sim.view().manual_poke_held);
    sim.event(Event::CompactFailed {
        reason: CompactReason::Manual,
        aborted: true,
        will_retry: false,
        error_message: None,
    });
    sim.run_for(1);
    assert_eq!(sim.sent_of("poke").len(), 1);
}

#[test]
fn fix_b8_a_settled_runs_stop_reason_is_no_evidence_for_a_later_compaction() {
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Error).settle();
    // The user types; pi compacts before the new run starts (pre-run threshold compaction).
    sim.user_types().compact(false);
    assert!(sim.view().wake.is_none(), "the old error does not arm a wake");
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Stop)
        .settle();
    assert_eq!(sim.auto_pokes(), 0);
}

#[test]
fn poke_anti_loop_limit_reached_is_recorded_and_announced() {
    let mut sim = Sim::configured(|config| config.poke.post_compact_max_pokes = 1);
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
    sim.advance(31)
        .agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
    assert_eq!(sim.auto_pokes(), 1);
    let declined = sim.records("POKE-W4", LedgerKind::Declined);
    assert!(
        declined
            .iter()
            .any(|record| record.reason.contains("1 pokes were sent")),
        "{declined:?}"
    );
    assert!(
        sim.notifications()
            .iter()
            .any(|(_, text, desktop)| *desktop && text.contains("stops resuming"))
    );
}

#[test]
fn poke_outcome_is_recorded_after_each_automatic_poke() {
    let mut sim = Sim::new();
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Stop)
        .settle();
    let outcomes = sim.records("POKE-W4", LedgerKind::Outcome);
    assert_eq!(outcomes.len(), 1);
    assert!(
        outcomes[0].reason.starts_with("progress"),
        "{}",
        outcomes[0].reason
    );

    let mut stuck = Sim::new();
    stuck
        .agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
    stuck
        .agent_start()
        .turn_start()
        .agent_end(StopReason::Error)
        .settle_with(vec![
            pokeshell_core::supervisor::Message::user("go"),
            pokeshell_core::supervisor::Message::assistant(StopReason::Error, vec![])
                .with_error("400 bad request"),
        ]);
    let outcome = &stuck.records("POKE-W4", LedgerKind::Outcome)[0];
    assert!(
        outcome.reason.starts_with("no progress") && outcome.reason.contains("400"),
        "{}",
        outcome.reason
    );

    let mut ignored = Sim::new();
    ignored
        .agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle()
        .run_for(121);
    let outcome = &ignored.records("POKE-W4", LedgerKind::Outcome)[0];
    assert!(outcome.reason.contains("no turn started"), "{}", outcome.reason);
}

#[test]
fn view_agent_state_follows_the_events() {
    use pokeshell_core::supervisor::AgentState;
    let mut sim = Sim::new();
    assert_eq!(sim.view().agent, AgentState::Idle);
    sim.agent_start();
    assert_eq!(sim.view().agent, AgentState::Running);
    sim.event(Event::CompactStart {
        reason: CompactReason::Threshold,
        will_retry: false,
    });
    assert_eq!(sim.view().agent, AgentState::Compacting);
    sim.event(Event::Compact {
        reason: CompactReason::Threshold,
        will_retry: false,
        tokens_before: None,
    });
    sim.turn_start().agent_end(StopReason::Stop).settle();
    assert_eq!(sim.view().agent, AgentState::Idle);
    sim.event(Event::BridgeDisconnected {
        reason: "gone".into(),
    });
    assert_eq!(sim.view().agent, AgentState::Unknown);
    assert!(!sim.view().bridge_connected);
}

#[test]
fn wire_spellings_map_to_the_supervisors_types() {
    for (wire, stop) in [
        ("stop", StopReason::Stop),
        ("length", StopReason::Length),
        ("toolUse", StopReason::ToolUse),
        ("error", StopReason::Error),
        ("aborted", StopReason::Aborted),
        ("pending", StopReason::Pending),
        ("deferred", StopReason::Deferred),
        ("sleepy", StopReason::Other("sleepy".into())),
    ] {
        assert_eq!(StopReason::from_wire(wire), stop);
    }
    assert_eq!(DeliverAs::FollowUp.wire(), "followUp");
    assert_eq!(DeliverAs::Steer.wire(), "steer");
    assert_eq!(DeliverAs::NextTurn.wire(), "nextTurn");
}
