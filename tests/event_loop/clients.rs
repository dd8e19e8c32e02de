//! Several terminals on one session through the real loop, as the server drives it: both attach,
//! each client's keys carry its id, each keeps its own half-typed prefix, sequence and overlay, and what the keys
//! ask of the server goes out for the client that asked.

use pokeshell_core::session::WorkspaceRequest;

use super::world::{COLS, PREFIX, ROWS, World};

const A: u64 = 1;
const B: u64 = 2;

fn footer_of(w: &World, client: u64) -> String {
    w.rows_of(client).pop().unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn a_prefix_pressed_in_one_terminal_leaves_the_others_keys_to_pi() {
    let mut w = World::numbered(1);
    w.attach(B, COLS, ROWS);
    w.keys(A, PREFIX);
    w.settle().await;
    assert!(
        footer_of(&w, A).contains("detach"),
        "A's footer offers the keys after the prefix: {}",
        footer_of(&w, A)
    );
    assert!(
        !footer_of(&w, B).contains("detach"),
        "B's footer is not armed: {}",
        footer_of(&w, B)
    );

    w.keys(B, b"d");
    w.settle().await;
    assert_eq!(w.lp.child.written(), b"d", "B's d reaches pi");
    assert!(w.lp.screen.requests.is_empty(), "nobody detaches");

    w.keys(A, b"?");
    w.settle().await;
    assert!(
        w.rows_of(A).join("\n").contains("pokeshell keys"),
        "A's prefix was still armed: its ? opened the help"
    );
    assert!(
        !w.rows_of(B).join("\n").contains("pokeshell keys"),
        "B sees pi's pane"
    );
    assert_eq!(w.lp.child.written(), b"d");
}

#[tokio::test(start_paused = true)]
async fn a_detach_asked_from_one_terminal_goes_out_for_that_terminal() {
    let mut w = World::numbered(1);
    w.attach(B, COLS, ROWS);
    w.keys(B, PREFIX);
    w.keys(A, b"x");
    w.keys(B, b"d");
    w.settle().await;
    assert_eq!(w.lp.screen.requests, vec![(B, WorkspaceRequest::Detach)]);
    assert_eq!(w.lp.child.written(), b"x");
}

#[tokio::test(start_paused = true)]
async fn a_terminal_that_leaves_takes_its_armed_prefix_with_it() {
    let mut w = World::numbered(1);
    w.attach(B, COLS, ROWS);
    w.keys(A, PREFIX);
    w.settle().await;
    w.leave(A);
    w.settle().await;
    // A terminal that comes back under the same id starts afresh: its d is pi's.
    w.keys(A, b"d");
    w.settle().await;
    assert_eq!(w.lp.child.written(), b"d");
    assert!(w.lp.screen.requests.is_empty());
    assert!(w.lp.screen.own.is_empty(), "nobody has a frame of their own");
}

#[tokio::test(start_paused = true)]
async fn one_terminals_pause_does_not_cut_another_terminals_sequence() {
    let mut w = World::numbered(1);
    w.attach(B, COLS, ROWS);
    w.keys(A, b"\x1b[1;");
    w.keys(B, b"q");
    w.settle().await;
    // B's key went at once; A's half sequence waited, then went out as it was when A paused.
    assert_eq!(w.lp.child.writes, vec![b"q".to_vec(), b"\x1b[1;".to_vec()]);
}

#[tokio::test(start_paused = true)]
async fn keys_held_while_pi_starts_keep_their_terminal() {
    let mut w = World::numbered(1);
    w.attach(B, COLS, ROWS);
    w.lp.hold_keys_until_ready();
    w.keys(A, PREFIX);
    w.keys(B, b"d");
    w.settle().await;
    assert!(w.lp.child.written().is_empty(), "held until pi's screen is up");
    // pi turns bracketed paste on: its screen is up.
    w.lp.child.output(b"\x1b[?2004h");
    w.settle().await;
    assert_eq!(w.lp.child.written(), b"d", "B's d, not A's prefix's command");
    assert!(w.lp.screen.requests.is_empty());
    w.keys(A, b"d");
    w.settle().await;
    assert_eq!(w.lp.screen.requests, vec![(A, WorkspaceRequest::Detach)]);
}

#[tokio::test(start_paused = true)]
async fn a_terminal_the_screen_drops_for_not_reading_loses_its_keyboard_too() {
    let mut w = World::numbered(1);
    w.attach(B, COLS, ROWS);
    w.keys(A, PREFIX);
    w.settle().await;
    // The real screen drops a client while writing to it, inside one of the loop's turns; here the
    // loop's next turn (it wakes at least once a second) hears of it.
    w.lp.screen.dropped.push(A);
    w.run_secs(2).await;
    w.keys(A, b"d");
    w.settle().await;
    assert_eq!(w.lp.child.written(), b"d", "no prefix left waiting for A");
    assert!(w.lp.screen.requests.is_empty());
}
