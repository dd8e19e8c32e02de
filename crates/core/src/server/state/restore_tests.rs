//! Issue 21, item 3: saved sessions come back a few at a time while the server answers, and one
//! server runs at most `MAX_SESSIONS`.

use super::tests::{ack_saves, client_with_session, listing, new_session, now, starts_asked, told, up, v};
use super::*;
use crate::server::restore_plan::{Found, MAX_SESSIONS, RESTORE_PARALLEL};
use crate::wire::{Target, Up};

fn saved(n: u32) -> (SavedSession, Found) {
    let s = SavedSession {
        spec: SessionSpec {
            number: n,
            name: format!("s{n}"),
            dir: "/w".into(),
            argv: v(&["--"]),
            ..SessionSpec::default()
        },
        session_file: None,
        mid_run: false,
    };
    let found = Found {
        dir: Ok(()),
        session_file: None,
    };
    (s, found)
}

/// A server that found `count` saved sessions: what it did at once.
fn restoring(count: u32) -> (ServerState, Vec<ServerEffect>) {
    let mut s = ServerState::default();
    let fx = s.handle(
        ServerEvent::Restore {
            saved: (1..=count).map(saved).collect(),
            env: Vec::new(),
            news: Vec::new(),
        },
        now(),
    );
    (s, fx)
}

fn starts(fx: &[ServerEffect]) -> Vec<u32> {
    starts_asked(fx).iter().map(|s| s.spec.number).collect()
}

fn started(s: &mut ServerState, number: u32, result: Result<(), String>) -> Vec<ServerEffect> {
    s.handle(ServerEvent::Started { number, result }, now())
}

fn restoring_count(fx: &[ServerEffect]) -> Option<u32> {
    fx.iter().rev().find_map(|e| match e {
        ServerEffect::Restoring(n) => Some(*n),
        _ => None,
    })
}

#[test]
fn saved_sessions_start_a_few_at_a_time_and_are_listed_and_awaited_meanwhile() {
    let (mut s, fx) = restoring(10);
    assert_eq!(starts(&fx), vec![1, 2, 3, 4], "{RESTORE_PARALLEL} at once");
    assert_eq!(restoring_count(&fx), Some(10));
    ack_saves(&mut s, &fx);
    // The server answers at once: all ten are listed, and an attach to one not started waits.
    s.handle(ServerEvent::Connected { id: 1 }, now());
    assert_eq!(listing(&mut s).len(), 10);
    let attach = open_target(Target::Attach {
        name: Some("s9".into()),
    });
    let fx = up(&mut s, 1, attach);
    assert!(told(&fx, 1).is_empty(), "waits: {fx:?}");
    // One up (or failed): the next one starts, one at a time.
    let fx = started(&mut s, 2, Ok(()));
    assert_eq!(starts(&fx), vec![5]);
    assert_eq!(restoring_count(&fx), Some(9));
    let fx = started(&mut s, 1, Err("no pi".into()));
    assert_eq!(starts(&fx), vec![6]);
    for n in [3, 4, 5, 6, 7, 8] {
        started(&mut s, n, Ok(()));
    }
    let fx = started(&mut s, 9, Ok(()));
    assert!(
        fx.iter()
            .any(|e| matches!(e, ServerEffect::Follow { id: 1, number: 9, .. })),
        "the waiting client follows it: {fx:?}"
    );
    let fx = started(&mut s, 10, Ok(()));
    assert!(starts(&fx).is_empty());
    assert_eq!(restoring_count(&fx), Some(0));
}

fn open_target(target: Target) -> Up {
    Up::Open {
        target,
        cols: 80,
        rows: 24,
        caps: Vec::new(),
        caps_follow: false,
        env: Vec::new(),
        watch: false,
        terminal: None,
    }
}

