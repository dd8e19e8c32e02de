//! The server's state driven as the performer drives it: events in, effects checked.

use super::*;
use crate::session::WorkspaceRequest;
use crate::wire::{Target, Up};

pub(super) fn now() -> Now {
    Now::new(0, 1_000_000)
}

pub(super) fn v(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// A server that came up with nothing saved, its first save done.
pub(super) fn server() -> ServerState {
    let mut s = ServerState::default();
    let fx = s.handle(
        ServerEvent::Restore {
            saved: Vec::new(),
            env: vec![("HOME".into(), "/h".into())],
            news: Vec::new(),
        },
        now(),
    );
    ack_saves(&mut s, &fx);
    s
}

/// Performs the saves the effects ask for, as the saver thread does.
pub(super) fn ack_saves(s: &mut ServerState, fx: &[ServerEffect]) -> Vec<ServerEffect> {
    let mut out = Vec::new();
    for e in fx {
        if let ServerEffect::SaveList { seq, .. } = e {
            out.extend(s.handle(ServerEvent::Saved { seq: *seq }, now()));
        }
    }
    out
}

pub(super) fn up(s: &mut ServerState, id: u64, up: Up) -> Vec<ServerEffect> {
    s.handle(ServerEvent::Up { id, up }, now())
}

pub(super) fn open(target: Target) -> Up {
    Up::Open {
        target,
        cols: 100,
        rows: 30,
        caps: b"caps".to_vec(),
        caps_follow: false,
        env: vec![("TERM".into(), "xterm".into())],
        watch: false,
        terminal: None,
    }
}

pub(super) fn new_session(name: &str) -> Up {
    open(Target::New {
        name: Some(name.into()),
        dir: "/tmp".into(),
        args: v(&["--", "--model", "m"]),
        base: None,
    })
}

/// Client `id` connects and starts a session named `name`, which comes up; returns its number.
pub(super) fn client_with_session(s: &mut ServerState, id: u64, name: &str) -> u32 {
    s.handle(ServerEvent::Connected { id }, now());
    let fx = up(s, id, new_session(name));
    let start = starts_asked(&fx)
        .first()
        .map(|s| (*s).clone())
        .expect("a session is started");
    assert_eq!((start.cols, start.rows), (100, 30), "at the client's size");
    assert_eq!(start.spec.env, vec![("TERM".to_string(), "xterm".to_string())]);
    let fx = s.handle(
        ServerEvent::Started {
            number: start.spec.number,
            result: Ok(()),
        },
        now(),
    );
    assert!(fx.iter().any(
        |e| matches!(e, ServerEffect::Follow { id: i, number, .. } if *i == id && *number == start.spec.number)
    ));
    ack_saves(s, &fx);
    start.spec.number
}

/// The sessions the effects ask to start, in order.
pub(super) fn starts_asked(fx: &[ServerEffect]) -> Vec<&SessionStart> {
    fx.iter()
        .filter_map(|e| match e {
            ServerEffect::Start(start) => Some(start),
            _ => None,
        })
        .collect()
}

pub(super) fn told(fx: &[ServerEffect], id: u64) -> Vec<&Down> {
    fx.iter()
        .filter_map(|e| match e {
            ServerEffect::Tell { id: i, down } if *i == id => Some(down),
            _ => None,
        })
        .collect()
}

pub(super) fn listing(s: &mut ServerState) -> Vec<crate::wire::Listing> {
    s.handle(ServerEvent::Connected { id: 99 }, now());
    let fx = up(s, 99, Up::List);
    s.handle(ServerEvent::Gone { id: 99 }, now());
    match told(&fx, 99).first() {
        Some(Down::Listing { sessions: l }) => l.clone(),
        other => panic!("no listing: {other:?}"),
    }
}

#[test]
fn a_client_attaches_to_the_session_it_opened_and_its_keys_reach_only_it() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    assert_eq!(s.following(1), Some(n));
    let fx = up(&mut s, 1, Up::Input(b"x".to_vec()));
    assert!(matches!(
        fx.as_slice(),
        [ServerEffect::ToSession { number, ev: SessionMsg::Client(ClientMsg::Input { id: 1, .. }) }] if *number == n
    ));
    assert_eq!(listing(&mut s)[0].attached, 1);
}

