//! The settle arbiter (docs/supervision.md, "Arbitration"): each conflict X1–X7 between the original
//! extensions, the priority order, the shared cooldown, and losers keeping their counters.

use pokeshell_core::supervisor::{Event, InputSource, LedgerKind, Message, StopReason, WakePhase};
use serde_json::json;

use super::sim::{Settled, Sim, call_and_result, thinking_only};

fn bash_fail(id: &str) -> Vec<Message> {
    call_and_result(id, "bash", json!({"command": "make test"}), true)
}

/// The run died after an automatic compaction: the wake is armed.
fn armed(sim: &mut Sim) {
    sim.agent_start().agent_end(StopReason::Error).compact(false);
    assert_eq!(sim.view().wake.map(|wake| wake.phase), Some(WakePhase::Armed));
}

#[test]
fn arb_x1_successful_tool_result_tail_with_armed_wake_sends_only_the_poke() {
    let mut sim = Sim::new();
    armed(&mut sim);
    let mut tail = vec![Message::user("go")];
    tail.extend(call_and_result("c1", "bash", json!({"command": "ls"}), false));
    sim.settle_with(tail);
    let sent = sim.sent();
    assert_eq!(sent.len(), 1, "one resume per settle");
    assert_eq!(
        sent[0].custom_type, "poke",
        "the wake outranks the empty-reply retry"
    );
    assert_eq!(
        sim.view().counters.retries,
        0,
        "the pre-empted retry consumed nothing"
    );
    let declined = sim.records("SAR-S8", LedgerKind::Declined);
    assert!(
        declined[0].reason.contains("pre-empted by POKE-W4"),
        "{}",
        declined[0].reason
    );
}

#[test]
fn arb_x1_failing_tool_result_tail_with_armed_wake_is_the_loop_guards() {
    let mut sim = Sim::new();
    armed(&mut sim);
    let tail = [vec![Message::user("go")], bash_fail("c1")].concat();
    sim.settle_with(tail);
    let sent = sim.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].custom_type, "stalled-agent-recovery-loop");
    assert_eq!(sim.pokes_in_episode(), 0, "the wake consumed nothing");
    assert_eq!(
        sim.view().wake.map(|wake| wake.phase),
        Some(WakePhase::Armed),
        "the wake waits to judge the next run"
    );
    // The loop guard's run goes well: the wake clears without a poke.
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Stop)
        .settle();
    assert!(sim.view().wake.is_none());
    assert_eq!(sim.sent().len(), 1);
}

#[test]
fn arb_x2_pokeshells_own_messages_neither_reset_budgets_nor_break_loop_counts() {
    let mut sim = Sim::configured(|config| config.global_cooldown_seconds = 0);
    let mut branch = vec![Message::user("go")];
    branch.extend(bash_fail("c1"));
    branch.extend(bash_fail("c2"));
    branch.push(Message::custom("poke", "[Poke] carry on"));
    branch.extend(bash_fail("c3"));
    sim.settle_with(branch);
    assert!(
        sim.sent()[0].text.contains("failed 3 times"),
        "{}",
        sim.sent()[0].text
    );
    // pi-poke's pokes came back as extension input: no effect any more.
    armed(&mut sim);
    sim.input(InputSource::Extension);
    assert!(sim.view().wake.is_some());
}

#[test]
fn arb_x3_no_handoff_on_a_settle_that_resumed() {
    let mut sim = Sim::new();
    sim.settle_as(Settled {
        percent: Some(95.0),
        tail: vec![Message::user("go"), thinking_only()],
        ..Settled::default()
    });
    assert_eq!(sim.sent_of("stalled-agent-recovery-retry").len(), 1);
    assert!(
        sim.compactions().is_empty(),
        "the handoff waits for a settle where nothing else acted"
    );
}

#[test]
fn arb_x3_messages_wait_while_the_handoff_compaction_runs() {
    let mut sim = Sim::configured(|config| config.wakeup_min_seconds = 1);
    sim.settle_at_percent(Some(95.0));
    assert_eq!(sim.compactions().len(), 1);
    sim.tool_call(
        "c1",
        "schedule_wakeup",
        json!({"delay_seconds": 2, "prompt": "check"}),
    );
    sim.manual_poke().run_for(30);
    assert!(
        sim.sent().is_empty(),
        "nothing may start a run during the handoff compaction"
    );
    sim.event(Event::CompactResult { error: None }).run_for(1);
    assert_eq!(sim.sent_of("wakeup").len(), 1);
    assert_eq!(sim.sent_of("poke").len(), 1);
}

