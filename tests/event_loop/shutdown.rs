//! Ending through the real loop, as the server ends a session: SIGTERM is passed on to the child,
//! which is killed when it outlives the grace; terminals leaving end nothing; the child's exit ends
//! the loop with that exit.

use std::time::Duration;

use pokeshell::server::event_loop::{Screen, Signal, WorldEvent};
use pokeshell::term::pty::{ChildExit, PtyEvent};

use super::world::{CLIENT, World};

#[tokio::test(start_paused = true)]
async fn sigterm_is_passed_on_and_the_child_is_killed_after_five_seconds() {
    let mut w = World::new();
    w.send(WorldEvent::Signal(Signal::Term));
    w.run_for_ms(4_900).await;
    assert_eq!(w.lp.child.signals, vec![libc::SIGTERM], "the grace is running");
    w.run_for_ms(200).await;
    assert_eq!(w.lp.child.signals, vec![libc::SIGTERM, libc::SIGKILL]);
    w.run_secs(30).await;
    assert_eq!(w.lp.child.signals.len(), 2, "killed once");
}

#[tokio::test(start_paused = true)]
async fn a_second_sigterm_does_not_push_the_kill_back() {
    let mut w = World::new();
    w.send(WorldEvent::Signal(Signal::Term));
    w.run_secs(3).await;
    w.send(WorldEvent::Signal(Signal::Term));
    w.run_for_ms(2_100).await;
    assert_eq!(
        w.lp.child.signals,
        vec![libc::SIGTERM, libc::SIGTERM, libc::SIGKILL],
        "killed 5 s after the first"
    );
}

#[tokio::test(start_paused = true)]
async fn the_last_terminal_leaving_leaves_pi_running() {
    let mut w = World::new();
    w.stdin(b"go on\r");
    w.settle().await;
    w.leave(CLIENT);
    w.run_secs(30).await;
    assert!(
        w.lp.child.signals.is_empty(),
        "a session outlives its terminals: {:?}",
        w.lp.child.signals
    );
    assert!(!w.lp.shutting_down());
    assert_eq!(w.lp.screen.attached(), 0);
    w.send(WorldEvent::Signal(Signal::Term));
    w.run_for_ms(5_100).await;
    assert_eq!(
        w.lp.child.signals,
        vec![libc::SIGTERM, libc::SIGKILL],
        "ending it is the server's call"
    );
}

#[tokio::test(start_paused = true)]
async fn the_childs_exit_ends_the_loop_with_that_exit() {
    let mut w = World::new();
    w.stdin(b"bye\r");
    let killed = ChildExit {
        code: 143,
        signal: Some(libc::SIGTERM),
    };
    w.send(WorldEvent::Pty(PtyEvent::Exited(killed)));
    let exit = w.run_for(Duration::from_secs(60)).await;
    assert_eq!(exit, Some(killed));
    assert_eq!(
        w.lp.child.written(),
        b"bye\r",
        "what came before the exit was handled"
    );
}
