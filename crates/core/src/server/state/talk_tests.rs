//! Each session's conversation in the server's state: kept as the loop heard it, told to the
//! clients that asked, summed up for a page that was away.

use super::tests::{client_with_session, now, server, told, up};
use super::*;
use crate::talk::{By, Ending, Said};
use crate::wire::{Seen, Up};

fn prompt(text: &str) -> Said {
    Said::Prompt {
        by: By::You,
        text: text.into(),
    }
}

fn said(fx: &[ServerEffect], id: u64) -> Vec<(bool, Vec<u64>)> {
    told(fx, id)
        .into_iter()
        .filter_map(|d| match d {
            Down::Said { fresh, entries, .. } => Some((*fresh, entries.iter().map(|e| e.seq).collect())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_client_that_asks_hears_what_was_said_after_its_item_then_each_new_one() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    s.handle(
        ServerEvent::Talk {
            number: n,
            said: vec![prompt("a"), prompt("b")],
        },
        now(),
    );
    s.handle(ServerEvent::Connected { id: 2 }, now());
    // Nothing seen yet: everything kept, as the first part of an answer.
    let fx = up(
        &mut s,
        2,
        Up::Talk {
            session: format!("{n}:api"),
            epoch: 0,
            since: 0,
        },
    );
    assert_eq!(said(&fx, 2), vec![(true, vec![1, 2])]);
    let Some(Down::Said { epoch, session, .. }) = told(&fx, 2).first().copied() else {
        panic!("no answer");
    };
    assert_eq!(session, &format!("{n}:api"));
    let epoch = *epoch;
    // Asked again after item 1 of the same log: item 2 alone.
    let fx = up(
        &mut s,
        2,
        Up::Talk {
            session: "api".into(),
            epoch,
            since: 1,
        },
    );
    assert_eq!(said(&fx, 2), vec![(true, vec![2])]);
    // A new item goes to the client that asked, and not to the terminal that did not.
    let fx = s.handle(
        ServerEvent::Talk {
            number: n,
            said: vec![prompt("c")],
        },
        now(),
    );
    assert_eq!(said(&fx, 2), vec![(false, vec![3])]);
    assert_eq!(said(&fx, 1), vec![]);
    // Gone: told nothing more.
    s.handle(ServerEvent::Gone { id: 2 }, now());
    let fx = s.handle(
        ServerEvent::Talk {
            number: n,
            said: vec![prompt("d")],
        },
        now(),
    );
    assert_eq!(said(&fx, 2), vec![]);
}

#[test]
fn a_session_with_nothing_said_answers_empty_and_an_unknown_one_is_an_error() {
    let mut s = server();
    let _n = client_with_session(&mut s, 1, "api");
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        Up::Talk {
            session: "api".into(),
            epoch: 0,
            since: 0,
        },
    );
    assert_eq!(said(&fx, 2), vec![(true, vec![])]);
    let fx = up(
        &mut s,
        2,
        Up::Talk {
            session: "nope".into(),
            epoch: 0,
            since: 0,
        },
    );
    assert!(matches!(told(&fx, 2).as_slice(), [Down::Error { message }] if message.contains("nope")));
}

#[test]
fn a_long_answer_comes_in_frames_a_frame_can_hold() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    let big = "z".repeat(crate::talk::TEXT_MAX);
    let many: Vec<Said> = (0..60).map(|_| prompt(&big)).collect();
    s.handle(
        ServerEvent::Talk {
            number: n,
            said: many,
        },
        now(),
    );
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        Up::Talk {
            session: "api".into(),
            epoch: 0,
            since: 0,
        },
    );
    let parts = said(&fx, 2);
    assert!(parts.len() > 1, "{} parts", parts.len());
    assert!(
        parts[0].0 && parts[1..].iter().all(|(fresh, _)| !fresh),
        "only the first starts over"
    );
    let seqs: Vec<u64> = parts.iter().flat_map(|(_, s)| s.clone()).collect();
    assert_eq!(seqs, (1..=60).collect::<Vec<_>>());
    for d in told(&fx, 2) {
        let frame = crate::wire::encode_down(d);
        assert!(
            frame.len() < crate::wire::MAX_FRAME,
            "a frame of {} bytes",
            frame.len()
        );
    }
}

#[test]
fn a_page_that_was_away_hears_what_happened_meanwhile_in_each_session() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    s.handle(
        ServerEvent::Talk {
            number: n,
            said: vec![prompt("seen")],
        },
        now(),
    );
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(
        &mut s,
        2,
        Up::Talk {
            session: "api".into(),
            epoch: 0,
            since: 0,
        },
    );
    let Some(Down::Said { epoch, .. }) = told(&fx, 2).first().copied() else {
        panic!("no answer");
    };
    let epoch = *epoch;
    let later = vec![
        Said::Intervention {
            rule: "STALL-S1".into(),
            text: "aborted a stalled stream".into(),
        },
        Said::RunEnd {
            ending: Ending::Done,
            error: None,
            cost_usd: Some(0.2),
            tokens_out: 5,
        },
    ];
    s.handle(
        ServerEvent::Talk {
            number: n,
            said: later,
        },
        now(),
    );
    let seen = vec![
        Seen {
            session: format!("{n}:api"),
            epoch,
            seq: 1,
        },
        Seen {
            session: "gone".into(),
            epoch: 0,
            seq: 0,
        },
    ];
    let fx = up(&mut s, 2, Up::Away { seen });
    let [Down::Meanwhile { digests }] = told(&fx, 2).as_slice() else {
        panic!("no digests: {fx:?}");
    };
    assert_eq!(digests.len(), 1, "a session that is not there is left out");
    let d = &digests[0].digest;
    assert_eq!((d.runs, d.interventions, d.cost_usd, d.seq), (1, 1, Some(0.2), 3));
    assert_eq!(d.quoted, vec!["aborted a stalled stream"]);
}

#[test]
fn a_session_that_ended_keeps_no_log() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "api");
    let m = client_with_session(&mut s, 3, "web");
    s.handle(
        ServerEvent::Talk {
            number: n,
            said: vec![prompt("a")],
        },
        now(),
    );
    s.handle(
        ServerEvent::Ended {
            number: n,
            code: 0,
            shutdown: false,
            farewell: Vec::new(),
        },
        now(),
    );
    s.handle(
        ServerEvent::Talk {
            number: m,
            said: vec![prompt("b")],
        },
        now(),
    );
    assert_eq!(s.talks.keys().copied().collect::<Vec<_>>(), vec![m]);
    // Nor does a session the server never heard of start one.
    s.handle(
        ServerEvent::Talk {
            number: 99,
            said: vec![prompt("c")],
        },
        now(),
    );
    assert!(!s.talks.contains_key(&99));
}
