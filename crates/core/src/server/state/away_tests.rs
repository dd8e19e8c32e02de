//! The server's state and the list of events that need the person: a session's report becomes a
//! push only while nobody is with it, a capability link's act reaches the session once and is
//! refused after, and a visible page keeps pushes away.

use super::tests::{client_with_session, now, server, told, up};
use super::*;
use crate::brief::{Attention, Need, NeedKind, SessionBrief};
use crate::server::away::{Act, Push};
use crate::wire::Up;

fn question() -> Report {
    Report {
        brief: Some(SessionBrief::new(
            1,
            "api",
            "/w",
            Attention::Question,
            "waiting for you",
        )),
        need: Some(Need {
            kind: NeedKind::Answer { yes_no: true },
            quote: "Should I migrate the old rows?".into(),
        }),
        ..Report::default()
    }
}

fn pushes(fx: &[ServerEffect]) -> Vec<&Push> {
    fx.iter()
        .filter_map(|e| match e {
            ServerEffect::Push(p) => Some(p),
            _ => None,
        })
        .collect()
}

fn answers(fx: &[ServerEffect]) -> Vec<&AwayAnswer> {
    fx.iter()
        .filter_map(|e| match e {
            ServerEffect::ToSession {
                ev: SessionMsg::Away(a),
                ..
            } => Some(a),
            _ => None,
        })
        .collect()
}

#[test]
fn a_question_with_nobody_attached_is_pushed_and_its_link_answers_it_once() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    up(&mut s, 1, Up::Detach);
    let fx = s.handle(
        ServerEvent::Report {
            number: n,
            report: question(),
        },
        now(),
    );
    let p = pushes(&fx);
    assert_eq!(p.len(), 1, "{fx:?}");
    assert_eq!(p[0].event.label, "1:api");
    let event = p[0].event.id;
    // The web view's connection passes the link's act on.
    s.handle(ServerEvent::Connected { id: 9 }, now());
    let fx = up(
        &mut s,
        9,
        Up::Act {
            session: n,
            event,
            act: Act::Yes,
        },
    );
    let a = answers(&fx);
    assert_eq!(a.len(), 1);
    assert_eq!((a[0].act, a[0].refused.as_ref()), (Act::Yes, None));
    assert!(a[0].about.contains("Should I migrate"), "{:?}", a[0].about);
    assert!(matches!(told(&fx, 9).as_slice(), [Down::Acted { message }] if message.contains("Yes.")));
    // Twice: refused, and the session records the refusal.
    let fx = up(
        &mut s,
        9,
        Up::Act {
            session: n,
            event,
            act: Act::No,
        },
    );
    assert!(matches!(told(&fx, 9).as_slice(), [Down::Error { message }] if message.contains("moved on")));
    let a = answers(&fx);
    assert_eq!(a.len(), 1);
    assert!(a[0].refused.is_some());
}

#[test]
fn healthy_twin_a_terminal_typing_at_the_session_keeps_the_push_back() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    s.handle(ServerEvent::Typed { id: 1 }, now());
    let fx = s.handle(
        ServerEvent::Report {
            number: n,
            report: question(),
        },
        now(),
    );
    assert!(pushes(&fx).is_empty(), "{fx:?}");
    assert!(
        fx.iter().any(|e| matches!(e, ServerEffect::AwayTimer(Some(_)))),
        "looked at again once they would be away"
    );
}

#[test]
fn healthy_twin_a_visible_page_on_the_session_keeps_the_push_back() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    up(&mut s, 1, Up::Visible { visible: true });
    let fx = s.handle(
        ServerEvent::Report {
            number: n,
            report: question(),
        },
        now(),
    );
    assert!(pushes(&fx).is_empty(), "{fx:?}");
}

#[test]
fn a_link_for_an_ended_session_is_refused_and_reaches_nothing() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    up(&mut s, 1, Up::Detach);
    let fx = s.handle(
        ServerEvent::Report {
            number: n,
            report: question(),
        },
        now(),
    );
    let event = pushes(&fx)[0].event.id;
    let fx = s.handle(
        ServerEvent::Ended {
            number: n,
            code: 0,
            shutdown: false,
            farewell: Vec::new(),
        },
        now(),
    );
    let ended = pushes(&fx);
    assert_eq!(ended.len(), 1, "it ended on its own: {fx:?}");
    s.handle(ServerEvent::Connected { id: 9 }, now());
    let fx = up(
        &mut s,
        9,
        Up::Act {
            session: n,
            event,
            act: Act::Yes,
        },
    );
    assert!(answers(&fx).is_empty(), "nothing reaches a session that is gone");
    assert!(matches!(told(&fx, 9).as_slice(), [Down::Error { message }] if message.contains("ended")));
}
