//! What the web view asks of the server's state: watching, a button's command, starting the web
//! view, and the server staying up for it.

use super::tests::{ack_saves, client_with_session, now, open, server, told, up};
use super::*;
use crate::bridge::UserRequest;
use crate::wire::{SessionCommand, Target, Up};

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
        terminal: None,
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
                    ev: SessionMsg::Request(r),
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

fn listings_told(fx: &[ServerEffect], id: u64) -> Vec<Vec<String>> {
    told(fx, id)
        .into_iter()
        .filter_map(|d| match d {
            Down::Listing { sessions: l } => {
                Some(l.iter().map(|e| format!("{} {}", e.name, e.attached)).collect())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_subscriber_hears_the_list_when_it_changes_and_only_then() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 7 }, now());
    let fx = up(&mut s, 7, Up::Subscribe);
    assert_eq!(
        listings_told(&fx, 7),
        vec![Vec::<String>::new()],
        "the list at once"
    );

    // A session comes: told when it is asked for (starting) and when a client follows it.
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(&mut s, 1, super::tests::new_session("api"));
    assert_eq!(listings_told(&fx, 7), vec![vec!["1:api 0".to_string()]]);
    let fx = s.handle(
        ServerEvent::Started {
            number: 1,
            result: Ok(()),
        },
        now(),
    );
    assert_eq!(listings_told(&fx, 7).last(), Some(&vec!["1:api 1".to_string()]));
    ack_saves(&mut s, &fx);

    // Typing changes nothing the list shows: nothing is told (the twin of the pushes above).
    let fx = up(&mut s, 1, Up::Input(b"x".to_vec()));
    assert!(listings_told(&fx, 7).is_empty(), "{fx:?}");
    // A plain client's list is an answer to it alone.
    s.handle(ServerEvent::Connected { id: 8 }, now());
    let fx = up(&mut s, 8, Up::List);
    assert!(listings_told(&fx, 7).is_empty());

    // The session goes: told.
    let fx = s.handle(
        ServerEvent::Ended {
            number: 1,
            code: 0,
            shutdown: false,
            farewell: Vec::new(),
        },
        now(),
    );
    assert_eq!(listings_told(&fx, 7), vec![Vec::<String>::new()]);

    // Gone, it hears nothing more.
    s.handle(ServerEvent::Gone { id: 7 }, now());
    let fx = up(&mut s, 1, super::tests::new_session("web"));
    assert!(told(&fx, 7).is_empty());
}

#[test]
fn a_subscriber_hears_every_sessions_note_shown_or_not_and_the_command_still_runs() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    s.handle(ServerEvent::Connected { id: 7 }, now());
    up(&mut s, 7, Up::Subscribe);
    let note = |bell, desktop| ServerEvent::Notify {
        number: n,
        text: "pokeshell stopped a stalled stream".into(),
        bell,
        desktop,
        command: "notify-send".into(),
    };
    let notes = |fx: &[ServerEffect]| -> Vec<(String, String)> {
        told(fx, 7)
            .into_iter()
            .filter_map(|d| match d {
                Down::Note { session, text } => Some((session.clone(), text.clone())),
                _ => None,
            })
            .collect()
    };
    // Attached to a terminal (which rings itself): the subscriber hears it too, named.
    let fx = s.handle(note(true, true), now());
    assert_eq!(
        notes(&fx),
        vec![(
            "1:api".to_string(),
            "pokeshell stopped a stalled stream".to_string()
        )]
    );
    // Bell and notification both off in the settings: nothing to raise.
    let fx = s.handle(note(false, false), now());
    assert!(notes(&fx).is_empty(), "{fx:?}");
    // Nobody attached: the subscriber hears it and the user's command runs as before (a page may
    // be closed; the subscriber is the web view, not a person looking).
    up(&mut s, 1, Up::Detach);
    let fx = s.handle(note(false, true), now());
    assert_eq!(notes(&fx).len(), 1);
    assert!(fx.iter().any(|e| matches!(e, ServerEffect::RunNotifyCommand(_))));
}

#[test]
fn ending_every_web_login_is_an_effect_for_the_asking_client() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 4 }, now());
    let fx = up(&mut s, 4, Up::WebLogoutAll);
    assert!(
        matches!(fx.as_slice(), [ServerEffect::WebLogoutAll { id: 4 }]),
        "{fx:?}"
    );
}
