//! pi-poke [POKE-*]: the scenarios of the original extension's simulator (42 assertions in 12
//! scenarios, then the newer simulator's 15 in scenarios 13–14), each assertion numbered as there.
//!
//! The simulator treated every tool as already past the threshold; here the clock moves past
//! `thresholdSeconds` (30 s) before a tool is judged. Cooldown 30 s, max 2 pokes, as in the simulator.

use pokeshell_core::supervisor::{InputSource, StopReason, WakePhase};

use super::sim::Sim;

fn wake_phase(sim: &Sim) -> Option<WakePhase> {
    sim.view().wake.map(|wake| wake.phase)
}

#[test]
fn poke_s01_w4_error_after_compaction_dead_run_pokes() {
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Error).compact(false);
    assert_eq!(wake_phase(&sim), Some(WakePhase::Armed), "1. the wake is armed");
    sim.settle();
    assert_eq!(sim.auto_pokes(), 1, "2. the settle pokes");
    assert_eq!(sim.sent().len(), 1, "3. exactly one message was sent");
}

#[test]
fn poke_s02_w3_w4_midrun_compaction_then_work_finishes_no_poke() {
    let mut sim = Sim::new();
    sim.agent_start().turn_start().compact(false);
    assert_eq!(
        wake_phase(&sim),
        Some(WakePhase::Armed),
        "4. a compaction during the run arms the wake"
    );
    sim.turn_start();
    assert_eq!(
        wake_phase(&sim),
        Some(WakePhase::Watching),
        "5. the next turn moves it to watching"
    );
    sim.agent_end(StopReason::Stop).settle();
    assert_eq!(sim.auto_pokes(), 0, "6. no poke");
    assert!(sim.sent().is_empty(), "7. no message");
    assert_eq!(
        sim.pokes_in_episode(),
        0,
        "8. the counter is 0 after the healthy cycle"
    );
    assert_eq!(wake_phase(&sim), None);
}

#[test]
fn poke_s03_w4_overflow_recovery_retry_fails_pokes() {
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Error).compact(true);
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Error)
        .settle();
    assert_eq!(sim.auto_pokes(), 1, "9. the failed retry is poked");
    assert_eq!(sim.sent().len(), 1, "10. one message");
}

#[test]
fn poke_s04_w4_overflow_recovery_retry_ok_no_poke() {
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Length).compact(true);
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Stop)
        .settle();
    assert_eq!(sim.auto_pokes(), 0, "11. no poke");
    assert!(sim.sent().is_empty(), "12. no message");
}

#[test]
fn poke_s05_e8_manual_compaction_while_idle_no_poke() {
    let mut sim = Sim::new();
    sim.compact_as(pokeshell_core::supervisor::CompactReason::Manual, false);
    assert_eq!(wake_phase(&sim), None, "13. a manual compaction never arms");
    sim.settle();
    assert_eq!(sim.auto_pokes(), 0, "14. no poke");

    // The other half of the simulator's note: an idle agent is not interrupted by any compaction.
    let mut idle = Sim::new();
    idle.compact(false);
    assert_eq!(wake_phase(&idle), None);
}

#[test]
fn poke_s06_w4_esc_during_the_resume_no_poke() {
    let mut sim = Sim::new();
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .turn_start();
    sim.agent_end(StopReason::Aborted).settle_aborted();
    assert_eq!(sim.auto_pokes(), 0, "15. no poke after the user's Esc");
    assert!(sim.sent().is_empty(), "16. no message");

    // Same with a settle that does not carry the aborted flag: the watching wake sees stopReason aborted.
    let mut flagless = Sim::new();
    flagless
        .agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .turn_start();
    flagless.agent_end(StopReason::Aborted).settle();
    assert!(flagless.sent().is_empty());
}

/// One "the run died after a compaction" round: agent_start, agent_end(error), compact, settle.
fn dead_run_after_compaction(sim: &mut Sim) {
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
}

