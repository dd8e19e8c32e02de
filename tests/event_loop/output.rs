//! The child's output through the real loop: parsed into the mirror, drawn into the frame, and its
//! mode changes carried over to the host terminal.

use super::world::{PREFIX, World};

#[tokio::test(start_paused = true)]
async fn child_output_shows_in_the_drawn_frame() {
    let mut w = World::new();
    w.lp.child.output(b"\x1b[3;5Hhello from pi");
    w.settle().await;
    let rows = w.rows();
    assert_eq!(&rows[2][4..17], "hello from pi", "row 3, column 5: {:?}", rows[2]);

    // An echoing child: what the user types comes back onto its screen.
    w.lp.child.echo = true;
    w.stdin(b"\rtyped back");
    w.settle().await;
    let rows = w.rows();
    assert!(rows[2].starts_with("typed back"), "{:?}", rows[2]);
    assert!(
        !rows[2].contains("hello from pi"),
        "the carriage return went to the child and the text overwrote the row: {:?}",
        rows[2]
    );
}

#[tokio::test(start_paused = true)]
async fn the_childs_keyboard_and_mouse_modes_are_set_on_the_host() {
    let mut w = World::new();
    // pi pushes kitty flags 7 (disambiguate, report event types, alternate keys).
    w.lp.child.output(b"\x1b[>7u");
    w.settle().await;
    assert_eq!(
        w.lp.screen.raw, b"\x1b[>7u",
        "pokeshell pushes the same flags on the host"
    );

    w.lp.screen.raw.clear();
    w.lp.child.output(b"\x1b[?1003h\x1b[?1006h");
    w.settle().await;
    assert_eq!(
        w.lp.screen.raw, b"\x1b[?1003h\x1b[?1006h",
        "any-motion mouse, in SGR encoding"
    );

    w.lp.screen.raw.clear();
    w.lp.child.output(b"\x1b[<u\x1b[?1003l\x1b[?1006l");
    w.settle().await;
    assert_eq!(
        w.lp.screen.raw, b"\x1b[=0;1u\x1b[?1003l\x1b[?1006l",
        "pi popped its flags and stopped the mouse: the host follows, its own stack entry kept"
    );

    w.lp.screen.raw.clear();
    w.lp.child.output(b"more text, no mode change");
    w.settle().await;
    assert!(
        w.lp.screen.raw.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&w.lp.screen.raw)
    );
}

#[tokio::test(start_paused = true)]
async fn a_title_the_child_sets_goes_to_the_host() {
    let mut w = World::new();
    w.lp.child.output(b"\x1b]0;pi - project\x07");
    w.settle().await;
    let raw = String::from_utf8_lossy(&w.lp.screen.raw).into_owned();
    assert!(raw.contains("pi - project"), "{raw:?}");
}

#[tokio::test(start_paused = true)]
async fn paste_markers_reach_the_child_only_while_it_has_bracketed_paste_on() {
    let mut w = World::new();
    let paste = b"\x1b[200~two\nlines\x1b[201~";
    w.lp.child.output(b"\x1b[?2004h");
    w.settle().await;
    w.stdin(paste);
    w.settle().await;
    assert_eq!(w.lp.child.written(), paste);

    w.lp.child.writes.clear();
    w.lp.child.output(b"\x1b[?2004l");
    w.settle().await;
    w.stdin(paste);
    w.settle().await;
    assert_eq!(
        w.lp.child.written(),
        b"two\nlines",
        "only the text, as a legacy terminal would send it"
    );

    // The prefix key inside a paste is pasted text, not a command.
    w.lp.child.writes.clear();
    w.stdin(&[b"\x1b[200~a".as_slice(), PREFIX, b"s\x1b[201~"].concat());
    w.settle().await;
    assert_eq!(w.lp.child.written(), [b"a".as_slice(), PREFIX, b"s"].concat());
    assert!(w.lp.child.resizes.is_empty(), "the side pane stayed");
}

/// While the pane floods, frames come at most every 16 ms; a typed key's echo is drawn as soon as
/// it arrives instead of waiting for the next one.
#[tokio::test(start_paused = true)]
async fn a_typed_keys_echo_is_drawn_without_waiting_for_the_frame_clock() {
    let mut w = World::new();
    w.settle().await;
    // A frame of flood output has just been drawn.
    w.lp.child.output(b"\x1b[1;1Hflood line");
    w.run_for_ms(1).await;
    assert!(w.rows()[0].starts_with("flood line"), "{:?}", w.rows()[0]);
    w.lp.child.echo = true;
    w.stdin(b"\rx");
    // Well within one 16 ms frame.
    w.run_for_ms(5).await;
    assert!(
        w.rows()[0].starts_with("x"),
        "the echo is on screen 5 ms after the key: {:?}",
        w.rows()[0]
    );
}
