//! Driving sessions through the server's core: what their end does to waits and messages.

use super::drive_tests::{error, reached, send, wait};
use super::tests::{ack_saves, client_with_session, now, server, told, up};
use super::*;
use crate::drive::{Outcome, Until};
use crate::wire::Up;

#[test]
fn waits_end_with_the_session_and_messages_on_their_way_are_refused() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "w");
    for (id, until) in [(2, Until::Idle), (3, Until::Exited), (4, Until::NeedsYou)] {
        s.handle(ServerEvent::Connected { id }, now());
        up(&mut s, id, wait("w", until));
    }
    s.handle(ServerEvent::Connected { id: 5 }, now());
    up(&mut s, 5, send("w", "hi", None));
    let fx = s.handle(
        ServerEvent::Ended {
            number: n,
            code: 0,
            shutdown: false,
            farewell: Vec::new(),
        },
        now(),
    );
    assert_eq!(reached(&fx, 2), Some(Outcome::Ended));
    assert_eq!(reached(&fx, 3), Some(Outcome::Reached));
    assert_eq!(reached(&fx, 4), Some(Outcome::Ended));
    assert!(error(&fx, 5).contains("ended before it answered"));
    assert!(matches!(
        told(&fx, 3).as_slice(),
        [Down::Reached { code: Some(0), .. }]
    ));
}

#[test]
fn a_wait_for_the_end_of_a_session_that_just_went_is_over_not_an_error() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "w");
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        Up::Kill {
            name: "w".into(),
            from: None,
        },
    );
    ack_saves(&mut s, &fx);
    // Being ended: the wait waits for the end.
    s.handle(ServerEvent::Connected { id: 3 }, now());
    assert_eq!(reached(&up(&mut s, 3, wait("w", Until::Exited)), 3), None);
    let ended = ServerEvent::Ended {
        number: n,
        code: 143,
        shutdown: false,
        farewell: Vec::new(),
    };
    let fx = s.handle(ended, now());
    assert!(matches!(
        told(&fx, 3).as_slice(),
        [Down::Reached { outcome: Outcome::Reached, code: Some(143), session, .. }] if session == "1:w"
    ));
    // Gone: told at once, by name, number or label; a wait for another state is an error.
    for name in ["w", "1", "1:w"] {
        s.handle(ServerEvent::Connected { id: 4 }, now());
        assert_eq!(
            reached(&up(&mut s, 4, wait(name, Until::Exited)), 4),
            Some(Outcome::Reached)
        );
    }
    s.handle(ServerEvent::Connected { id: 5 }, now());
    assert!(error(&up(&mut s, 5, wait("w", Until::Idle)), 5).contains("no session named"));
}