#[test]
fn past_the_bound_saved_sessions_stay_saved_and_said_and_a_new_one_is_refused() {
    let extra = 3;
    let (mut s, fx) = restoring(MAX_SESSIONS as u32 + extra);
    assert_eq!(s.table.len(), MAX_SESSIONS);
    let said = fx
        .iter()
        .find_map(|e| match e {
            ServerEffect::Log(m) if m.contains("not brought back") => Some(m.clone()),
            _ => None,
        })
        .expect("said in the log");
    assert!(
        said.starts_with("3 saved sessions") && said.contains("at most 64") && said.contains("66:s66 in /w"),
        "{said}"
    );
    // They stay in the saved list.
    let list = fx
        .iter()
        .find_map(|e| match e {
            ServerEffect::SaveList { list, .. } => Some(list.clone()),
            _ => None,
        })
        .expect("saved");
    assert_eq!(list.len(), MAX_SESSIONS + extra as usize);
    ack_saves(&mut s, &fx);
    // Told to the next client, whose new session is refused.
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(&mut s, 1, new_session("one-more"));
    assert!(starts(&fx).is_empty(), "{fx:?}");
    let told = told(&fx, 1);
    assert!(
        told.iter()
            .any(|d| matches!(d, Down::Notice { message } if message.contains("not brought back"))),
        "{told:?}"
    );
    assert!(
        told.iter()
            .any(|d| matches!(d, Down::Error { message } if message.contains("already has 64 sessions"))),
        "{told:?}"
    );
}

#[test]
fn the_last_session_under_the_bound_starts_and_the_next_is_refused() {
    let (mut s, fx) = restoring(MAX_SESSIONS as u32 - 1);
    ack_saves(&mut s, &fx);
    // Asserts it starts.
    client_with_session(&mut s, 1, "last");
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(&mut s, 2, new_session("past"));
    assert!(starts(&fx).is_empty());
}

#[test]
fn a_shutdown_while_restoring_starts_no_more_and_keeps_them_saved() {
    let (mut s, fx) = restoring(10);
    ack_saves(&mut s, &fx);
    let fx = s.handle(ServerEvent::Shutdown, now());
    assert!(starts(&fx).is_empty());
    for n in 1..=4 {
        let fx = started(&mut s, n, Ok(()));
        assert!(starts(&fx).is_empty(), "nothing more starts: {fx:?}");
        s.handle(
            ServerEvent::Ended {
                number: n,
                code: 0,
                shutdown: true,
                farewell: Vec::new(),
            },
            now(),
        );
    }
    assert!(s.done(), "the server ends");
    assert_eq!(s.saved.as_ref().map(Vec::len), Some(10), "all still saved");
}

#[test]
fn a_queued_session_that_is_killed_never_starts() {
    let (mut s, fx) = restoring(6);
    ack_saves(&mut s, &fx);
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let attach = open_target(Target::Attach {
        name: Some("s6".into()),
    });
    up(&mut s, 1, attach);
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        Up::Kill {
            name: "s6".into(),
            from: None,
        },
    );
    assert!(
        told(&fx, 1)
            .iter()
            .any(|d| matches!(d, Down::Error { message } if message.contains("ended before it came back"))),
        "{fx:?}"
    );
    let fx = started(&mut s, 1, Ok(()));
    assert_eq!(starts(&fx), vec![5]);
    let fx = started(&mut s, 2, Ok(()));
    assert!(starts(&fx).is_empty(), "6 was killed: {fx:?}");
    assert_eq!(listing(&mut s).len(), 5);
}

/// Issue 34, low 9: a list from an older pokeshell may hold a name with `:` (a session made in a
/// directory named `host:x`), which `attach` would read as `DEST:NAME`. It comes back under a name
/// that can be attached (`:` made `-`), and the rename is said.
#[test]
fn a_saved_name_with_a_colon_comes_back_attachable_and_the_rename_is_said() {
    let (mut old, found) = saved(3);
    old.spec.name = "host:x".into();
    let mut s = ServerState::default();
    let fx = s.handle(
        ServerEvent::Restore {
            saved: vec![(old, found)],
            env: Vec::new(),
            news: Vec::new(),
        },
        now(),
    );
    let start = starts_asked(&fx);
    assert_eq!(start.len(), 1, "{fx:?}");
    assert_eq!((start[0].spec.number, start[0].spec.name.as_str()), (3, "host-x"));
    assert_eq!(s.table.find(Some("host-x")), Ok(3));
    let said = fx
        .iter()
        .find_map(|e| match e {
            ServerEffect::Log(m) if m.contains("came back named") => Some(m.clone()),
            _ => None,
        })
        .expect("said in the log");
    assert!(
        said.contains("3:host:x came back named host-x") && said.contains("DEST:NAME"),
        "{said}"
    );
}
