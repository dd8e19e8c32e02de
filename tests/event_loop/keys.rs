//! The user's keys through the real loop: pi's go to the child as typed, pokeshell's act on the
//! layout, the child's PTY and the next frame.

use super::world::{CLIENT, COLS, PREFIX, ROWS, World};

#[tokio::test(start_paused = true)]
async fn typed_keys_reach_the_child_unchanged() {
    let mut w = World::new();
    // Text, Enter, an arrow, a kitty-encoded Shift+Enter and a UTF-8 character.
    let typed = "hi\r\x1b[A\x1b[13;2ué".as_bytes();
    w.stdin(typed);
    w.settle().await;
    assert_eq!(w.lp.child.written(), typed);
    assert!(w.lp.child.resizes.is_empty(), "typing resizes nothing");
}

#[tokio::test(start_paused = true)]
async fn a_sequence_split_across_reads_reaches_the_child_whole_or_after_the_flush() {
    let mut w = World::new();
    w.stdin(b"\x1b[1;");
    w.settle().await;
    // The loop's flush timer passed the held bytes on when no more came.
    assert_eq!(w.lp.child.written(), b"\x1b[1;");

    let mut w = World::new();
    w.stdin(b"\x1b[1;");
    w.stdin(b"5A");
    w.settle().await;
    assert_eq!(w.lp.child.writes, vec![b"\x1b[1;5A".to_vec()], "one whole key");
}

#[tokio::test(start_paused = true)]
async fn prefix_s_hides_the_side_pane_resizes_the_child_and_the_next_frame_has_no_side_pane() {
    let mut w = World::new();
    w.settle().await;
    let side = "uptime";
    assert!(
        w.screen_text().contains(side),
        "the side pane shows at {COLS} columns:\n{}",
        w.screen_text()
    );
    let body_rows = ROWS - 1;

    w.stdin(&[PREFIX, b"s"].concat());
    w.settle().await;
    assert_eq!(
        w.lp.child.resizes,
        vec![(body_rows, COLS)],
        "the child gets the whole width"
    );
    assert!(
        w.lp.child.written().is_empty(),
        "prefix+s is pokeshell's, not pi's"
    );
    let text = w.screen_text();
    assert!(!text.contains(side), "no side pane:\n{text}");
    // The pane really is wider: a line the child draws at its last column shows there.
    w.lp.child.output(format!("\x1b[5;{}HZ", COLS).as_bytes());
    w.settle().await;
    let rows = w.rows();
    assert_eq!(
        rows[4].chars().last(),
        Some('Z'),
        "column {COLS} belongs to the pane: {:?}",
        rows[4]
    );

    w.stdin(&[PREFIX, b"s"].concat());
    w.settle().await;
    assert_eq!(w.lp.child.resizes.len(), 2);
    assert!(w.lp.child.resizes[1].1 < COLS, "the side pane is back");
    assert!(w.screen_text().contains(side));
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_client_resizes_resizes_the_child_once_to_the_new_pane() {
    let mut w = World::new();
    w.settle().await;
    // The user drags the terminal narrower, below the side pane's automatic width: sizes come while
    // it still changes, and only the size it settles at is applied.
    w.resize(CLIENT, 90, 30);
    w.run_for_ms(10).await;
    w.resize(CLIENT, 80, 24);
    w.settle().await;
    assert_eq!(
        w.lp.child.resizes,
        vec![(23, 80)],
        "one resize, the whole width: the side pane hid itself"
    );
    let rows = w.rows();
    assert_eq!(rows.len(), 24, "the frame has the new size");
    assert!(!w.screen_text().contains("uptime"), "{}", w.screen_text());
}

#[tokio::test(start_paused = true)]
async fn the_session_takes_the_smallest_attached_terminals_size_and_grows_when_it_leaves() {
    let mut w = World::new();
    w.settle().await;
    w.attach(2, 100, 30);
    w.settle().await;
    assert_eq!(w.rows().len(), 30, "the smaller terminal sets the rows");
    let (rows, cols) = *w.lp.child.resizes.last().expect("the child was resized");
    assert_eq!(rows, 29, "the pane above the footer");
    assert!(cols <= 100, "the pane fits the smaller terminal: {cols}");
    w.leave(2);
    w.settle().await;
    assert_eq!(w.rows().len(), ROWS as usize, "back to the one terminal left");
    assert_eq!(w.lp.child.resizes.last().map(|r| r.0), Some(ROWS - 1));
}
