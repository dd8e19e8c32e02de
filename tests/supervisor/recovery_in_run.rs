//! The loop guard inside one run [SAR-L4] (pokeshell's addition: pi does not settle between tool calls).

use pokeshell_core::supervisor::{DeliverAs, Event, LedgerKind, Message, NotifyLevel, StopReason};
use serde_json::json;

use super::recovery::{bash_fail, recovery_sim};
use super::sim::{Sim, call_and_result};

fn turn_end(sim: &mut Sim, tail: &[Message]) {
    sim.event(Event::TurnEnd { tail: tail.to_vec() });
}

#[test]
fn sar_l4_inside_a_run_nudges_are_steered_in_at_each_threshold_then_it_gives_up() {
    let mut sim = recovery_sim();
    sim.agent_start();
    let mut branch = vec![Message::user("run the tests")];
    let mut loop_sends = Vec::new();
    for i in 1..=20u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
        loop_sends.push(sim.sent_of("stalled-agent-recovery-loop").len());
    }
    let sent = sim.sent_of("stalled-agent-recovery-loop");
    // Nudges at 5, 10 and 15 (the last one says stop); no continuation messages inside a run.
    assert_eq!(sent.len(), 3, "{loop_sends:?}");
    assert!(
        sent.iter()
            .all(|s| s.deliver_as == DeliverAs::Steer && !s.display)
    );
    assert!(sent[0].text.contains("failed 5 times"), "{}", sent[0].text);
    assert!(sent[1].text.contains("failed 10 times"));
    assert!(sent[2].text.contains("failed 15 times") && sent[2].text.contains("Stop calling it"));
    assert_eq!(loop_sends[3], 0, "nothing before the fifth failure");
    assert_eq!(loop_sends[4], 1);
    // The twentieth failure (the fourth crossing) gives up with a desktop notification.
    let give_up = sim
        .notifications()
        .into_iter()
        .filter(|(level, text, desktop)| {
            *level == NotifyLevel::Error && *desktop && text.contains("no longer")
        })
        .count();
    assert_eq!(give_up, 1);
}

#[test]
fn sar_l4_a_nudge_given_inside_the_run_is_not_repeated_at_its_settle() {
    let mut sim = recovery_sim();
    sim.agent_start();
    let mut branch = vec![Message::user("run the tests")];
    for i in 1..=5u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    assert_eq!(sim.sent_of("stalled-agent-recovery-loop").len(), 1);
    // The run then settles on that same failure (a terminated batch): the nudge is on its way, so the
    // settle adds nothing, neither a second nudge #1 nor a continuation.
    sim.agent_end(StopReason::ToolUse).settle_with(branch.clone());
    assert_eq!(sim.sent_of("stalled-agent-recovery-loop").len(), 1);
    let quiet = sim.records("SAR-L4", LedgerKind::Declined);
    assert!(
        quiet.iter().any(|r| r.reason.contains("already spoke")),
        "{quiet:?}"
    );
    // A later failure at its settle gets the usual continuation again.
    branch.extend(bash_fail("c6"));
    sim.agent_start()
        .agent_end(StopReason::ToolUse)
        .settle_with(branch.clone());
    let sent = sim.sent_of("stalled-agent-recovery-loop");
    assert_eq!(sent.len(), 2);
    assert!(sent[1].text.contains("failed 6 times so far"), "{}", sent[1].text);
}

#[test]
fn sar_l4_inside_a_run_a_changed_call_or_a_success_breaks_the_count() {
    let mut sim = recovery_sim();
    sim.agent_start();
    let mut branch = vec![Message::user("go")];
    for i in 1..=4u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    branch.extend(call_and_result(
        "c5",
        "bash",
        json!({"command": "make test -j4"}),
        true,
    ));
    turn_end(&mut sim, &branch);
    branch.extend(bash_fail("c6"));
    turn_end(&mut sim, &branch);
    assert!(sim.sent_of("stalled-agent-recovery-loop").is_empty());
}

#[test]
fn sar_l4_inside_a_run_nothing_happens_while_disabled() {
    let mut sim = Sim::configured(|config| {
        config.global_cooldown_seconds = 0;
        config.poke.enabled = false;
    });
    sim.agent_start();
    let mut branch = vec![Message::user("go")];
    for i in 1..=5u32 {
        branch.extend(bash_fail(&format!("c{i}")));
        turn_end(&mut sim, &branch);
    }
    assert!(sim.sent().is_empty());
}
