//! prefix+r: the changes overlay, for the terminal that asked only, fed by the world's reading of
//! the diff; and a review handed to the supervisor.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;

use super::tests::{connected, numbered, t};
use super::*;
use crate::bridge::Command;
use crate::diff::{Changes, FileChange, Hunk, Line, LineKind, Status};

const A: ClientId = 7;
const B: ClientId = 9;

fn keys(s: &mut Session, client: ClientId, bytes: &[u8]) -> Vec<Effect> {
    s.handle(
        Input::Stdin {
            client,
            bytes: bytes.to_vec(),
        },
        t(),
    )
}

/// The screen as `viewer` sees it, row by row.
fn seen(s: &Session, viewer: ClientId) -> String {
    let size = |n| std::num::NonZeroU16::new(n).expect("a size");
    let parser = vt100::Parser::new(size(38), size(100), 0);
    let area = Rect::new(0, 0, 120, 40);
    let mut buf = Buffer::empty(area);
    s.draw(
        &mut buf,
        &mut Drawn::default(),
        parser.screen().into(),
        t(),
        None,
        Some(viewer),
    );
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn changes() -> Changes {
    Changes {
        base: "abcdef0123".into(),
        files: vec![FileChange {
            path: "src/lib.rs".into(),
            from: None,
            status: Status::Modified,
            similarity: None,
            added: Some(1),
            removed: Some(0),
            binary: false,
            hunks: vec![Hunk {
                header: "@@ -1 +1,2 @@".into(),
                lines: vec![Line {
                    kind: LineKind::Added,
                    old: None,
                    new: Some(2),
                    text: "fn added() {}".into(),
                }],
            }],
            note: None,
        }],
        note: None,
    }
}

#[test]
fn prefix_r_opens_the_changes_for_that_terminal_only_and_asks_the_world_to_read_them() {
    let mut s = numbered();
    let fx = keys(&mut s, A, b"\x1dr");
    assert_eq!(s.overlay(A), Some(OverlayKind::Changes));
    assert_eq!(s.overlay(B), None);
    assert_eq!(s.own_views(), vec![A]);
    let asked: Vec<&Effect> = fx
        .iter()
        .filter(|e| matches!(e, Effect::ReadChanges { .. }))
        .collect();
    assert_eq!(
        asked,
        vec![&Effect::ReadChanges {
            client: A,
            dir: "/src/api".into(),
            base: None,
        }]
    );
    assert!(seen(&s, A).contains("reading the changes…"));
    assert!(!seen(&s, B).contains("Changes of"));

    // B types on: its keys go to pi, A's overlay stays.
    assert_eq!(child_bytes(&keys(&mut s, B, b"x")), b"x");
    s.handle(
        Input::Changes {
            client: A,
            result: Ok(changes()),
        },
        t(),
    );
    let list = seen(&s, A);
    assert!(
        list.contains("Changes of 1:api since abcdef0123") && list.contains("M src/lib.rs"),
        "{list}"
    );
    keys(&mut s, A, b"\r");
    assert!(seen(&s, A).contains("+fn added() {}"));
    // r reads them again, for A.
    let fx = keys(&mut s, A, b"r");
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::ReadChanges { client: A, .. }))
    );
    let fx = keys(&mut s, A, b"\x1b");
    assert!(
        child_bytes(&fx).is_empty(),
        "Esc closes the overlay, pi does not get it"
    );
    assert_eq!(s.overlay(A), None);
    // A reading that comes after the overlay closed changes nothing.
    s.handle(
        Input::Changes {
            client: A,
            result: Err("late".into()),
        },
        t(),
    );
    assert_eq!(s.overlay(A), None);
}

