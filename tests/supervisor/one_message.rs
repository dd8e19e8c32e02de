//! ARB-ONE (docs/supervision.md, "Arbitration"): at most one message goes to the agent per settle,
//! whatever its kind (a resume, a loop nudge, a wakeup); a manual poke the user asked for may add one,
//! never two. Whatever unblocks several of them together (supervision switched on, a compaction ending,
//! the bridge coming back) still sends one.

use pokeshell_core::supervisor::{CompactReason, Event, Message, StopReason, texts};
use serde_json::json;

use super::sim::{Sim, thinking_only};

/// Cooldowns at 0 so only the one-message rule can keep a second message back.
fn sim() -> Sim {
    Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.poke.post_compact_cooldown_seconds = 0;
    })
}

fn schedule_wakeup(sim: &mut Sim, delay_s: u64) {
    let args = json!({ "delay_seconds": delay_s, "prompt": "check the build" });
    sim.tool_call("w1", "schedule_wakeup", args);
}

/// A run that died in error while one of its tools keeps running, then settled: an orphan to be.
fn orphaned_tool(sim: &mut Sim) {
    sim.agent_start()
        .tool_start("t1", "bash")
        .agent_end(StopReason::Error);
    sim.settle();
}

#[test]
fn arb_one_switching_supervision_on_sends_one_message_for_a_due_wakeup_and_an_orphan() {
    let mut sim = sim();
    schedule_wakeup(&mut sim, 60);
    sim.set_config(|config| config.poke.enabled = false);
    orphaned_tool(&mut sim);
    sim.run_for(120);
    assert!(sim.sent().is_empty(), "nothing while off");
    let mark = sim.mark();
    sim.set_config(|config| config.poke.enabled = true);
    let sent = sim.sent_since(mark);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].custom_type, texts::CT_WAKEUP, "the wakeup fires first");
    // The orphan poke waits for the settle of the wakeup's run and, with no new failure, stays quiet.
    sim.run_for(60);
    assert_eq!(sim.sent_since(mark).len(), 1);
}

#[test]
fn arb_one_a_compaction_ending_releases_a_wakeup_and_a_held_manual_poke_but_no_orphan() {
    let mut sim = sim();
    schedule_wakeup(&mut sim, 60);
    orphaned_tool(&mut sim);
    sim.event(Event::CompactStart {
        reason: CompactReason::Manual,
        will_retry: false,
    });
    sim.manual_poke();
    sim.run_for(120);
    assert!(sim.sent().is_empty(), "everything waits for the compaction");
    sim.event(Event::Compact {
        reason: CompactReason::Manual,
        will_retry: false,
        tokens_before: None,
    });
    sim.run_for(1);
    let sent = sim.sent();
    let kinds: Vec<&str> = sent.iter().map(|sent| sent.custom_type).collect();
    assert_eq!(sent.len(), 2, "the wakeup, and the poke you asked for: {kinds:?}");
    assert_eq!(sim.auto_pokes(), 0, "no orphan poke on top");
    assert_eq!(sim.sent_of(texts::CT_WAKEUP).len(), 1);
    assert!(sent.iter().any(|sent| sent.text == texts::manual_poke()));
}

#[test]
fn arb_one_the_bridge_coming_back_sends_one_of_two_due_wakeups_and_the_other_after_the_next_settle() {
    let mut sim = sim();
    schedule_wakeup(&mut sim, 60);
    sim.tool_call(
        "w2",
        "schedule_wakeup",
        json!({ "delay_seconds": 90, "prompt": "check the deploy" }),
    );
    sim.event(Event::BridgeDisconnected {
        reason: "gone".into(),
    });
    sim.run_for(120);
    assert!(sim.sent().is_empty(), "held while the bridge is away");
    sim.event(Event::BridgeConnected).run_for(1);
    let sent = sim.sent_of(texts::CT_WAKEUP);
    assert_eq!(sent.len(), 1, "one message per settle");
    assert!(
        sent[0].text.contains("check the build"),
        "the first due goes first"
    );
    let held = sim.view().wakeups;
    assert_eq!(held.len(), 1);
    assert!(held[0].held.is_some(), "the side pane says why it waits");
    sim.agent_start().agent_end(StopReason::Stop).settle().run_for(1);
    let sent = sim.sent_of(texts::CT_WAKEUP);
    assert_eq!(sent.len(), 2);
    assert!(sent[1].text.contains("check the deploy"));
}

#[test]
fn arb_one_a_parked_resume_does_not_follow_a_wakeup_of_the_same_settle() {
    // The retry waits for the shared cooldown; the wakeup falls due first and replaces it (X4).
    let mut sim = Sim::configured(|config| config.global_cooldown_seconds = 30);
    schedule_wakeup(&mut sim, 60);
    sim.run_for(40);
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert_eq!(sim.sent_of(texts::CT_RETRY).len(), 1);
    sim.run_for(15);
    let mark = sim.mark();
    sim.settle_with(vec![Message::user("go"), thinking_only()]);
    assert!(
        sim.view().pending_resume.is_some(),
        "the second retry waits for the cooldown"
    );
    sim.run_for(30);
    let sent = sim.sent_since(mark);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].custom_type, texts::CT_WAKEUP);
}

#[test]
fn arb_one_a_manual_poke_after_the_compaction_replaces_the_one_held_during_it() {
    let mut sim = sim();
    sim.event(Event::CompactStart {
        reason: CompactReason::Manual,
        will_retry: false,
    });
    sim.manual_poke();
    sim.event(Event::Compact {
        reason: CompactReason::Manual,
        will_retry: false,
        tokens_before: None,
    });
    // You press prefix+p again before the held poke went out: one poke, not two.
    sim.manual_poke().run_for(5);
    assert_eq!(sim.sent().len(), 1, "{:?}", sim.sent());
    assert!(!sim.view().manual_poke_held);
}
