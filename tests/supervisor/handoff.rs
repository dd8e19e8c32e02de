//! pi-auto-handoff's trigger [HO-T1, HO-T2]: the supervisor's side of the handoff (the document itself
//! is the bridge's job) and its gating (docs/supervision.md, "Handoff when the context fills up" and
//! "Arbitration").

use pokeshell_core::supervisor::{CompactReason, Event, LedgerKind, Message, StopReason};
use serde_json::json;

use super::sim::{Settled, Sim, thinking_only};

#[test]
fn ho_4_5_01_t1_below_the_percent_no_compaction() {
    let mut sim = Sim::new();
    sim.settle_at_percent(Some(79.0));
    assert!(sim.compactions().is_empty());
}

#[test]
fn ho_4_5_02_t1_at_the_percent_one_handoff_compaction() {
    let mut sim = Sim::new();
    sim.settle_at_percent(Some(80.0));
    assert_eq!(sim.compactions(), vec![(None, true)]);
    assert!(sim.view().handoff_in_flight);
    assert!(
        sim.notifications()
            .iter()
            .any(|(_, text, desktop)| *desktop && text.contains("80%"))
    );
    assert_eq!(sim.records("HO-T1", LedgerKind::Action).len(), 1);
    // The compaction ends (pi reports `ctx.compact()` as manual); usage is unknown afterwards.
    sim.event(Event::Compact {
        reason: CompactReason::Manual,
        will_retry: false,
        tokens_before: Some(80_000),
    });
    sim.event(Event::CompactResult { error: None });
    assert!(!sim.view().handoff_in_flight);
    assert!(
        sim.view().wake.is_none(),
        "pokeshell's own compaction never arms a wake"
    );
    sim.settle_at_percent(None);
    assert_eq!(
        sim.compactions().len(),
        1,
        "HO 4.5-10: percent unknown after compaction: no new trigger"
    );
}

#[test]
fn ho_4_5_03_t2_disabled_trigger_but_manual_handoff_works() {
    let mut sim = Sim::configured(|config| config.handoff.enabled = false);
    sim.settle_at_percent(Some(95.0));
    assert!(sim.compactions().is_empty());
    assert!(
        sim.records("HO-T1", LedgerKind::Declined)[0]
            .reason
            .contains("off")
    );
    sim.event(Event::ManualHandoff {
        focus: Some("the parser rewrite".into()),
    });
    assert_eq!(
        sim.compactions(),
        vec![(Some("the parser rewrite".to_string()), true)]
    );

    let mut master_off = Sim::configured(|config| config.poke.enabled = false);
    master_off.settle_at_percent(Some(95.0));
    master_off.event(Event::ManualHandoff { focus: None });
    assert_eq!(
        master_off.compactions(),
        vec![(None, true)],
        "only the manual one"
    );
}

#[test]
fn ho_4_5_08_g7_save_flag_is_passed_to_the_bridge() {
    let mut sim = Sim::configured(|config| config.handoff.save = false);
    sim.settle_at_percent(Some(90.0));
    assert_eq!(sim.compactions(), vec![(None, false)]);
}

#[test]
fn ho_4_5_10_t1_unknown_percent_never_triggers() {
    let mut sim = Sim::new();
    sim.settle_at_percent(None);
    sim.settle();
    assert!(sim.compactions().is_empty());
}

#[test]
fn ho_t1_not_after_an_aborted_settle() {
    let mut sim = Sim::new();
    let tail = vec![
        Message::user("go"),
        Message::assistant(StopReason::Aborted, vec![]),
    ];
    sim.settle_as(Settled {
        aborted: true,
        percent: Some(90.0),
        tail,
        ..Settled::default()
    });
    assert!(sim.compactions().is_empty());
}

#[test]
fn ho_t1_not_while_pi_is_busy_or_a_compaction_or_handoff_runs() {
    let mut sim = Sim::new();
    sim.settle_as(Settled {
        is_idle: false,
        percent: Some(90.0),
        ..Settled::default()
    });
    assert!(sim.compactions().is_empty(), "busy");
    sim.settle_at_percent(Some(90.0));
    assert_eq!(sim.compactions().len(), 1);
    sim.settle_at_percent(Some(91.0));
    assert_eq!(sim.compactions().len(), 1, "one already in flight");
    sim.event(Event::ManualHandoff { focus: None });
    assert_eq!(sim.compactions().len(), 1, "the manual one is refused too");
    assert!(
        sim.notifications()
            .iter()
            .any(|(_, text, _)| text.contains("already running"))
    );
}

