//! A bridge that comes back (POKE-E3, POKE-E4): tool ends reported while no bridge listened are lost,
//! so the running tools are forgotten and the new instance reports them again.

use pokeshell::supervisor::{Event, StopReason};

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
