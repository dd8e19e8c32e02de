//! pi-poke beyond the simulator: the monitor [POKE-M2, POKE-M3], the orphan conditions [POKE-O1], the
//! manual poke [POKE-P1] and the footer (docs/supervision.md, "Long tool calls").

use pokeshell_core::supervisor::{DeliverAs, Event, FooterSuffix, LedgerKind, NotifyLevel, StopReason};

use super::sim::{START_MONO, Sim};

#[test]
fn poke_m2_tool_past_threshold_is_watched_silently() {
    let mut sim = Sim::new();
    sim.agent_start().tool_start("t1", "bash");
    assert_eq!(sim.footer(), "📌 p:on ⏳ bash");
    assert_eq!(
        sim.sup.next_deadline(),
        Some(START_MONO + 30_000),
        "the monitor wakes at the threshold"
    );
    sim.run_for(45);
    assert_eq!(sim.footer(), "📌 p:on ⚠️ bash 45s");
    assert!(sim.notifications().is_empty(), "silent watch: no notification");
    assert!(sim.sent().is_empty() && sim.aborts() == 0);
    assert_eq!(
        sim.records("POKE-M2", LedgerKind::Declined).len(),
        1,
        "the ledger says why nothing happened"
    );
    sim.tool_end("t1");
    assert_eq!(sim.footer(), "📌 p:on", "a tool that ends late is not reported");
    assert!(sim.notifications().is_empty());
}

#[test]
fn poke_m3_auto_abort_once_per_tool_at_the_threshold() {
    let mut sim = Sim::configured(|config| config.poke.auto_abort = true);
    sim.agent_start().tool_start("t1", "bash").run_for(29);
    assert_eq!(sim.aborts(), 0, "not before the threshold");
    sim.run_for(2);
    assert_eq!(sim.aborts(), 1, "aborted within threshold..threshold+1s");
    let (level, text, desktop) = sim.notifications().pop().expect("notified");
    assert_eq!(level, NotifyLevel::Error);
    assert!(text.contains("'bash'") && text.contains("30s"), "{text}");
    assert!(desktop, "pokeshell acted on its own");
    assert!(sim.view().tools.is_empty(), "the aborted tool leaves the monitor");
    sim.run_for(60);
    assert_eq!(sim.aborts(), 1, "once per tool");
    // pi then settles aborted: no poke follows (auto-abort and orphan poke are exclusive anyway).
    sim.agent_end(StopReason::Aborted).settle_aborted().run_for(60);
    assert!(sim.sent().is_empty());
    let aborted = sim.records("ARB-ABORT", LedgerKind::Declined);
    assert!(
        aborted[0].reason.contains("auto-abort"),
        "the ledger names pokeshell as the one who stopped the run"
    );
}

#[test]
fn poke_m3_one_abort_covers_several_overdue_tools() {
    let mut sim = Sim::configured(|config| config.poke.auto_abort = true);
    sim.agent_start()
        .tool_start("t1", "bash")
        .tool_start("t2", "read")
        .advance(31)
        .tick();
    assert_eq!(sim.aborts(), 1);
    assert_eq!(sim.records("POKE-M3", LedgerKind::Action).len(), 2);
}

#[test]
fn poke_o1_no_orphan_poke_when_auto_poke_off_or_auto_abort_on() {
    for change in [
        (|config: &mut pokeshell_core::supervisor::SupervisorConfig| config.poke.auto_poke = false)
            as fn(&mut _),
        |config| config.poke.auto_abort = true,
    ] {
        let mut sim = Sim::configured(change);
        sim.agent_start()
            .tool_start("t1", "bash")
            .agent_end(StopReason::Error)
            .settle()
            .run_for(120);
        assert_eq!(sim.auto_pokes(), 0);
    }
}

#[test]
fn poke_o1_orphan_poke_waits_for_the_tool_to_cross_the_threshold() {
    let mut sim = Sim::new();
    sim.agent_start()
        .tool_start("t1", "bash")
        .advance(5)
        .agent_end(StopReason::Error)
        .settle();
    assert_eq!(sim.sup.next_deadline(), Some(START_MONO + 30_000));
    sim.run_for(24);
    assert_eq!(sim.auto_pokes(), 0);
    sim.run_for(2);
    assert_eq!(sim.auto_pokes(), 1);
    let poke = &sim.sent()[0];
    assert!(
        poke.text.contains("30s"),
        "the elapsed time is carried: {}",
        poke.text
    );
    assert_eq!(sim.footer(), "📌 p:on 📤 resume");
}

#[test]
fn poke_p1_manual_poke_is_a_hidden_steered_custom_message_whatever_the_toggles() {
    let mut sim = Sim::configured(|config| {
        config.poke.enabled = false;
        config.poke.auto_poke = false;
        config.poke.post_compact_poke = false;
    });
    sim.manual_poke();
    let sent = sim.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].custom_type, "poke");
    assert!(!sent[0].display, "hidden");
    assert!(sent[0].trigger_turn);
    assert_eq!(sent[0].deliver_as, DeliverAs::Steer);
    assert!(
        sent[0].text.starts_with("[Poke]") && sent[0].text.contains("by hand"),
        "{}",
        sent[0].text
    );
    assert!(
        sim.notifications()
            .iter()
            .any(|(level, _, desktop)| *level == NotifyLevel::Info && !desktop)
    );
    assert_eq!(sim.records("POKE-P1", LedgerKind::Action).len(), 1);
}

#[test]
fn poke_p1_manual_poke_refused_by_pi_is_reported() {
    let mut sim = Sim::new();
    sim.refuse_sends("no session").manual_poke();
    let (level, text, _) = sim.notifications().pop().expect("notified");
    assert_eq!(level, NotifyLevel::Error);
    assert!(text.contains("no session"), "{text}");
}

#[test]
fn poke_p1_manual_poke_without_bridge_says_so() {
    let mut sim = Sim::new();
    sim.event(Event::BridgeDisconnected {
        reason: "socket closed".into(),
    })
    .manual_poke();
    assert!(sim.sent().is_empty());
    assert!(
        sim.notifications()
            .iter()
            .any(|(_, text, _)| text.contains("not connected"))
    );
}

#[test]
fn poke_footer_states_follow_the_spec() {
    let mut sim = Sim::new();
    assert_eq!(sim.footer(), "📌 p:on");
    sim.agent_start().agent_end(StopReason::Error).compact(false);
    assert_eq!(sim.view().footer.suffix, Some(FooterSuffix::PostCompact));
    assert_eq!(sim.footer(), "📌 p:on 👀 post-compact");
    sim.settle();
    assert_eq!(sim.footer(), "📌 p:on 📤 resume");
    sim.agent_start()
        .turn_start()
        .agent_end(StopReason::Stop)
        .settle();
    assert_eq!(sim.footer(), "📌 p:on");
    sim.set_config(|config| config.poke.enabled = false);
    assert_eq!(sim.footer(), "📌 p:off");
    sim.agent_start().tool_start("t1", "bash").advance(40);
    assert_eq!(sim.footer(), "📌 p:off", "no transient suffix while off");
}
