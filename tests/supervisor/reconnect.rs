//! A bridge that comes back, or lines that got lost (POKE-E3, POKE-E4): tool ends reported while no
//! bridge listened are lost, so the running tools are forgotten and the new instance reports them
//! again; after lost lines a heartbeat's list of running tools drops the ghosts.

use pokeshell_core::supervisor::{Event, LedgerKind, StopReason};

use super::sim::Sim;

#[test]
fn poke_e4_ghost_tools_are_cleared_when_the_bridge_reconnects() {
    let mut sim = Sim::new();
    sim.agent_start()
        .tool_start("t1", "bash")
        .agent_end(StopReason::Error);
    sim.event(Event::BridgeDisconnected {
        reason: "gone".into(),
    });
    // The tool ended while no bridge listened.
    sim.event(Event::BridgeConnected);
    assert!(sim.view().tools.is_empty(), "no ghost in the side pane");
    sim.settle().run_for(120);
    assert_eq!(sim.auto_pokes(), 0, "a ghost is no orphan");
}

#[test]
fn poke_e3_a_tool_reported_again_after_the_reconnect_is_watched() {
    let mut sim = Sim::new();
    sim.agent_start().tool_start("t1", "bash");
    sim.event(Event::BridgeDisconnected {
        reason: "gone".into(),
    });
    sim.event(Event::BridgeConnected);
    sim.tool_start("t2", "bash").advance(31);
    assert_eq!(sim.view().tools.len(), 1);
    assert!(sim.footer().contains("⚠️ bash"), "{}", sim.footer());
}

#[test]
fn poke_e4_ghost_tools_are_dropped_when_a_heartbeat_after_lost_lines_lists_what_pi_runs() {
    let mut sim = Sim::new();
    sim.agent_start()
        .tool_start("t1", "bash")
        .tool_start("t2", "read")
        .agent_end(StopReason::Error);
    // t1's end was among the lost lines; pi's heartbeat lists only t2.
    sim.event(Event::ToolsRunning {
        ids: vec!["t2".into()],
    });
    let ids: Vec<String> = sim.view().tools.into_iter().map(|t| t.id).collect();
    assert_eq!(ids, ["t2"], "the ghost is gone, the live tool stays");
    let records = sim.records("POKE-E4", LedgerKind::Declined);
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].reason.contains("forgot bash (t1)"), "{:?}", records[0]);
    assert!(sim.sent().is_empty(), "forgetting sends nothing");
    // t2 then ends normally: nothing is left to pass for an orphan.
    sim.tool_end("t2").settle().run_for(120);
    assert_eq!(sim.auto_pokes(), 0, "a ghost is no orphan");
}

#[test]
fn poke_o1_without_the_resync_the_same_ghost_would_be_poked_as_an_orphan() {
    // The contrast to the test above: the ghost left in place passes for an orphan.
    let mut sim = Sim::new();
    sim.agent_start()
        .tool_start("t1", "bash")
        .agent_end(StopReason::Error)
        .settle()
        .run_for(120);
    assert_eq!(sim.auto_pokes(), 1);
}

#[test]
fn poke_e4_a_heartbeat_listing_every_known_tool_forgets_none() {
    let mut sim = Sim::new();
    sim.agent_start().tool_start("t1", "bash");
    sim.event(Event::ToolsRunning {
        ids: vec!["t1".into(), "t9".into()],
    });
    assert_eq!(sim.view().tools.len(), 1, "an unknown id is not invented either");
    assert!(sim.records("POKE-E4", LedgerKind::Declined).is_empty());
}
