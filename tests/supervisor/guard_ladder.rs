//! The no-progress rails climbing their ladder through the whole supervisor [GUARD-L1..L4,
//! GUARD-P1, GUARD-E1..E3]: a message, then a handoff, then stop and ask; each step a ledger record
//! with its evidence. Healthy twins: a long build with varied calls, a requested poll with sleeps,
//! pokes that bring something new, the loop guard's own failing loops.

use pokeshell_core::supervisor::event::ToolOutcome;
use pokeshell_core::supervisor::{Event, LedgerKind, StopReason};
use serde_json::json;

use super::sim::{Sim, text_reply};

/// The same `ls` five times in a run, with the same result.
fn loop_of_five(sim: &mut Sim, round: u32) {
    for i in 0..5 {
        sim.call(&format!("c{round}-{i}"), "bash", "ls", "a b c", 200);
    }
}

#[test]
fn guard_l1_the_same_call_climbs_message_handoff_then_stop() {
    let mut sim = Sim::new();
    sim.user_types().agent_start();
    loop_of_five(&mut sim, 1);
    let sent = sim.sent_of("guard-rail");
    assert_eq!(sent.len(), 1, "rung 1: a message");
    assert!(
        sent[0].text.contains("`bash ls` 5 times in a row"),
        "{}",
        sent[0].text
    );
    let step = sim.records("GUARD-E1", LedgerKind::Action);
    assert!(
        step[0].reason.contains("GUARD-L1") && step[0].reason.contains("5 times"),
        "{}",
        step[0].reason
    );

    sim.advance(10);
    loop_of_five(&mut sim, 2);
    let handoffs = sim.compactions();
    assert_eq!(handoffs.len(), 1, "rung 2: a handoff");
    assert!(handoffs[0].0.as_deref().unwrap_or_default().contains("`bash ls`"));
    assert_eq!(sim.records("GUARD-E2", LedgerKind::Action).len(), 1);
    // The handoff aborts the busy run, compacts, and the fresh context is asked to take another way.
    sim.agent_end(StopReason::Aborted).settle_aborted();
    sim.event(Event::CompactResult { error: None });
    sim.run_for(10);
    let sent = sim.sent_of("guard-rail");
    assert_eq!(sent.len(), 2);
    assert!(sent[1].text.contains("handed off"), "{}", sent[1].text);

    sim.agent_start();
    loop_of_five(&mut sim, 3);
    assert_eq!(sim.aborts(), 1, "rung 3: stopped");
    let halt = sim.view().guard.halt.expect("asked");
    assert!(halt.cause.state().contains("bash ls"), "{}", halt.cause.state());
    assert_eq!(sim.records("GUARD-E3", LedgerKind::Action).len(), 1);
    sim.agent_end(StopReason::Aborted).settle_aborted();
    sim.run_for(300);
    assert_eq!(sim.sent_of("guard-rail").len(), 2, "nothing more on its own");
    // Let it go on: the ladder is back at its foot and the run resumes.
    sim.event(Event::GuardAllow { usd: None });
    assert_eq!(sim.view().guard.ladder, 0);
    assert!(sim.sent().last().expect("resumed").text.contains("Do not repeat"));
}

#[test]
fn guard_e2_a_handoff_whose_compaction_fails_does_not_claim_a_fresh_context() {
    let mut sim = Sim::new();
    sim.user_types().agent_start();
    loop_of_five(&mut sim, 1);
    sim.advance(10);
    loop_of_five(&mut sim, 2);
    assert_eq!(sim.compactions().len(), 1, "rung 2: a handoff");
    sim.agent_end(StopReason::Aborted).settle_aborted();
    sim.event(Event::CompactResult {
        error: Some("Nothing to compact (session too small)".into()),
    });
    sim.run_for(10);
    let sent = sim.sent_of("guard-rail");
    assert_eq!(sent.len(), 2, "the ladder goes on after the failed handoff");
    assert!(
        sent[1].text.contains("compaction failed") && !sent[1].text.contains("handed off to"),
        "{}",
        sent[1].text
    );
    let steps = sim.records("GUARD-E2", LedgerKind::Action);
    assert!(
        steps.iter().any(|r| r.reason.contains("the handoff failed")),
        "{steps:?}"
    );
    // The next repetition still stops and asks.
    sim.agent_start();
    loop_of_five(&mut sim, 3);
    assert_eq!(sim.records("GUARD-E3", LedgerKind::Action).len(), 1);
}

