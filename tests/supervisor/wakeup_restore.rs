//! pi-wakeup beyond the original extension [WAK-T5]: wakeups re-armed from the session's entries, held
//! during a compaction and while supervision is off, shown in the side pane, and cancelled by the user.

use pokeshell_core::supervisor::{CompactReason, CustomEntry, DeliverAs, Event, LedgerKind, NotifyLevel};
use serde_json::{Value, json};

use super::sim::{START_MONO, START_WALL, Sim};
use super::wakeup::{schedule, wakeups_sent};

fn scheduled_entry(id: &str, fire_at: u64, prompt: &str) -> CustomEntry {
    CustomEntry {
        custom_type: "pokeshell-wakeup-scheduled".into(),
        data: json!({"id": id, "delaySeconds": 60, "reason": "r", "fireAtMs": fire_at, "prompt": prompt}),
    }
}

fn entry(custom_type: &str, data: Value) -> CustomEntry {
    CustomEntry {
        custom_type: custom_type.into(),
        data,
    }
}

#[test]
fn wak_t5_pending_wakeups_are_re_armed_at_session_start() {
    let mut sim = Sim::new();
    sim.session_with(
        "resumed",
        vec![
            scheduled_entry("wake-1", START_WALL + 90_000, "later"),
            scheduled_entry("wake-2", START_WALL + 30_000, "fired already"),
            entry("pokeshell-wakeup-fired", json!({"id": "wake-2"})),
            scheduled_entry("wake-3", START_WALL + 40_000, "cancelled"),
            entry("pokeshell-wakeup-cancelled", json!({"id": "wake-3"})),
            scheduled_entry("wake-4", START_WALL + 50_000, "failed"),
            entry("pokeshell-wakeup-failed", json!({"id": "wake-4", "error": "x"})),
        ],
    );
    let view = sim.view();
    assert_eq!(view.wakeups.len(), 1);
    assert_eq!(view.wakeups[0].id, "wake-1");
    assert_eq!(
        view.wakeups[0].remaining_ms, 90_000,
        "the persisted wall-clock time is kept"
    );
    assert_eq!(sim.records("WAK-T5", LedgerKind::Action).len(), 1);
    sim.run_for(90);
    assert_eq!(wakeups_sent(&sim).len(), 1);
    assert!(wakeups_sent(&sim)[0].text.starts_with("later"));
    // New ids continue after the restored ones.
    assert!(schedule(&mut sim, "c1", json!(60), "x", None).contains("wake-5"));
}

#[test]
fn wak_t5_a_wakeup_due_while_nothing_ran_fires_once_right_after_start() {
    let mut sim = Sim::new();
    sim.session_with(
        "resumed",
        vec![scheduled_entry("wake-7", START_WALL - 600_000, "missed")],
    );
    assert_eq!(sim.sup.next_deadline(), Some(START_MONO), "due now");
    sim.tick();
    let sent = wakeups_sent(&sim);
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].deliver_as,
        DeliverAs::Steer,
        "pi is idle at session start"
    );
    let fired = sim.records("WAK-T3", LedgerKind::Action);
    assert!(fired[0].reason.contains("late"), "{}", fired[0].reason);
    sim.run_for(3600);
    assert_eq!(wakeups_sent(&sim).len(), 1, "once");
}

#[test]
fn wak_t5_cancel_all_entry_removes_everything_before_it() {
    let mut sim = Sim::new();
    sim.session_with(
        "resumed",
        vec![
            scheduled_entry("wake-1", START_WALL + 90_000, "a"),
            scheduled_entry("wake-2", START_WALL + 90_000, "b"),
            entry("pokeshell-wakeup-cancelled", json!({"all": true, "count": 2})),
            scheduled_entry("wake-3", START_WALL + 90_000, "c"),
        ],
    );
    let ids: Vec<String> = sim.view().wakeups.into_iter().map(|wakeup| wakeup.id).collect();
    assert_eq!(ids, vec!["wake-3"]);
}

#[test]
fn wak_t5_entries_that_cannot_be_re_armed_are_skipped_and_recorded() {
    let mut sim = Sim::new();
    sim.session_with(
        "resumed",
        vec![
            // Written by the original pi-wakeup: no prompt stored.
            entry(
                "pokeshell-wakeup-scheduled",
                json!({"id": "wake-1", "delaySeconds": 60, "reason": "", "fireAtMs": 1}),
            ),
            entry("pokeshell-wakeup-scheduled", json!("garbage")),
            scheduled_entry("wake-2", START_WALL + 1000, "ok"),
        ],
    );
    assert_eq!(sim.view().wakeups.len(), 1);
    assert_eq!(sim.records("WAK-T5", LedgerKind::Declined).len(), 2);
}

#[test]
fn wak_hold_wakeups_while_a_compaction_runs() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(60), "x", None);
    sim.event(Event::CompactStart {
        reason: CompactReason::Manual,
        will_retry: false,
    })
    .run_for(120);
    assert!(wakeups_sent(&sim).is_empty(), "held");
    assert_eq!(sim.view().wakeups[0].held, Some("a compaction is running"));
    sim.event(Event::Compact {
        reason: CompactReason::Manual,
        will_retry: false,
        tokens_before: None,
    })
    .run_for(1);
    assert_eq!(wakeups_sent(&sim).len(), 1);
}

