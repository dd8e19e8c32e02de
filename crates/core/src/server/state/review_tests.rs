//! A session's base (recorded, listed, saved, brought back) and a review handed to its session.

use super::tests::{ack_saves, client_with_session, listing, now, open, server, starts_asked, told, up, v};
use super::*;
use crate::diff::review::{Comment, Side};
use crate::wire::{Target, Up};

const BASE: &str = "0123456789abcdef0123456789abcdef01234567";

fn comment(file: &str, line: u32, comment: &str) -> Comment {
    Comment {
        file: file.into(),
        line,
        side: Side::New,
        text: format!("text of {file}:{line}"),
        comment: comment.into(),
    }
}

fn saved_list(fx: &[ServerEffect]) -> Option<Vec<SavedSession>> {
    fx.iter().rev().find_map(|e| match e {
        ServerEffect::SaveList { list, .. } => Some(list.clone()),
        _ => None,
    })
}

#[test]
fn a_base_the_client_knew_is_started_with_listed_and_saved_and_junk_is_dropped() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(
        &mut s,
        1,
        open(Target::New {
            name: Some("wt".into()),
            dir: "/src/app-worktrees/wt".into(),
            args: v(&["--"]),
            base: Some(BASE.into()),
        }),
    );
    let start = starts_asked(&fx)[0].clone();
    assert_eq!(start.spec.base.as_deref(), Some(BASE));
    let fx = s.handle(
        ServerEvent::Started {
            number: start.spec.number,
            result: Ok(()),
        },
        now(),
    );
    let saved = saved_list(&fx).expect("the list is saved once the session runs");
    assert_eq!(saved[0].spec.base.as_deref(), Some(BASE));
    ack_saves(&mut s, &fx);
    assert_eq!(listing(&mut s)[0].base.as_deref(), Some(BASE));

    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        open(Target::New {
            name: Some("odd".into()),
            dir: "/x".into(),
            args: v(&["--"]),
            base: Some("--output=/etc/passwd".into()),
        }),
    );
    assert_eq!(starts_asked(&fx)[0].spec.base, None, "only a commit id is kept");
}

#[test]
fn the_base_a_session_reports_is_kept_listed_saved_and_brought_back_after_a_restart() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    assert_eq!(listing(&mut s)[0].base, None, "not known before the session says");
    let report = Report {
        base: Some(BASE.into()),
        ..Report::default()
    };
    let fx = s.handle(ServerEvent::Report { number: n, report }, now());
    let saved = saved_list(&fx).expect("the new base is saved");
    assert_eq!(saved[0].spec.base.as_deref(), Some(BASE));
    assert_eq!(listing(&mut s)[0].base.as_deref(), Some(BASE));

    // The next server reads that list back: the session starts again with its base.
    let mut next = ServerState::default();
    let fx = next.handle(
        ServerEvent::Restore {
            saved: vec![(
                saved[0].clone(),
                crate::server::restore_plan::Found {
                    dir: Ok(()),
                    session_file: None,
                },
            )],
            env: Vec::new(),
            news: Vec::new(),
        },
        now(),
    );
    let start = starts_asked(&fx)[0].clone();
    assert_eq!(start.spec.base.as_deref(), Some(BASE));
}

/// The reviews `fx` hands to session `n`: (ticket, text).
fn reviews_to(fx: &[ServerEffect], n: u32) -> Vec<(u64, String)> {
    fx.iter()
        .filter_map(|e| match e {
            ServerEffect::ToSession {
                number,
                ev: SessionMsg::Drive(crate::drive::ToSession::Review { ticket, text }),
            } if *number == n => Some((*ticket, text.clone())),
            _ => None,
        })
        .collect()
}

fn reviewed(s: &mut ServerState, n: u32, ticket: u64, error: Option<&str>) -> Vec<ServerEffect> {
    let out = crate::drive::FromSession::Reviewed {
        ticket,
        error: error.map(str::to_string),
    };
    s.handle(ServerEvent::Drive { number: n, out }, now())
}