#[test]
fn poke_s07_anti_loop_max_pokes_per_episode_reset_by_healthy_cycle() {
    let mut sim = Sim::new();
    dead_run_after_compaction(&mut sim);
    assert_eq!(sim.auto_pokes(), 1, "17. poke #1");
    sim.advance(31);
    dead_run_after_compaction(&mut sim);
    assert_eq!(sim.auto_pokes(), 2, "18. poke #2");
    sim.advance(31);
    dead_run_after_compaction(&mut sim);
    assert_eq!(sim.auto_pokes(), 2, "19. blocked: count 2 ≥ max 2");
    assert_eq!(sim.sent().len(), 2, "20. two pokes in total");
    assert!(
        sim.notifications()
            .iter()
            .any(|(_, text, desktop)| *desktop && text.contains("2 pokes")),
        "giving up is announced on the desktop"
    );
    sim.advance(31);
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .turn_start();
    sim.agent_end(StopReason::Stop).settle();
    assert_eq!(sim.pokes_in_episode(), 0, "the healthy cycle resets the counter");
    sim.advance(31);
    dead_run_after_compaction(&mut sim);
    assert_eq!(sim.auto_pokes(), 3, "21./22. poke #3 after the reset");
}

#[test]
fn poke_s08_e11_user_input_cancels_the_pending_wake() {
    let mut sim = Sim::new();
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .user_types();
    assert_eq!(wake_phase(&sim), None, "23. the wake is cancelled");
    sim.settle();
    assert_eq!(sim.auto_pokes(), 0, "24. no poke");
}

#[test]
fn poke_s09_e9_failed_compaction_with_interrupted_run_pokes_failed_text() {
    let mut sim = Sim::new();
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact_failed(false);
    let wake = sim.view().wake.expect("25. armed");
    assert!(wake.failed, "25. armed with failed=true");
    sim.settle();
    assert_eq!(sim.auto_pokes(), 1, "26. poke");
    let text = &sim.sent()[0].text;
    assert!(
        text.starts_with("[Poke]") && text.contains("compaction failed"),
        "{text}"
    );
    assert!(
        text.contains("summary request failed"),
        "the compaction's error is carried: {text}"
    );
}

#[test]
fn poke_s10_w1_threshold_compaction_after_completed_run_no_poke() {
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Stop).compact(false);
    assert_eq!(wake_phase(&sim), None, "27. no wake");
    sim.settle();
    assert_eq!(sim.auto_pokes(), 0, "28. no poke");
}

#[test]
fn poke_s11_p1_manual_poke_cancels_a_pending_wake() {
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Error).compact(false);
    assert_eq!(wake_phase(&sim), Some(WakePhase::Armed), "29. armed");
    sim.manual_poke();
    assert_eq!(wake_phase(&sim), None, "30. the manual poke cancels the wake");
    assert_eq!(sim.pokes_in_episode(), 0, "31. counter 0");
    sim.settle();
    assert_eq!(sim.auto_pokes(), 0, "32. no automatic poke");
    assert_eq!(sim.sent_of("poke").len(), 1, "only the manual poke went out");
}

#[test]
fn poke_s12_o1_o2_orphaned_tool_poked_only_on_stall_evidence() {
    let mut sim = Sim::new();
    // Healthy: a slow tool in a live run.
    sim.agent_start().tool_start("t1", "bash").advance(31).tick();
    assert_eq!(sim.auto_pokes(), 0, "33. no poke while the run lives");
    sim.tool_end("t1").agent_end(StopReason::Stop).settle();
    assert_eq!(sim.auto_pokes(), 0, "34. none after the healthy settle");

    // Stall: the run dies while the tool still runs.
    sim.agent_start()
        .tool_start("t2", "bash")
        .advance(31)
        .agent_end(StopReason::Error)
        .settle();
    assert_eq!(
        sim.pokes_in_episode(),
        0,
        "35. episode open, nothing poked at the settle"
    );
    assert_eq!(sim.auto_pokes(), 0, "35. the poke is the monitor's job");
    sim.tick();
    assert_eq!(sim.auto_pokes(), 1, "36. the tick pokes the orphan");
    assert!(sim.sent()[0].text.contains("'bash'"), "{}", sim.sent()[0].text);
    assert_eq!(sim.sent().len(), 1, "37. one poke");

    sim.agent_start().agent_end(StopReason::Error).settle();
    assert_eq!(
        sim.pokes_in_episode(),
        0,
        "38. the already-poked orphan does not keep the episode open"
    );
    sim.advance(31).tick();
    assert_eq!(sim.auto_pokes(), 1, "38. no re-poke of the same tool (latch)");

    sim.tool_end("t2")
        .agent_start()
        .agent_end(StopReason::Stop)
        .settle();
    assert_eq!(
        sim.pokes_in_episode(),
        0,
        "39. the healthy settle closes the episode"
    );

    sim.agent_start()
        .tool_start("t3", "bash")
        .advance(31)
        .agent_end(StopReason::Error)
        .settle()
        .tick();
    assert_eq!(sim.auto_pokes(), 2, "40./41. a new orphan is poked");
}