#[test]
fn wak_supervision_off_refuses_new_wakeups_and_holds_pending_ones() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(60), "x", None);
    sim.set_config(|config| config.poke.enabled = false);
    sim.tool_call(
        "c2",
        "schedule_wakeup",
        json!({"delay_seconds": 60, "prompt": "y"}),
    );
    let (_, text, is_error, _) = sim.replies().pop().expect("reply");
    assert!(is_error && text.contains("switched off"), "{text}");
    sim.run_for(120);
    assert!(wakeups_sent(&sim).is_empty());
    sim.set_config(|config| config.poke.enabled = true);
    assert_eq!(wakeups_sent(&sim).len(), 1, "fires once supervision is back on");
}

#[test]
fn wak_empty_prompt_is_refused() {
    let mut sim = Sim::new();
    sim.tool_call("c1", "schedule_wakeup", json!({"delay_seconds": 60}));
    let (call_id, text, is_error, _) = sim.replies().pop().expect("reply");
    assert_eq!(call_id, "c1");
    assert!(is_error && text.contains("prompt"), "{text}");
    assert!(sim.entries("pokeshell-wakeup-scheduled").is_empty());
}

#[test]
fn wak_the_side_pane_sees_pending_wakeups_with_a_countdown() {
    let mut sim = Sim::new();
    schedule(&mut sim, "c1", json!(300), "late", Some("second"));
    schedule(&mut sim, "c2", json!(120), "soon", Some("first"));
    sim.advance(20);
    let view = sim.view();
    let listed: Vec<(&str, u64)> = view
        .wakeups
        .iter()
        .map(|wakeup| (wakeup.reason.as_str(), wakeup.remaining_ms))
        .collect();
    assert_eq!(listed, vec![("first", 100_000), ("second", 280_000)]);
}

#[test]
fn wak_t2_the_user_cancels_a_wakeup_by_id_as_the_tool_would() {
    let mut sim = Sim::new();
    super::wakeup::schedule(&mut sim, "c1", json!(120), "check the build", None);
    let replies_before = sim.replies().len();
    sim.event(Event::CancelWakeup { id: "wake-1".into() });
    assert!(sim.view().wakeups.is_empty());
    assert_eq!(
        sim.entries("pokeshell-wakeup-cancelled"),
        vec![json!({"id": "wake-1"})]
    );
    let records = sim.records("WAK-T2", LedgerKind::Action);
    assert!(
        records[0].reason.contains("you cancelled wakeup wake-1"),
        "{records:?}"
    );
    assert_eq!(
        sim.replies().len(),
        replies_before,
        "no tool reply: no tool call waits"
    );
    let (level, text, desktop) = sim.notifications().pop().expect("a notice");
    assert_eq!(
        (level, text.as_str(), desktop),
        (NotifyLevel::Info, "Wakeup wake-1 cancelled.", false)
    );

    sim.event(Event::CancelWakeup { id: "wake-1".into() });
    let (level, text, _) = sim.notifications().pop().expect("a notice");
    assert_eq!(level, NotifyLevel::Warning);
    assert!(text.contains("no pending wakeup wake-1"), "{text}");
    assert_eq!(
        sim.entries("pokeshell-wakeup-cancelled").len(),
        1,
        "nothing to write"
    );
    sim.run_for(200);
    assert!(super::wakeup::wakeups_sent(&sim).is_empty(), "it never fires");
}

/// ARB-ABORT across a server restart (simulation seed 1272): the user's Esc is written in pi's
/// session, and a supervisor that starts the session anew (the server brought it back) holds its
/// wakeups until the user types, which lifts the stop in the session too.
#[test]
fn arb_abort_the_users_stop_is_kept_in_the_session_and_holds_its_wakeups_after_a_restart() {
    let mut before = Sim::new();
    before
        .agent_start()
        .agent_end(pokeshell_core::supervisor::StopReason::Aborted)
        .settle_aborted();
    assert_eq!(
        before.entries("pokeshell-stopped").len(),
        1,
        "the stop is written"
    );
    let mut sim = Sim::new();
    sim.session_with(
        "brought back",
        vec![
            scheduled_entry("wake-1", START_WALL - 60_000, "missed"),
            entry("pokeshell-stopped", json!({"by": "user"})),
        ],
    );
    sim.run_for(600);
    assert!(wakeups_sent(&sim).is_empty(), "held by the stop");
    assert_eq!(sim.records("ARB-ABORT", LedgerKind::Declined).len(), 1);
    sim.user_types();
    assert_eq!(
        sim.entries("pokeshell-stop-lifted").len(),
        1,
        "the stop ends in the session too"
    );
    sim.settle().run_for(5);
    assert_eq!(
        wakeups_sent(&sim).len(),
        1,
        "once the user typed, the wakeup goes"
    );
}

/// The twin: a stop the user lifted before the restart holds nothing.
#[test]
fn arb_abort_twin_a_lifted_stop_holds_nothing_after_a_restart() {
    let mut sim = Sim::new();
    sim.session_with(
        "brought back",
        vec![
            entry("pokeshell-stopped", json!({"by": "user"})),
            scheduled_entry("wake-1", START_WALL - 60_000, "missed"),
            entry("pokeshell-stop-lifted", json!({})),
        ],
    );
    sim.run_for(5);
    assert_eq!(wakeups_sent(&sim).len(), 1);
    assert!(sim.records("ARB-ABORT", LedgerKind::Declined).is_empty());
}