#[test]
fn a_session_that_cannot_start_is_an_error_for_its_client_and_leaves_no_trace() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    up(&mut s, 1, new_session("api"));
    let fx = s.handle(
        ServerEvent::Started {
            number: 1,
            result: Err("/nope is not a directory".into()),
        },
        now(),
    );
    assert!(matches!(told(&fx, 1).as_slice(), [Down::Error { message }] if message.contains("/nope")));
    assert!(listing(&mut s).is_empty());
}

/// The session's end and its start come by different ways: a program that exits at once may end
/// before the server hears it started. The terminal waiting for it is told, not left waiting.
#[test]
fn a_session_that_ends_before_its_start_is_heard_tells_the_terminal_waiting_for_it() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(&mut s, 1, new_session("quick"));
    let number = starts_asked(&fx)[0].spec.number;
    let fx = s.handle(
        ServerEvent::Ended {
            number,
            code: 7,
            shutdown: false,
            farewell: Vec::new(),
        },
        now(),
    );
    assert!(
        matches!(told(&fx, 1).as_slice(), [Down::Exited { code: 7, .. }]),
        "the waiting terminal hears the end: {fx:?}"
    );
    let fx = s.handle(
        ServerEvent::Started {
            number,
            result: Ok(()),
        },
        now(),
    );
    assert!(
        !fx.iter().any(|e| matches!(e, ServerEffect::Follow { .. })),
        "nobody follows a session that ended: {fx:?}"
    );
    assert!(listing(&mut s).is_empty());
}

#[test]
fn detach_lets_the_client_go_and_the_session_runs_on() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    let fx = up(&mut s, 1, Up::Detach);
    assert!(
        fx.iter()
            .any(|e| matches!(e, ServerEffect::Unfollow { id: 1, number } if *number == n))
    );
    assert!(matches!(told(&fx, 1).as_slice(), [Down::Detached { reason }] if reason.contains("1:api")));
    assert_eq!(s.following(1), None);
    assert_eq!(listing(&mut s)[0].attached, 0);
    // A keyboard request works the same way.
    let n2 = client_with_session(&mut s, 2, "web");
    let fx = s.handle(
        ServerEvent::Request {
            id: 2,
            req: WorkspaceRequest::Detach,
        },
        now(),
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, ServerEffect::Unfollow { id: 2, number } if *number == n2))
    );
    assert!(!s.done(), "the sessions run on");
}

#[test]
fn switch_moves_the_client_and_a_missing_session_is_a_notice() {
    let mut s = server();
    let a = client_with_session(&mut s, 1, "api");
    let b = client_with_session(&mut s, 2, "web");
    let fx = s.handle(
        ServerEvent::Request {
            id: 1,
            req: WorkspaceRequest::SwitchTo(b),
        },
        now(),
    );
    let unfollow = fx
        .iter()
        .position(|e| matches!(e, ServerEffect::Unfollow { id: 1, number } if *number == a));
    let follow = fx
        .iter()
        .position(|e| matches!(e, ServerEffect::Follow { id: 1, number, .. } if *number == b));
    assert!(
        unfollow.is_some() && follow > unfollow,
        "leaves, then follows: {fx:?}"
    );
    assert_eq!(s.following(1), Some(b));
    let l = listing(&mut s);
    assert_eq!((l[0].attached, l[1].attached), (0, 2));
    let fx = s.handle(
        ServerEvent::Request {
            id: 1,
            req: WorkspaceRequest::SwitchTo(7),
        },
        now(),
    );
    assert!(matches!(
        fx.as_slice(),
        [ServerEffect::ToSession { ev: SessionMsg::Notice(t), .. }] if t.contains("no session 7")
    ));
}