/// Second red-team pass (issue 34, row 20): the client heard "review sent" as soon as the review
/// was handed to the session, though its supervisor could not send it (pi's bridge was not
/// connected), and the page forgot the comments. Now it hears the session's word.
#[test]
fn a_review_goes_to_its_session_as_one_message_and_the_client_hears_whether_it_was_sent() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    s.handle(ServerEvent::Connected { id: 7 }, now());
    let comments = vec![comment("src/a.rs", 3, "rename this"), comment("b.txt", 9, "why?")];
    let review = |comments: Vec<Comment>| Up::Review {
        session: "api".into(),
        comments,
    };
    let fx = up(&mut s, 7, review(comments.clone()));
    let sent = reviews_to(&fx, n);
    assert_eq!(sent.len(), 1, "{fx:?}");
    let (ticket, text) = &sent[0];
    assert!(text.contains("1. src/a.rs, line 3:") && text.contains("2. b.txt, line 9:"));
    assert!(
        told(&fx, 7).is_empty(),
        "not answered before the session says: {fx:?}"
    );
    // Another session's word, or an unknown ticket, answers nothing.
    assert!(told(&reviewed(&mut s, n + 1, *ticket, None), 7).is_empty());
    assert!(told(&reviewed(&mut s, n, ticket + 100, None), 7).is_empty());
    let fx = reviewed(&mut s, n, *ticket, None);
    assert!(
        matches!(told(&fx, 7).as_slice(), [Down::Done { message }] if message == "review sent to 1:api (2 comments)"),
        "{fx:?}"
    );
    assert!(
        told(&reviewed(&mut s, n, *ticket, None), 7).is_empty(),
        "answered once"
    );

    // Not sent: the client hears why, as an error (the page keeps the comments).
    let fx = up(&mut s, 7, review(comments.clone()));
    let (ticket, _) = reviews_to(&fx, n)[0].clone();
    let fx = reviewed(&mut s, n, ticket, Some("pi's bridge did not connect within 10 s"));
    assert!(
        matches!(told(&fx, 7).as_slice(), [Down::Error { message }]
            if message == "the review was not sent to 1:api: pi's bridge did not connect within 10 s"),
        "{fx:?}"
    );

    // A client gone meanwhile is told nothing; one still waiting when the session ends hears it.
    s.handle(ServerEvent::Connected { id: 8 }, now());
    let fx = up(&mut s, 8, review(comments.clone()));
    let (gone_ticket, _) = reviews_to(&fx, n)[0].clone();
    s.handle(ServerEvent::Gone { id: 8 }, now());
    assert!(told(&reviewed(&mut s, n, gone_ticket, None), 8).is_empty());
    up(&mut s, 7, review(comments));
    let ended = ServerEvent::Ended {
        number: n,
        code: 0,
        shutdown: false,
        farewell: Vec::new(),
    };
    let fx = s.handle(ended, now());
    assert!(
        matches!(told(&fx, 7).as_slice(), [Down::Error { message }] if message.contains("the review was not sent")),
        "{fx:?}"
    );
}

#[test]
fn a_review_of_no_session_or_of_nothing_is_refused_and_nothing_is_sent() {
    let mut s = server();
    client_with_session(&mut s, 1, "api");
    s.handle(ServerEvent::Connected { id: 7 }, now());
    for (session, comments, why) in [
        ("nope", vec![comment("a", 1, "x")], "no session named"),
        ("api", Vec::new(), "no comments"),
        ("api", vec![comment("a", 1, " ")], "is empty"),
    ] {
        let fx = up(
            &mut s,
            7,
            Up::Review {
                session: session.into(),
                comments,
            },
        );
        assert!(
            matches!(told(&fx, 7).as_slice(), [Down::Error { message }] if message.contains(why)),
            "{why}: {fx:?}"
        );
        assert!(!fx.iter().any(|e| matches!(e, ServerEffect::ToSession { .. })));
    }
    // A session still starting has no one to read it yet.
    s.handle(ServerEvent::Connected { id: 8 }, now());
    up(&mut s, 8, super::tests::new_session("slow"));
    let fx = up(
        &mut s,
        7,
        Up::Review {
            session: "slow".into(),
            comments: vec![comment("a", 1, "x")],
        },
    );
    assert!(
        matches!(told(&fx, 7).as_slice(), [Down::Error { message }] if message.contains("is not running"))
    );
}
