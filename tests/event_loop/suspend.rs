//! Job control through the real loop: pi suspending itself on Ctrl+Z stops pokeshell with it; back
//! from `fg`, the host's modes are set again and pi is continued.

use super::world::World;

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
    assert_eq!(w.lp.screen.suspended, 1, "pokeshell stopped with pi");
    assert_eq!(
        w.lp.screen.raw, b"\x1b[>7u",
        "back from fg the shell had the terminal: pi's keyboard mode is pushed again"
    );
    assert_eq!(w.lp.child.signals, vec![libc::SIGCONT], "and pi is continued");
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
