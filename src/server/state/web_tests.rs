//! What the web view asks of the server's state: watching, a button's command, starting the web
//! view, and the server staying up for it.

use super::tests::{ack_saves, client_with_session, now, open, server, told, up};
use super::*;
use crate::ipc::wire::{SessionCommand, Target, Up};
use crate::pi::bridge::protocol::UserRequest;

#[test]
fn a_watching_client_follows_with_its_watch_flag_and_a_terminal_without() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let Up::Open {
        target,
        cols,
        rows,
        caps,
        caps_follow,
        env,
        ..
    } = open(Target::Attach {
        name: Some("api".into()),
    })
    else {
        unreachable!("open() builds an open")
    };
    let watching = Up::Open {
        target,
        cols,
        rows,
        caps,
        caps_follow,
        env,
        watch: true,
    };
    let fx = up(&mut s, 2, watching);
    let follows: Vec<(u64, bool)> = fx
        .iter()
        .filter_map(|e| match e {
            ServerEffect::Follow {
                id, number, watch, ..
            } if *number == n => Some((*id, *watch)),
            _ => None,
        })
        .collect();
    assert_eq!(follows, vec![(2, true)]);
    s.handle(ServerEvent::Connected { id: 3 }, now());
    let fx = up(&mut s, 3, open(Target::Attach { name: None }));
    assert!(
        fx.iter().any(|e| matches!(
            e,
            ServerEffect::Follow {
                id: 3,
                watch: false,
                ..
            }
        )),
        "a terminal's open does not watch"
    );
}

#[test]
fn a_command_goes_to_the_followed_session_and_without_one_is_a_clear_error() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 5 }, now());
    let fx = up(&mut s, 5, Up::Command(SessionCommand::Poke));
    assert!(
        matches!(told(&fx, 5).as_slice(), [Down::Error { message }] if message.contains("open one first"))
    );
    assert!(!fx.iter().any(|e| matches!(e, ServerEffect::ToSession { .. })));

    let n = client_with_session(&mut s, 1, "api");
    let cases = [
        (SessionCommand::Poke, UserRequest::Poke),
        (
            SessionCommand::Handoff {
                focus: Some("tests".into()),
            },
            UserRequest::Handoff {
                focus: Some("tests".into()),
            },
        ),
        (SessionCommand::Supervision { on: false }, UserRequest::PokeOff),
        (SessionCommand::Supervision { on: true }, UserRequest::PokeOn),
    ];
    for (command, want) in cases {
        let fx = up(&mut s, 1, Up::Command(command));
        let got: Vec<&UserRequest> = fx
            .iter()
            .filter_map(|e| match e {
                ServerEffect::ToSession {
                    number,
                    ev: WorldEvent::Request(r),
                } if *number == n => Some(r),
                _ => None,
            })
            .collect();
        assert_eq!(got, vec![&want]);
    }
}

#[test]
fn web_is_an_effect_and_a_listening_web_view_keeps_the_server_up() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(
        &mut s,
        1,
        Up::Web {
            listen: Some("127.0.0.1:9".into()),
        },
    );
    assert!(matches!(
        fx.as_slice(),
        [ServerEffect::StartWeb { id: 1, listen: Some(l) }] if l == "127.0.0.1:9"
    ));
    s.handle(ServerEvent::WebListening, now());
    let fx = s.handle(ServerEvent::Gone { id: 1 }, now());
    ack_saves(&mut s, &fx);
    assert!(!s.done(), "a page may still ask for a session");

    // The twin without the web view is done once its last client leaves.
    let mut twin = server();
    twin.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = twin.handle(ServerEvent::Gone { id: 1 }, now());
    ack_saves(&mut twin, &fx);
    assert!(twin.done());
}
