//! Job control through the real loop, as the server drives it: pi suspending itself on Ctrl+Z makes
//! the clients give their terminals back; when one is back (`fg`), the host's modes are set again
//! and pi is continued; with nobody left to come back, pi is continued at once.

use pokeshell::server::event_loop::{ClientEvent, WorldEvent};

use super::world::{CLIENT, COLS, ROWS, World};

/// pi's TUI as it runs: kitty flags 7 and bracketed paste.
const PI_MODES: &[u8] = b"\x1b[>7u\x1b[?2004h";
/// What pi does on Ctrl+Z before it stops itself: bracketed paste off.
const PI_STOPS_ITS_TUI: &[u8] = b"\x1b[?2004l";

#[tokio::test(start_paused = true)]
async fn ctrl_z_that_makes_pi_stop_its_tui_suspends_and_resumes_with_the_modes_set_again() {
    let mut w = World::new();
    w.lp.child.output(PI_MODES);
    w.settle().await;
    w.lp.screen.raw.clear();

    w.stdin(b"\x1a");
    w.settle().await;
    assert_eq!(w.lp.child.written(), b"\x1a", "Ctrl+Z is pi's key");
    assert_eq!(w.lp.screen.suspended, 0, "pi has not stopped yet");

    w.lp.child.output(PI_STOPS_ITS_TUI);
    w.settle().await;
    assert_eq!(w.lp.screen.suspended, 1, "the clients stopped with pi");
    w.run_secs(30).await;
    assert!(w.lp.child.signals.is_empty(), "pi waits for its terminal");
    assert!(w.lp.screen.raw.is_empty(), "{:?}", w.lp.screen.raw);

    w.send(WorldEvent::Client(ClientEvent::Resumed {
        id: CLIENT,
        cols: COLS,
        rows: ROWS,
    }));
    w.settle().await;
    assert_eq!(
        w.lp.screen.raw, b"\x1b[>7u",
        "back from fg the shell had the terminal: pi's keyboard mode is pushed again"
    );
    assert_eq!(w.lp.child.signals, vec![libc::SIGCONT], "and pi is continued");
}

#[tokio::test(start_paused = true)]
async fn a_suspension_with_nobody_left_to_come_back_continues_pi() {
    let mut w = World::new();
    w.lp.child.output(PI_MODES);
    w.settle().await;
    w.stdin(b"\x1a");
    w.lp.child.output(PI_STOPS_ITS_TUI);
    w.settle().await;
    assert!(w.lp.child.signals.is_empty());
    w.leave(CLIENT);
    w.settle().await;
    assert_eq!(
        w.lp.child.signals,
        vec![libc::SIGCONT],
        "pi goes on working unattended"
    );
}

#[tokio::test(start_paused = true)]
async fn bracketed_paste_off_without_ctrl_z_is_only_a_mode_change() {
    let mut w = World::new();
    w.lp.child.output(PI_MODES);
    w.settle().await;
    w.lp.child.output(PI_STOPS_ITS_TUI);
    w.settle().await;
    assert_eq!(w.lp.screen.suspended, 0);
    assert!(w.lp.child.signals.is_empty());
}