#[test]
fn arb_x4_a_wakeup_supersedes_a_parked_poke_and_its_run_is_judged() {
    let mut sim = Sim::new();
    armed(&mut sim);
    sim.settle(); // poke #1
    sim.tool_call(
        "c1",
        "schedule_wakeup",
        json!({"delay_seconds": 60, "prompt": "check CI"}),
    );
    sim.advance(5).turn_start().agent_end(StopReason::Error).settle();
    let due = sim
        .view()
        .pending_resume
        .expect("poke #2 parked by the cooldown")
        .due_in_ms;
    assert_eq!(due, 25_000);
    // The parked poke comes due at +30 s, the wakeup at +60 s; one tick at +60 s sees both.
    sim.advance(55).tick();
    assert_eq!(sim.sent_of("wakeup").len(), 1);
    assert_eq!(sim.auto_pokes(), 1, "the parked poke was superseded");
    assert!(
        sim.ledger()
            .iter()
            .any(|record| record.reason.contains("a wakeup restarted the agent"))
    );
    // The wake judges the wakeup's run.
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Error)
        .settle();
    assert_eq!(sim.auto_pokes(), 2, "the wakeup's run failed too: poke #2");
}

#[test]
fn arb_x5_aborted_settle_resets_recovery_and_drops_the_wake() {
    let mut sim = Sim::configured(|config| config.global_cooldown_seconds = 0);
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.view().counters.retries, 1);
    armed(&mut sim);
    sim.settle_aborted();
    assert_eq!(sim.view().counters.retries, 0, "SAR-S2");
    assert!(sim.view().wake.is_none(), "B5");
    assert_eq!(sim.sent().len(), 1, "nothing after the abort");
    // Still nothing until the user types, whatever the next settle looks like.
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent().len(), 1);
    assert!(sim.view().stopped_by.is_some());
    sim.user_types()
        .settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent().len(), 2);
}

#[test]
fn arb_x6_loop_give_up_silences_every_other_resume_on_that_settle() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.recovery.loop_threshold = 1;
        config.recovery.max_loop_nudges = 1;
    });
    let mut branch = vec![Message::user("go")];
    branch.extend(bash_fail("c1"));
    sim.settle_with(branch.clone());
    assert!(
        sim.sent()[0].text.contains("Stop calling"),
        "final nudge at once: {}",
        sim.sent()[0].text
    );
    // The next failure gives up, on a settle where a compaction also left an armed wake and a tool orphan.
    sim.agent_start()
        .tool_start("t1", "bash")
        .advance(31)
        .agent_end(StopReason::Error)
        .compact(false);
    branch.extend(bash_fail("c2"));
    sim.settle_with(branch);
    assert_eq!(
        sim.sent().len(),
        1,
        "no poke contradicts the stop-and-report instruction"
    );
    assert!(
        sim.view().wake.is_none(),
        "the wake's poke was refused as pre-empted by the give-up"
    );
    sim.run_for(120);
    assert_eq!(
        sim.sent().len(),
        1,
        "the orphan poke stays quiet after a claimed settle"
    );
}

#[test]
fn arb_x7_reset_scopes() {
    let mut sim = Sim::configured(|config| config.global_cooldown_seconds = 0);
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    sim.tool_call(
        "c1",
        "schedule_wakeup",
        json!({"delay_seconds": 600, "prompt": "x"}),
    );
    armed(&mut sim);
    sim.event(Event::SessionTree);
    assert!(sim.view().wake.is_none(), "/tree resets pi-poke");
    assert_eq!(sim.view().counters.retries, 1, "/tree keeps the recovery budget");
    assert_eq!(sim.view().wakeups.len(), 1, "/tree keeps wakeups");
    sim.session("s1");
    assert_eq!(
        sim.view().counters.retries,
        0,
        "session start resets the recovery budget of that session"
    );
    assert!(
        sim.view().wakeups.is_empty(),
        "session start rebuilds wakeups from entries (none given)"
    );
    sim.tool_call(
        "c2",
        "schedule_wakeup",
        json!({"delay_seconds": 600, "prompt": "x"}),
    );
    sim.agent_start()
        .tool_start("t1", "bash")
        .event(Event::SessionShutdown);
    assert!(
        sim.view().wakeups.is_empty() && sim.view().tools.is_empty(),
        "shutdown clears timers and tools"
    );
}