#[test]
fn ho_t1_not_when_a_wakeup_is_about_to_fire() {
    let mut sim = Sim::configured(|config| config.wakeup_min_seconds = 1);
    sim.tool_call(
        "c1",
        "schedule_wakeup",
        json!({"delay_seconds": 5, "prompt": "x"}),
    );
    sim.settle_at_percent(Some(90.0));
    assert!(sim.compactions().is_empty());
    assert!(
        sim.records("HO-T1", LedgerKind::Declined)[0]
            .reason
            .contains("wakeup")
    );
}

#[test]
fn ho_failed_handoff_is_reported_and_clears_the_flight() {
    let mut sim = Sim::new();
    sim.settle_at_percent(Some(90.0));
    sim.event(Event::CompactResult {
        error: Some("Nothing to compact".into()),
    });
    assert!(!sim.view().handoff_in_flight);
    assert!(
        sim.notifications()
            .iter()
            .any(|(_, text, _)| text.contains("Nothing to compact"))
    );
    sim.settle_at_percent(Some(90.0));
    assert_eq!(sim.compactions().len(), 2, "the next settle may try again");
}

#[test]
fn ho_t2_manual_handoff_of_a_busy_agent_is_not_the_users_abort() {
    let mut sim = Sim::new();
    sim.agent_start().event(Event::ManualHandoff { focus: None });
    // ctx.compact() aborts the run first.
    sim.agent_end(StopReason::Aborted).settle_aborted();
    let records = sim.records("ARB-ABORT", LedgerKind::Declined);
    assert!(records[0].reason.contains("handoff"), "{}", records[0].reason);
}

#[test]
fn ho_only_on_a_settle_where_nothing_else_acted() {
    // Covered with the retry in arbiter::x3; here with an armed wake that pokes.
    let mut sim = Sim::new();
    sim.agent_start().agent_end(StopReason::Error).compact(false);
    sim.settle_as(Settled {
        percent: Some(95.0),
        tail: vec![Message::user("go"), thinking_only()],
        ..Settled::default()
    });
    assert_eq!(sim.auto_pokes(), 1);
    assert!(sim.compactions().is_empty());
}

#[test]
fn ho_t2_a_handoff_the_model_aborts_ends_the_flight_and_resumes_nothing() {
    let mut sim = Sim::new();
    sim.event(Event::ManualHandoff { focus: None });
    assert!(sim.view().handoff_in_flight);
    sim.event(Event::CompactStart {
        reason: CompactReason::Manual,
        will_retry: false,
    });
    sim.event(Event::CompactFailed {
        reason: CompactReason::Manual,
        aborted: true,
        will_retry: false,
        error_message: None,
    });
    let view = sim.view();
    assert!(!view.handoff_in_flight && view.wake.is_none());
    let outcomes = sim.records("HO-T1", LedgerKind::Outcome);
    assert_eq!(outcomes.len(), 1);
    assert!(outcomes[0].reason.contains("failed"), "{}", outcomes[0].reason);
    // The command's own reply comes after the event: no second record.
    sim.event(Event::CompactResult {
        error: Some("aborted".into()),
    });
    sim.run_for(120);
    assert_eq!(sim.records("HO-T1", LedgerKind::Outcome).len(), 1);
    assert!(sim.sent().is_empty(), "nothing resumes after the handoff");
}

#[test]
fn ho_t1_an_empty_handoff_document_leaves_pi_s_own_summary_and_resumes_nothing() {
    // The bridge falls back to pi's plain summary when the model returns an empty document: the
    // compaction still ends normally.
    let mut sim = Sim::new();
    sim.settle_at_percent(Some(90.0));
    assert_eq!(sim.compactions().len(), 1);
    sim.event(Event::CompactStart {
        reason: CompactReason::Manual,
        will_retry: false,
    });
    sim.event(Event::Compact {
        reason: CompactReason::Manual,
        will_retry: false,
        tokens_before: Some(90_000),
    });
    sim.event(Event::CompactResult { error: None });
    let outcomes = sim.records("HO-T1", LedgerKind::Outcome);
    assert_eq!(outcomes.len(), 1);
    assert!(outcomes[0].reason.contains("finished"), "{}", outcomes[0].reason);
    assert!(sim.view().wake.is_none(), "a handoff arms no wake");
    // After a compaction pi does not know the context use: the next settle does not hand off again.
    sim.settle_at_percent(None).run_for(120);
    assert_eq!(sim.compactions().len(), 1);
    assert!(sim.sent().is_empty());
}
