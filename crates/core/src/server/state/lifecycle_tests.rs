//! The server's state over sessions' lives: kills, ends, restarts, saves, notifications.

use super::tests::{
    ack_saves, client_with_session, listing, new_session, now, server, starts_asked, told, up, v,
};
use super::*;
use crate::wire::Up;

#[test]
fn kill_answers_once_the_list_without_the_session_is_on_disk() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        Up::Kill {
            name: "api".into(),
            from: None,
        },
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, ServerEffect::ToSession { ev: SessionMsg::Signal(Signal::Term), number } if *number == n))
    );
    assert!(told(&fx, 2).is_empty(), "no answer before the save");
    let saved = fx.iter().find_map(|e| match e {
        ServerEffect::SaveList { list, .. } => Some(list.clone()),
        _ => None,
    });
    assert_eq!(saved, Some(Vec::new()));
    let fx = ack_saves(&mut s, &fx);
    assert!(matches!(told(&fx, 2).as_slice(), [Down::Done { message }] if message.contains("1:api")));
    let fx = s.handle(
        ServerEvent::Ended {
            number: n,
            code: 0,
            shutdown: false,
            farewell: b"bye".to_vec(),
        },
        now(),
    );
    assert!(matches!(told(&fx, 1).as_slice(), [Down::Exited { code: 0, .. }]));
}

#[test]
fn a_session_killed_while_it_starts_is_ended_once_it_runs() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    up(&mut s, 1, new_session("api"));
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        Up::Kill {
            name: "api".into(),
            from: None,
        },
    );
    ack_saves(&mut s, &fx);
    let fx = s.handle(
        ServerEvent::Started {
            number: 1,
            result: Ok(()),
        },
        now(),
    );
    assert!(
        fx.iter().any(|e| matches!(
            e,
            ServerEffect::ToSession {
                number: 1,
                ev: SessionMsg::Signal(Signal::Term)
            }
        )),
        "{fx:?}"
    );
    assert!(listing(&mut s).is_empty());
}

#[test]
fn a_session_that_ends_tells_its_clients_and_the_server_ends_after_the_last() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    let fx = s.handle(
        ServerEvent::Ended {
            number: n,
            code: 3,
            shutdown: false,
            farewell: b"bye".to_vec(),
        },
        now(),
    );
    assert!(matches!(told(&fx, 1).as_slice(), [Down::Exited { code: 3, farewell }] if farewell == b"bye"));
    assert!(!s.done(), "the list is not saved yet");
    ack_saves(&mut s, &fx);
    s.handle(ServerEvent::Gone { id: 1 }, now());
    assert!(s.done());
}

#[test]
fn a_server_restart_brings_back_the_saved_sessions_and_resumes_their_runs() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    let brief_at = Report {
        brief: None,
        base: None,
        session_file: Some("/s/1.jsonl".into()),
        mid_run: true,
        ..Report::default()
    };
    let fx = s.handle(
        ServerEvent::Report {
            number: n,
            report: brief_at,
        },
        now(),
    );
    ack_saves(&mut s, &fx);
    let fx = s.handle(ServerEvent::Shutdown, now());
    assert!(fx.iter().any(|e| matches!(
        e,
        ServerEffect::ToSession {
            ev: SessionMsg::Signal(Signal::Term),
            ..
        }
    )));
    let saved = fx
        .iter()
        .find_map(|e| match e {
            ServerEffect::SaveList { list, .. } => Some(list.clone()),
            _ => None,
        })
        .unwrap_or_else(|| s.saved.clone().unwrap_or_default());
    // pi gives up its run as it is ended: the list saved at the signal stands.
    let fx = s.handle(
        ServerEvent::Report {
            number: n,
            report: Report::default(),
        },
        now(),
    );
    assert!(!fx.iter().any(|e| matches!(e, ServerEffect::SaveList { .. })));
    let fx = s.handle(
        ServerEvent::Ended {
            number: n,
            code: 0,
            shutdown: true,
            farewell: Vec::new(),
        },
        now(),
    );
    assert!(matches!(told(&fx, 1).as_slice(), [Down::Detached { reason }] if reason == SHUTTING_DOWN));
    assert!(s.done());

    let mut next = ServerState::default();
    let fx = next.handle(
        ServerEvent::Restore {
            saved: saved.into_iter().map(|s| (s, all_there())).collect(),
            env: vec![("HOME".into(), "/h".into())],
            news: Vec::new(),
        },
        now(),
    );
    let start = starts_asked(&fx)
        .first()
        .map(|s| (*s).clone())
        .expect("the session comes back");
    assert_eq!((start.spec.number, start.spec.name.as_str()), (n, "api"));
    assert!(start.spec.resume, "it was mid-run");
    assert_eq!(
        start.spec.argv,
        v(&["--", "--model", "m", "--session", "/s/1.jsonl"])
    );
    assert_eq!(start.spec.env, vec![("HOME".to_string(), "/h".to_string())]);
    next.handle(
        ServerEvent::Started {
            number: n,
            result: Ok(()),
        },
        now(),
    );
    assert_eq!(listing(&mut next)[0].name, "1:api");
}