#[test]
fn poke_s12_42_orphan_loop_is_capped_by_max_pokes_per_episode() {
    let mut sim = Sim::new();
    for round in 0..3 {
        let id = format!("t{round}");
        sim.agent_start()
            .tool_start(&id, "bash")
            .advance(31)
            .agent_end(StopReason::Length)
            .settle()
            .tick();
    }
    assert_eq!(sim.auto_pokes(), 2, "42. only 2 pokes in total");
}

// The newer simulator (N1–N5), which pokeshell follows.

#[test]
fn poke_s13_n2_n3_n4_resume_fails_again_retry_after_cooldown() {
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Error).compact(false);
    assert_eq!(wake_phase(&sim), Some(WakePhase::Armed), "43. armed");
    sim.settle();
    assert_eq!(sim.auto_pokes(), 1, "44. poke #1");
    assert!(sim.view().wake.is_some(), "45. the wake is kept (N2)");
    sim.turn_start();
    assert_eq!(wake_phase(&sim), Some(WakePhase::Watching), "46. watching");
    sim.agent_end(StopReason::Error).settle();
    assert_eq!(sim.auto_pokes(), 1, "47. no second poke within the cooldown");
    let pending = sim.view().pending_resume.expect("48. a retry is scheduled");
    assert_eq!(pending.rule, "POKE-W4");
    assert_eq!(sim.sent().len(), 1, "49. still one poke");
    sim.run_for(31);
    assert_eq!(
        sim.auto_pokes(),
        2,
        "50./51. the retry fires when the cooldown ends: poke #2"
    );
    sim.turn_start().agent_end(StopReason::Stop).settle();
    assert_eq!(sim.auto_pokes(), 2, "52. no poke");
    assert_eq!(wake_phase(&sim), None, "52. wake cleared");
    assert_eq!(sim.pokes_in_episode(), 0, "52. counter 0");
}

#[test]
fn poke_s14_n1_own_input_does_not_cancel_the_wake_user_input_does() {
    let mut sim = Sim::new();
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
    assert_eq!(sim.auto_pokes(), 1, "53. poke #1");
    sim.input(InputSource::Extension);
    assert!(sim.view().wake.is_some(), "54. extension input leaves the wake");
    assert_eq!(sim.pokes_in_episode(), 1, "55. and the counter");
    sim.turn_start().agent_end(StopReason::Error).settle();
    assert_eq!(sim.auto_pokes(), 1, "56. no poke now");
    assert!(sim.view().pending_resume.is_some(), "56. a retry is scheduled");
    sim.input(InputSource::Rpc);
    assert!(sim.view().wake.is_none(), "57. user (rpc) input cancels the wake");
    assert!(sim.view().pending_resume.is_none(), "57. and the scheduled retry");
    assert_eq!(sim.pokes_in_episode(), 0, "57. and resets the counter");
    sim.run_for(60);
    assert_eq!(sim.auto_pokes(), 1, "nothing goes out later either");
}

#[test]
fn poke_n5_new_compaction_cancels_a_scheduled_retry() {
    let mut sim = Sim::new();
    sim.agent_start()
        .agent_end(StopReason::Error)
        .compact(false)
        .settle();
    sim.turn_start().agent_end(StopReason::Error).settle();
    assert!(sim.view().pending_resume.is_some());
    // An overflow compaction that will retry counts as interrupting work even while idle.
    sim.compact(true);
    assert!(
        sim.view().pending_resume.is_none(),
        "the re-armed wake decides at the next settle"
    );
    assert_eq!(sim.view().wake.map(|wake| wake.phase), Some(WakePhase::Armed));
}
