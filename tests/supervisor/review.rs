//! The person's review of the changes [REVIEW-S1]: one visible message, a follow-up while the agent
//! works (the run in progress goes on), a prompt that starts a run when it is idle, and nothing
//! more from pokeshell after a healthy run it was sent into.

use pokeshell_core::supervisor::{DeliverAs, Event, LedgerKind, StopReason};

use super::sim::Sim;

fn review(sim: &mut Sim) -> &mut Sim {
    sim.event(Event::Review {
        text: "Review of your changes (1 comment).\n\n1. a.rs, line 3:\n   > x\n   rename it\n".into(),
    })
}

#[test]
fn review_s1_while_the_agent_works_it_waits_as_a_follow_up_and_the_healthy_run_is_left_alone() {
    let mut sim = Sim::new();
    sim.agent_start().turn_start().tool_start("t1", "bash");
    review(&mut sim);
    let sent = sim.sent_of("pokeshell-review");
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].deliver_as,
        DeliverAs::FollowUp,
        "the run in progress is not cut off"
    );
    assert!(sent[0].display && sent[0].text.contains("1. a.rs, line 3:"));
    assert!(
        !sim.actions
            .iter()
            .any(|a| matches!(a, pokeshell_core::supervisor::Action::Abort)),
        "nothing is aborted"
    );
    assert_eq!(sim.records("REVIEW-S1", LedgerKind::Action).len(), 1);
    // The run ends well: pokeshell adds nothing of its own.
    sim.tool_end("t1")
        .agent_end(StopReason::Stop)
        .settle()
        .run_for(120);
    assert_eq!(sim.sent().len(), 1, "only the review went out: {:?}", sim.sent());
}

#[test]
fn review_s1_an_idle_agent_gets_it_at_once_and_without_the_bridge_nothing_is_sent() {
    let mut sim = Sim::new();
    review(&mut sim);
    let sent = sim.sent_of("pokeshell-review");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].deliver_as, DeliverAs::Steer);
    assert!(sent[0].trigger_turn, "it starts a run");

    let mut gone = Sim::new();
    gone.event(Event::BridgeDisconnected {
        reason: "pi quit".into(),
    });
    review(&mut gone);
    assert!(gone.sent().is_empty());
    assert_eq!(gone.records("REVIEW-S1", LedgerKind::Declined).len(), 1);
}