#[test]
fn arb_shared_cooldown_parks_a_retry_after_a_poke() {
    let mut sim = Sim::configured(|config| config.global_cooldown_seconds = 30);
    armed(&mut sim);
    sim.settle();
    assert_eq!(sim.auto_pokes(), 1);
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Stop)
        .advance(10);
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert!(
        sim.sent_of("stalled-agent-recovery-retry").is_empty(),
        "within 30 s of the poke"
    );
    let declined = sim.records("SAR-S8", LedgerKind::Declined);
    assert!(declined[0].reason.contains("waits 20s"), "{}", declined[0].reason);
    assert_eq!(sim.view().counters.retries, 0, "nothing consumed while parked");
    sim.run_for(19);
    assert!(sim.sent_of("stalled-agent-recovery-retry").is_empty());
    sim.run_for(1);
    assert_eq!(sim.sent_of("stalled-agent-recovery-retry").len(), 1);
    assert_eq!(sim.view().counters.retries, 1);
}

#[test]
fn arb_a_new_run_or_the_user_drops_a_parked_resume() {
    let mut sim = Sim::new();
    armed(&mut sim);
    sim.settle();
    sim.agent_start().turn_start().agent_end(StopReason::Stop);
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert!(sim.view().pending_resume.is_some());
    sim.agent_start();
    assert!(
        sim.view().pending_resume.is_none(),
        "a run started by someone else supersedes it"
    );
    sim.agent_end(StopReason::Stop)
        .settle_with(vec![Message::user("go"), thinking_only()]);
    assert!(sim.view().pending_resume.is_some());
    sim.user_types().run_for(60);
    assert!(sim.sent_of("stalled-agent-recovery-retry").is_empty());
}

#[test]
fn arb_priority_loop_over_wake_over_retry_and_orphan_last() {
    // Wake over retry (thinking-only tail).
    let mut sim = Sim::new();
    armed(&mut sim);
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent()[0].custom_type, "poke");
    // Retry over orphan: the settle's retry claims it, the orphan waits for a later settle.
    let mut sim = Sim::new();
    sim.agent_start()
        .tool_start("t1", "bash")
        .advance(31)
        .agent_end(StopReason::Error);
    sim.settle_with(vec![Message::user("go"), thinking_only()])
        .run_for(120);
    let kinds: Vec<&str> = sim.sent().iter().map(|sent| sent.custom_type).collect();
    assert_eq!(kinds, vec!["stalled-agent-recovery-retry"]);
}

#[test]
fn arb_disabled_settle_does_nothing_but_says_why() {
    let mut sim = Sim::configured(|config| config.poke.enabled = false);
    sim.agent_start().agent_end(StopReason::Error).compact(false);
    assert!(sim.view().wake.is_none());
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    sim.settle_at_percent(Some(99.0));
    assert!(sim.sent().is_empty() && sim.compactions().is_empty());
    let off: Vec<_> = sim
        .ledger()
        .into_iter()
        .filter(|record| record.reason.contains("supervision is off"))
        .collect();
    let rules: Vec<&str> = off.iter().map(|record| record.rule).collect();
    assert_eq!(rules, vec!["POKE-W1", "SAR-S8", "HO-T1"], "{off:?}");
}

#[test]
fn arb_x6_final_nudge_drops_the_wake() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.recovery.loop_threshold = 1;
        config.recovery.max_loop_nudges = 1;
    });
    armed(&mut sim);
    let tail = [vec![Message::user("go")], bash_fail("c1")].concat();
    sim.settle_with(tail);
    assert!(sim.sent()[0].text.contains("Stop calling"));
    assert!(sim.view().wake.is_none());
    // The stop-and-report run fails: no "resume the work" poke contradicts the instruction.
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Error)
        .settle();
    assert_eq!(sim.sent().len(), 1);
}