fn sent_messages(fx: &[Effect]) -> Vec<crate::bridge::SendMessage> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Bridge {
                command: Command::SendMessage(m),
                ..
            } => Some(m.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn review_s1_a_review_goes_to_pi_as_one_visible_message_and_without_the_bridge_is_said_loudly() {
    let mut s = connected();
    let fx = s.handle(
        Input::Drive(crate::drive::ToSession::Review {
            ticket: 1,
            text: "Review of your changes (1 comment).".into(),
        }),
        t(),
    );
    let sent = sent_messages(&fx);
    assert_eq!(sent.len(), 1, "{fx:?}");
    assert_eq!(sent[0].custom_type, "pokeshell-review");
    assert_eq!(sent[0].content, "Review of your changes (1 comment).");
    assert!(sent[0].display && sent[0].trigger_turn);
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Ledger(r) if r.rule == "REVIEW-S1"))
    );

    let mut alone = numbered();
    let fx = alone.handle(
        Input::Drive(crate::drive::ToSession::Review {
            ticket: 2,
            text: "x".into(),
        }),
        t(),
    );
    assert!(sent_messages(&fx).is_empty());
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Notify { text, desktop: true, .. } if text.contains("review was not sent"))),
        "{fx:?}"
    );
}

/// The session's answers to the server for reviews: (ticket, error).
fn review_answers(fx: &[Effect]) -> Vec<(u64, Option<String>)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Drive(crate::drive::FromSession::Reviewed { ticket, error }) => {
                Some((*ticket, error.clone()))
            }
            _ => None,
        })
        .collect()
}

fn review(s: &mut Session, ticket: u64, at_ms: u64) -> Vec<Effect> {
    let msg = crate::drive::ToSession::Review {
        ticket,
        text: format!("review {ticket}"),
    };
    s.handle(Input::Drive(msg), Now::new(at_ms, at_ms))
}

/// Second red-team pass (issue 34, row 20): a review from the page while pi's bridge was not
/// connected was answered "sent" and the page forgot the comments. The session now waits for the
/// bridge a while, and answers whether the supervisor sent it.
#[test]
fn a_review_waits_for_pi_s_bridge_and_the_answer_says_whether_it_was_sent() {
    let mut s = connected();
    let fx = review(&mut s, 1, 0);
    assert_eq!(sent_messages(&fx).len(), 1);
    assert_eq!(review_answers(&fx), [(1, None)]);

    let gone = crate::bridge::BridgeEvent::Disconnected {
        conn: 1,
        reason: "the socket closed".into(),
    };
    s.handle(Input::Bridge(gone.clone()), Now::new(1000, 1000));
    let fx = review(&mut s, 2, 1000);
    assert!(
        sent_messages(&fx).is_empty() && review_answers(&fx).is_empty(),
        "{fx:?}"
    );
    let wake = s.next_deadline(Now::new(1000, 1000));
    assert!(
        wake.is_some_and(|d| d <= 1000 + super::drive::REVIEW_HOLD_MS),
        "{wake:?}"
    );
    // The bridge is back within the wait: the review goes, and the answer says so.
    let back = crate::bridge::BridgeEvent::Connected {
        conn: 2,
        hello: super::tests::hello(),
    };
    let fx = s.handle(Input::Bridge(back), Now::new(3000, 3000));
    let sent = sent_messages(&fx);
    assert_eq!(sent.len(), 1, "{fx:?}");
    assert_eq!(sent[0].content, "review 2");
    assert_eq!(review_answers(&fx), [(2, None)]);

    // It does not come back in time: refused, said loudly, and nothing goes later.
    s.handle(Input::Bridge(gone), Now::new(4000, 4000));
    review(&mut s, 3, 4000);
    let fx = s.handle(Input::Tick, Now::new(13_999, 13_999));
    assert!(review_answers(&fx).is_empty(), "{fx:?}");
    let fx = s.handle(Input::Tick, Now::new(14_000, 14_000));
    assert_eq!(
        review_answers(&fx),
        [(3, Some("pi's bridge did not connect within 10 s".to_string()))]
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Notify { text, desktop: true, .. } if text.contains("review was not sent"))),
        "{fx:?}"
    );
    let back = crate::bridge::BridgeEvent::Connected {
        conn: 3,
        hello: super::tests::hello(),
    };
    let fx = s.handle(Input::Bridge(back), Now::new(15_000, 15_000));
    assert!(sent_messages(&fx).is_empty(), "{fx:?}");

    // A session whose program is not pi: refused at once.
    let mut alone = numbered();
    let fx = review(&mut alone, 4, 0);
    assert_eq!(
        review_answers(&fx),
        [(4, Some("this session's program is not pi".to_string()))]
    );
}
