//! The supervisor's side of a restart of pi (RST-F1, RST-D1, RST-R1; docs/supervision.md, "A frozen
//! or crashed pi"): the resume goes out once the new pi's session has started, through the arbiter:
//! held after the user's Esc (the restarted session keeps the stop), not sent with supervision off,
//! and not at all when the agent was idle.

use pokeshell_core::supervisor::{Event, LedgerKind, StopReason, texts};

use super::sim::Sim;

fn restarted(sim: &mut Sim, resume: bool) {
    sim.event(Event::PiRestarted {
        rule: "RST-F1",
        reason: "pi stopped responding for 90 s".into(),
        resume,
    });
    sim.event(Event::BridgeConnected);
}

#[test]
fn rst_r1_the_resume_waits_for_the_new_session_and_names_the_reason() {
    let mut sim = Sim::new();
    sim.session("s1").agent_start();
    restarted(&mut sim, true);
    assert!(
        sim.sent().is_empty(),
        "nothing before the new pi's session starts"
    );
    assert_eq!(sim.records("RST-F1", LedgerKind::Action).len(), 1);
    sim.session("s1");
    let pokes = sim.sent_of(texts::CT_POKE);
    assert_eq!(pokes.len(), 1, "{:?}", sim.sent());
    assert!(pokes[0].text.contains("90 s"), "{}", pokes[0].text);
    assert_eq!(sim.records("RST-R1", LedgerKind::Action).len(), 1);
    sim.session("s1");
    assert_eq!(sim.sent().len(), 1, "one resume per restart");
}

#[test]
fn rst_r1_nothing_is_resumed_when_pi_was_idle() {
    let mut sim = Sim::new();
    sim.session("s1");
    restarted(&mut sim, false);
    sim.session("s1");
    assert!(sim.sent().is_empty());
}

#[test]
fn rst_r1_the_users_stop_holds_the_resume() {
    let mut sim = Sim::new();
    sim.session("s1")
        .agent_start()
        .agent_end(StopReason::Aborted)
        .settle_aborted();
    // Something else started a run, and pi froze in it.
    sim.agent_start();
    restarted(&mut sim, true);
    sim.session("s1");
    assert!(sim.sent().is_empty(), "{:?}", sim.sent());
    assert_eq!(sim.records("RST-R1", LedgerKind::Declined).len(), 1);
    assert!(sim.view().stopped_by.is_some(), "the stop still holds");
    sim.user_types();
    assert!(sim.view().stopped_by.is_none());
}

#[test]
fn rst_r1_with_supervision_off_nothing_resumes() {
    let mut sim = Sim::configured(|c| c.poke.enabled = false);
    sim.session("s1").agent_start();
    restarted(&mut sim, true);
    sim.session("s1");
    assert!(sim.sent().is_empty());
    assert_eq!(sim.records("RST-R1", LedgerKind::Declined).len(), 1);
}

/// A wakeup comes due while pi is being relaunched (simulation seed 1348): the old session's timer
/// goes with it, so nothing fires into the new pi before its session starts; the new session
/// re-arms the wakeup from its entries, and it goes out once, after the restart's resume settled.
#[test]
fn rst_r1_a_wakeup_due_during_a_relaunch_fires_once_after_the_resume() {
    let mut sim = Sim::configured(|c| c.wakeup_min_seconds = 1);
    sim.session("s1").agent_start();
    super::wakeup::schedule(&mut sim, "c1", serde_json::json!(5), "check the build", None);
    let scheduled = sim.entries("pokeshell-wakeup-scheduled");
    restarted(&mut sim, true);
    sim.run_for(30);
    assert!(
        sim.sent().is_empty(),
        "nothing before the new pi's session starts: {:?}",
        sim.sent()
    );
    let entries = scheduled
        .into_iter()
        .map(|data| pokeshell_core::supervisor::CustomEntry {
            custom_type: "pokeshell-wakeup-scheduled".into(),
            data,
        })
        .collect();
    sim.session_with("s1", entries).run_for(5);
    assert_eq!(sim.sent_of(texts::CT_POKE).len(), 1, "the restart's resume");
    assert!(
        super::wakeup::wakeups_sent(&sim).is_empty(),
        "one message: the wakeup waits"
    );
    sim.agent_start().agent_end(StopReason::Stop).settle().run_for(5);
    assert_eq!(super::wakeup::wakeups_sent(&sim).len(), 1, "then it goes, once");
    sim.settle().run_for(600);
    assert_eq!(super::wakeup::wakeups_sent(&sim).len(), 1);
}