#[test]
fn guard_l2_two_calls_taking_turns_climb_the_ladder() {
    let mut sim = Sim::new();
    sim.user_types().agent_start();
    for i in 0..4 {
        sim.call(&format!("a{i}"), "read", "a.txt", "A", 100);
        sim.call(&format!("b{i}"), "read", "b.txt", "B", 100);
    }
    let sent = sim.sent_of("guard-rail");
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].text.contains("taking turns") && sent[0].text.contains("4 rounds"),
        "{}",
        sent[0].text
    );
}

#[test]
fn guard_l1_healthy_twin_a_long_build_with_varied_calls_is_never_touched() {
    let mut sim = Sim::new();
    sim.user_types().agent_start();
    for round in 0..60 {
        sim.call(
            &format!("e{round}"),
            "edit",
            &format!("src/m{round}.rs"),
            "ok",
            50,
        );
        sim.call(
            &format!("b{round}"),
            "bash",
            "cargo build",
            &format!("{} warnings", round % 4),
            3000,
        );
        sim.call(
            &format!("t{round}"),
            "bash",
            "cargo test",
            &format!("{round} passed"),
            4000,
        );
        sim.model_call(Some(0.001 * round as f64));
    }
    assert!(sim.sent().is_empty() && sim.aborts() == 0 && sim.compactions().is_empty());
    assert!(sim.view().guard.last.is_none(), "no rail acted");
}

#[test]
fn guard_p1_healthy_twin_a_requested_poll_with_sleeps_between_checks_is_left_alone() {
    let mut sim = Sim::new();
    sim.user_types().agent_start();
    for i in 0..20 {
        sim.call(&format!("s{i}"), "bash", "sleep 30", "", 30_000);
        sim.call(
            &format!("c{i}"),
            "bash",
            "gh run view 42",
            "status: in_progress",
            800,
        );
    }
    assert!(sim.sent().is_empty() && sim.aborts() == 0);
    let polls = sim.records("GUARD-P1", LedgerKind::Declined);
    assert_eq!(polls.len(), 1, "said once");
    assert!(
        polls[0].reason.contains("a poll, left alone"),
        "{}",
        polls[0].reason
    );
}

#[test]
fn guard_p1_healthy_twin_a_check_after_each_wakeup_is_left_alone() {
    let mut sim = Sim::configured(|c| c.wakeup_min_seconds = 1);
    for i in 0..8 {
        sim.agent_start();
        sim.call(
            &format!("c{i}"),
            "bash",
            "gh run view 42",
            "status: in_progress",
            500,
        );
        sim.tool_call(
            &format!("w{i}"),
            "schedule_wakeup",
            json!({"delay_seconds": 5, "prompt": "check CI"}),
        );
        sim.agent_end(StopReason::Stop);
        sim.settle_with(vec![text_reply(
            "CI is still running; I will look again in 5 seconds.",
        )]);
        sim.run_for(6);
    }
    assert_eq!(sim.sent_of("wakeup").len(), 8, "every wakeup fired");
    assert!(sim.sent_of("guard-rail").is_empty() && sim.aborts() == 0);
}

