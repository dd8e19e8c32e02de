//! The PTY with real children: exit codes, signals, stops, output into the mirror.

use super::*;
use std::sync::mpsc;
use std::time::Duration;

use crate::term::screen::HostCaps;

fn run(spec: &CommandSpec) -> (ChildExit, String) {
    let (exit, text, _) = run_counting(spec);
    (exit, text)
}

fn run_counting(spec: &CommandSpec) -> (ChildExit, String, u32) {
    let mirror = Arc::new(Mutex::new(Mirror::new(10, 40, HostCaps::default())));
    let (tx, rx) = mpsc::channel();
    let child = ChildPty::spawn(
        spec,
        10,
        40,
        mirror.clone(),
        Arc::new(AtomicBool::new(false)),
        move |e| {
            let _ = tx.send(e);
        },
    )
    .expect("spawn");
    assert!(child.pid() > 0);
    let (mut code, mut closed, mut stops) = (None, false, 0);
    while code.is_none() || !closed {
        match rx
            .recv_timeout(Duration::from_secs(10))
            .expect("child should exit in time")
        {
            PtyEvent::Exited(c) => code = Some(c),
            PtyEvent::Closed => closed = true,
            PtyEvent::Output => {}
            PtyEvent::Stopped => {
                stops += 1;
                // SAFETY: continuing the process group we spawned.
                unsafe { libc::kill(-child.pid(), libc::SIGCONT) };
            }
        }
    }
    let exit = code.unwrap();
    let text = mirror.lock().unwrap().screen().contents();
    (exit, text, stops)
}

#[test]
fn a_stopped_child_is_reported_and_can_be_continued() {
    let (exit, text, stops) =
        run_counting(&CommandSpec::shell("sh -c 'kill -STOP $$; echo resumed; exit 3'"));
    assert_eq!(stops, 1);
    assert_eq!(exit.code, 3);
    assert!(text.contains("resumed"), "{text}");
}

#[test]
fn exit_code_and_output() {
    let (exit, text) = run(&CommandSpec::shell("sh -c 'echo hello; exit 7'"));
    assert_eq!(
        exit,
        ChildExit {
            code: 7,
            signal: None
        }
    );
    assert!(text.contains("hello"), "{text}");
}

#[test]
fn death_by_signal_is_128_plus_n() {
    let (exit, _) = run(&CommandSpec::shell("sh -c 'kill -TERM $$'"));
    assert_eq!(
        exit,
        ChildExit {
            code: 128 + libc::SIGTERM,
            signal: Some(libc::SIGTERM)
        }
    );
}

#[test]
fn environment_is_scrubbed_and_term_set() {
    let mut spec = CommandSpec::shell("sh -c 'echo T=$TERM K=${KITTY_WINDOW_ID:-none} P=$POKESHELL'");
    spec.env.push(("EXTRA".into(), "1".into()));
    // SAFETY: tests in this module do not read KITTY_WINDOW_ID concurrently.
    unsafe { std::env::set_var("KITTY_WINDOW_ID", "3") };
    let (_, text) = run(&spec);
    assert!(text.contains("T=xterm-256color K=none P=1"), "{text}");
}
