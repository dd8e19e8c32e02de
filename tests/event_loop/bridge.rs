//! pokeshell's commands to pi through the real loop: the manual poke reaches the bridge, and a send
//! the bridge cannot make comes back as the command's reply, shown and logged.

use pokeshell::server::event_loop::{Signal, WorldEvent};

use super::world::{PREFIX, World};

fn prefix(key: &[u8]) -> Vec<u8> {
    [PREFIX, key].concat()
}

#[tokio::test(start_paused = true)]
async fn prefix_p_with_the_bridge_connected_sends_the_manual_poke() {
    let mut w = World::new();
    w.connect();
    w.stdin(&prefix(b"p"));
    w.settle().await;
    let messages = w.lp.bridge.messages();
    assert_eq!(messages.len(), 1, "{:?}", w.lp.bridge.sent);
    let (id, poke) = &messages[0];
    assert_eq!(poke.custom_type, "poke");
    assert_eq!(poke.content, pokeshell_core::supervisor::texts::manual_poke());
    assert!(poke.trigger_turn && !poke.display);
    assert!(w.lp.child.written().is_empty(), "the poke is not typed into pi");
    assert_eq!(
        w.records("POKE-P1", "action").len(),
        1,
        "the poke is in the ledger: {:?}",
        w.ledger()
    );

    // pi took it: nothing more is said.
    w.reply(*id, Ok(serde_json::json!({})));
    w.settle().await;
    assert!(w.records("POKE-P1", "declined").is_empty());
    assert!(!w.footer().contains("could not be delivered"), "{}", w.footer());
}

#[tokio::test(start_paused = true)]
async fn prefix_p_before_the_bridge_connects_sends_nothing_and_says_why() {
    let mut w = World::new();
    w.stdin(&prefix(b"p"));
    w.settle().await;
    assert!(w.lp.bridge.sent.is_empty(), "{:?}", w.lp.bridge.sent);
    assert!(w.footer().contains("not connected"), "{}", w.footer());
}

#[tokio::test(start_paused = true)]
async fn a_poke_the_bridge_cannot_send_is_reported_in_the_footer_and_the_ledger() {
    let mut w = World::new();
    w.connect();
    w.settle().await;
    w.lp.bridge.refuse = Some("the socket is gone".into());
    w.stdin(&prefix(b"p"));
    w.settle().await;
    assert_eq!(w.lp.bridge.messages().len(), 1, "the loop tried");
    let footer = w.footer();
    assert!(
        footer.contains("The poke could not be delivered: the socket is gone"),
        "{footer}"
    );
    let declined = w.records("POKE-P1", "declined");
    assert_eq!(declined.len(), 1, "{:?}", w.ledger());
    assert!(declined[0].contains("the socket is gone"), "{declined:?}");
}

#[tokio::test(start_paused = true)]
async fn sigusr1_drops_the_bridge_connection() {
    let mut w = World::new();
    w.connect();
    w.send(WorldEvent::Signal(Signal::Usr1));
    w.settle().await;
    assert_eq!(w.lp.bridge.disconnects.len(), 1);
    assert!(w.lp.child.signals.is_empty(), "pi itself is left alone");
}