fn note(number: u32) -> ServerEvent {
    ServerEvent::Notify {
        number,
        text: "done".into(),
        bell: true,
        desktop: true,
        command: "notify-send".into(),
    }
}

#[test]
fn a_note_goes_to_the_terminals_showing_other_sessions_else_to_the_command() {
    let mut s = server();
    let a = client_with_session(&mut s, 1, "api");
    let b = client_with_session(&mut s, 2, "web");
    up(&mut s, 2, Up::Detach);
    s.handle(ServerEvent::Gone { id: 2 }, now());
    let fx = s.handle(note(b), now());
    assert!(
        matches!(fx.as_slice(), [ServerEffect::Tell { id: 1, down: Down::Output(bytes) }]
            if bytes.starts_with(&[0x07]) && String::from_utf8_lossy(bytes).contains("web: done")),
        "{fx:?}"
    );
    // The session's own terminals were told by the session.
    assert!(s.handle(note(a), now()).is_empty());
    up(&mut s, 1, Up::Detach);
    let fx = s.handle(note(b), now());
    assert!(
        matches!(fx.as_slice(), [ServerEffect::RunNotifyCommand(n)] if n.command == "notify-send" && n.session == "web"),
        "nobody would see it: {fx:?}"
    );
}

#[test]
fn saves_are_asked_only_when_the_list_changes() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    let report = Report {
        brief: None,
        base: None,
        session_file: Some("/s/1.jsonl".into()),
        mid_run: true,
        ..Report::default()
    };
    let fx = s.handle(
        ServerEvent::Report {
            number: n,
            report: report.clone(),
        },
        now(),
    );
    assert_eq!(
        fx.iter()
            .filter(|e| matches!(e, ServerEffect::SaveList { .. }))
            .count(),
        1
    );
    let fx = s.handle(ServerEvent::Report { number: n, report }, now());
    assert!(!fx.iter().any(|e| matches!(e, ServerEffect::SaveList { .. })));
    let fx = up(&mut s, 1, Up::Input(b"k".to_vec()));
    assert!(
        !fx.iter().any(|e| matches!(e, ServerEffect::SaveList { .. })),
        "keys never wait for the disk"
    );
}

#[test]
fn a_relaunch_keeps_the_options_and_resumes_the_session_file() {
    let argv = v(&["--pi", "/p/pi", "--", "--model", "m", "-c", "fix it"]);
    assert_eq!(
        relaunch_argv(&argv, Some("/s/1.jsonl")),
        v(&["--pi", "/p/pi", "--", "--model", "m", "--session", "/s/1.jsonl"])
    );
    assert_eq!(
        relaunch_argv(&argv, None),
        v(&["--pi", "/p/pi", "--", "--model", "m", "-c"]),
        "without a file: as it was started, less the prompt pi may have sent already (seed 4232)"
    );
}

