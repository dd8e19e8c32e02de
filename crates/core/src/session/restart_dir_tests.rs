//! A relaunch whose directory is gone (RST-D2).

use serde_json::json;

use super::restart_tests::{at, comes_back, event, messages, pi, records, respawn};
use super::*;
use crate::supervisor::ledger::rule;

/// Issue 34, medium 2 (RST-D2): the relaunch could not start, as pi's directory is gone. The session
/// says so (ledger, `ls`, a notification), stays, and the user's poke asks for the relaunch again;
/// once pi starts, the run it was in is resumed.
#[test]
fn rst_d2_a_relaunch_that_could_not_start_waits_for_a_poke_and_then_resumes() {
    let mut s = pi();
    event(&mut s, json!({"type": "agent_start"}), 1000);
    let fx = s.handle(
        Input::ChildExited {
            code: 137,
            signal: Some(9),
        },
        at(2000),
    );
    let args = respawn(&fx).expect("a relaunch");
    let fx = s.handle(
        Input::ChildNotStarted {
            why: "/w is gone".into(),
        },
        at(2100),
    );
    let why = records(&fx, rule::RESTART_NO_DIR);
    assert_eq!(why.len(), 1, "{fx:?}");
    assert!(
        why[0].contains("/w is gone") && why[0].contains("poke"),
        "{why:?}"
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Notify { desktop: true, .. })),
        "{fx:?}"
    );
    let brief = s.brief(at(2200));
    assert_eq!(brief.attention, Attention::GaveUp);
    assert!(brief.state.contains("/w is gone"), "{}", brief.state);
    // The user's poke (prefix+p) asks for the same relaunch again, and nothing is sent to a pi
    // that does not run.
    let fx = s.handle(
        Input::Stdin {
            client: 1,
            bytes: b"\x1dp".to_vec(),
        },
        at(3000),
    );
    assert_eq!(respawn(&fx), Some(args), "{fx:?}");
    assert!(messages(&fx).is_empty());
    let fx = comes_back(&mut s, json!([]), 4000);
    assert_eq!(messages(&fx).len(), 1, "the run is resumed: {fx:?}");
    assert_eq!(s.brief(at(5000)).attention, Attention::Working);
}