#[test]
fn a_new_session_from_the_keys_that_cannot_start_is_a_notice_and_the_terminal_stays() {
    let mut s = server();
    let a = client_with_session(&mut s, 1, "api");
    let fx = s.handle(
        ServerEvent::Request {
            id: 1,
            req: WorkspaceRequest::NewSession { dir: "/nope".into() },
        },
        now(),
    );
    let start = starts_asked(&fx)
        .first()
        .map(|s| (*s).clone())
        .expect("asked to start");
    assert_eq!(
        start.spec.argv,
        Vec::<String>::new(),
        "the current one's options, a fresh pi"
    );
    let fx = s.handle(
        ServerEvent::Started {
            number: start.spec.number,
            result: Err("/nope: No such file or directory".into()),
        },
        now(),
    );
    assert!(
        matches!(fx.as_slice(), [ServerEffect::ToSession { number, ev: SessionMsg::Notice(t) }, ..]
            if *number == a && t.contains("/nope")),
        "{fx:?}"
    );
    assert!(told(&fx, 1).is_empty(), "the terminal is not ended");
    assert_eq!(s.following(1), Some(a));
}

#[test]
fn a_client_that_stops_reading_is_detached_told_why_and_not_counted() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    let fx = s.handle(
        ServerEvent::Lagged {
            id: 1,
            bound: 32 << 20,
        },
        now(),
    );
    let unfollow = fx
        .iter()
        .position(|e| matches!(e, ServerEffect::Unfollow { id: 1, number } if *number == n));
    let tell = fx
        .iter()
        .position(|e| matches!(e, ServerEffect::Tell { id: 1, down: Down::Detached { reason } } if reason.contains("stopped reading and fell 32 MiB behind") && !reason.contains("attach")));
    assert!(
        unfollow.is_some() && tell > unfollow,
        "its backlog goes before the word: {fx:?}"
    );
    assert_eq!(listing(&mut s)[0].attached, 0, "ls does not count it");
    let fx = up(&mut s, 1, Up::Input(b"x".to_vec()));
    assert!(fx.is_empty(), "its keys no longer reach pi");
}

#[test]
fn keys_typed_while_the_session_starts_reach_it_once_it_runs_after_the_attach() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(&mut s, 1, new_session("api"));
    let number = starts_asked(&fx)
        .first()
        .map(|s| s.spec.number)
        .expect("a session is started");
    for key in [b"ab".as_slice(), b"c"] {
        let fx = up(&mut s, 1, Up::Input(key.to_vec()));
        assert!(fx.is_empty(), "nothing runs yet to take them: {fx:?}");
    }
    let fx = s.handle(
        ServerEvent::Started {
            number,
            result: Ok(()),
        },
        now(),
    );
    let follow = fx
        .iter()
        .position(|e| matches!(e, ServerEffect::Follow { id: 1, .. }));
    let typed = fx.iter().position(|e| {
        matches!(e, ServerEffect::ToSession { number: n, ev: SessionMsg::Client(ClientMsg::Input { id: 1, bytes, .. }) }
            if *n == number && bytes == b"abc")
    });
    assert!(
        follow.is_some() && typed > follow,
        "the keys follow the attach, in order: {fx:?}"
    );
    // Once attached, keys go on as usual, and nothing typed ahead is sent twice.
    let fx = up(&mut s, 1, Up::Input(b"d".to_vec()));
    assert!(
        matches!(fx.as_slice(), [ServerEffect::ToSession { ev: SessionMsg::Client(ClientMsg::Input { bytes, .. }), .. }] if bytes == b"d"),
        "{fx:?}"
    );
}

#[test]
fn keys_typed_without_a_session_on_the_way_are_dropped() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(&mut s, 1, Up::Input(b"x".to_vec()));
    assert!(fx.is_empty(), "{fx:?}");
    let n = client_with_session(&mut s, 2, "api");
    let fx = up(
        &mut s,
        1,
        open(Target::Attach {
            name: Some("api".into()),
        }),
    );
    assert!(
        !fx.iter().any(|e| matches!(
            e,
            ServerEffect::ToSession {
                ev: SessionMsg::Client(ClientMsg::Input { .. }),
                ..
            }
        )),
        "a key typed before asking for any session is not kept: {fx:?}"
    );
    assert_eq!(s.following(1), Some(n));
}