#[test]
fn guard_l3_the_same_reply_again_and_again_climbs_the_ladder() {
    let mut sim = Sim::configured(|c| c.recovery.promise_poke = false);
    sim.user_types();
    let same = "I could not find the configuration file.";
    for _ in 0..3 {
        sim.agent_start().agent_end(StopReason::Stop);
        sim.settle_with(vec![text_reply(same)]);
        sim.advance(10);
        // Something else pokes it on each time (here a restarted pi's resume would; the model repeats).
        sim.event(Event::PiRestarted {
            rule: "RST-F1",
            reason: "pi froze".into(),
            resume: true,
        });
        sim.session("s1");
        sim.run_for(10);
    }
    assert!(
        sim.sent_of("guard-rail").is_empty(),
        "three is under the threshold of four"
    );
    sim.agent_start().agent_end(StopReason::Stop);
    sim.settle_with(vec![text_reply(same)]);
    sim.run_for(10);
    let sent = sim.sent_of("guard-rail");
    assert_eq!(sent.len(), 1, "{:?}", sim.ledger());
    assert!(
        sent[0].text.contains("the same reply 4 times"),
        "{}",
        sent[0].text
    );
}

#[test]
fn guard_l3_healthy_twin_replies_that_differ_and_a_polls_reports_are_left_alone() {
    let mut sim = Sim::new();
    sim.user_types();
    for i in 0..10 {
        sim.agent_start().agent_end(StopReason::Stop);
        sim.settle_with(vec![text_reply(&format!("Step {i} is done."))]);
    }
    assert!(sim.sent_of("guard-rail").is_empty());
}

#[test]
fn guard_l4_pokes_that_bring_no_new_call_climb_the_ladder() {
    // A run that dies and is resumed again and again, each time making the same call again.
    let mut sim = Sim::configured(|c| {
        c.poke.post_compact_max_pokes = 10;
        c.poke.post_compact_cooldown_seconds = 0;
    });
    sim.user_types();
    let mut pokes = 0;
    for i in 0..6 {
        sim.agent_start();
        sim.call(&format!("c{i}"), "bash", "npm test", "1 failing", 100);
        sim.compact(false);
        let reply = format!("Attempt {i}: the tests still fail.");
        sim.agent_end(StopReason::Error)
            .settle_with(vec![text_reply(&reply)]);
        sim.run_for(40);
        pokes = sim.auto_pokes();
        if !sim.sent_of("guard-rail").is_empty() {
            break;
        }
    }
    let step = sim.records("GUARD-E1", LedgerKind::Action);
    assert_eq!(step.len(), 1, "{:?}", sim.ledger());
    assert!(
        step[0].reason.contains("GUARD-L4") && step[0].reason.contains("3 pokes"),
        "{}",
        step[0].reason
    );
    assert_eq!(pokes, 3, "three pokes brought nothing before the rail spoke");
}

#[test]
fn guard_l1_a_failing_loop_stays_the_loop_guards() {
    let mut sim = Sim::new();
    sim.user_types().agent_start();
    for i in 0..6 {
        sim.event(Event::ToolStart {
            id: format!("f{i}"),
            name: "bash".into(),
            args_preview: "make".into(),
            args: json!({"command": "make"}),
        });
        sim.event(Event::ToolEnd {
            id: format!("f{i}"),
            outcome: ToolOutcome {
                is_error: true,
                duration_ms: Some(100),
                result_digest: Some("error: no rule".into()),
            },
        });
    }
    assert!(
        sim.sent_of("guard-rail").is_empty(),
        "SAR-L4 nudges about failures"
    );
}

#[test]
fn guard_e1_typing_puts_the_ladder_back_at_its_foot() {
    let mut sim = Sim::new();
    sim.user_types().agent_start();
    loop_of_five(&mut sim, 1);
    assert_eq!(sim.view().guard.ladder, 1);
    sim.user_types();
    assert_eq!(sim.view().guard.ladder, 0);
    sim.advance(10);
    loop_of_five(&mut sim, 2);
    assert!(sim.compactions().is_empty(), "a message again, not a handoff");
    assert_eq!(sim.sent_of("guard-rail").len(), 2);
}