#[test]
fn what_the_server_found_in_the_list_is_logged_and_told_once_to_the_next_client() {
    let mut s = ServerState::default();
    let fx = s.handle(
        ServerEvent::Restore {
            saved: Vec::new(),
            env: Vec::new(),
            news: vec!["the saved list was set aside".into()],
        },
        now(),
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, ServerEffect::Log(m) if m == "the saved list was set aside")),
        "{fx:?}"
    );
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let notices = |fx: &[ServerEffect]| {
        fx.iter()
            .filter(|e| {
                matches!(
                    e,
                    ServerEffect::Tell {
                        id: 1,
                        down: Down::Notice { .. }
                    }
                )
            })
            .count()
    };
    // A resize is no occasion to tell; a listing is, once.
    assert_eq!(notices(&up(&mut s, 1, Up::Resize { cols: 80, rows: 24 })), 0);
    assert_eq!(notices(&up(&mut s, 1, Up::List)), 1);
    assert_eq!(notices(&up(&mut s, 1, Up::List)), 0);
}

/// A saved session whose directory and session file are both still there.
fn all_there() -> crate::server::restore_plan::Found {
    crate::server::restore_plan::Found {
        dir: Ok(()),
        session_file: Some(true),
    }
}

#[test]
fn a_saved_session_whose_directory_is_gone_is_said_and_not_started() {
    let mut s = ServerState::default();
    let saved = crate::server::saved_session::SavedSession {
        spec: SessionSpec {
            number: 1,
            name: "api".into(),
            dir: "/gone".into(),
            argv: v(&["--", "--model", "m"]),
            ..SessionSpec::default()
        },
        session_file: Some("/s/1.jsonl".into()),
        mid_run: true,
    };
    let gone = crate::server::restore_plan::Found {
        dir: Err("it is gone".into()),
        session_file: Some(true),
    };
    let fx = s.handle(
        ServerEvent::Restore {
            saved: vec![(saved, gone)],
            env: Vec::new(),
            news: Vec::new(),
        },
        now(),
    );
    assert!(!fx.iter().any(|e| matches!(e, ServerEffect::Start(_))), "{fx:?}");
    assert!(
        fx.iter()
            .any(|e| matches!(e, ServerEffect::Log(m) if m.contains("/gone"))),
        "{fx:?}"
    );
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(&mut s, 1, Up::List);
    assert!(
        fx.iter().any(|e| matches!(e, ServerEffect::Tell { id: 1, down: Down::Notice { message } } if message.contains("/gone"))),
        "{fx:?}"
    );
}

/// Second red-team pass (issue 34, row 32): a sent text was written out, the first prompt of
/// `pokeshell new -- TEXT` (pi's own argument) was not. It now is, by the same rule, wherever the
/// session is started from; options, their values, `@file`s and a `--command` program's words stay.
#[test]
fn a_new_session_s_first_prompt_reaches_pi_with_its_escape_sequences_written_out() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let new = |name: &str, args: &[&str]| {
        super::tests::open(crate::wire::Target::New {
            name: Some(name.into()),
            dir: "/tmp".into(),
            args: super::tests::v(args),
            base: None,
        })
    };
    let fx = up(
        &mut s,
        1,
        new(
            "w",
            &[
                "--",
                "--model",
                "m\u{1b}x",
                "@notes.md",
                "look\u{1b}]9;fake\u{7}\nnext",
            ],
        ),
    );
    let start = super::tests::starts_asked(&fx)[0].clone();
    assert_eq!(
        start.spec.argv,
        [
            "--",
            "--model",
            "m\u{1b}x",
            "@notes.md",
            "look\\x1b]9;fake\\x07\nnext"
        ]
    );
    assert!(start.spec.prompted);
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        new("c", &["--command", "printf '\u{1b}[2J'", "--", "x\u{1b}"]),
    );
    let start = super::tests::starts_asked(&fx)[0].clone();
    assert_eq!(
        start.spec.argv,
        ["--command", "printf '\u{1b}[2J'", "--", "x\u{1b}"]
    );
}
