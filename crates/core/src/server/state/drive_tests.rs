//! Driving sessions through the server's core: send, wait, read, events, and the bounds on agents.

use super::tests::{ack_saves, client_with_session, now, open, server, told, up, v};
use super::*;
use crate::brief::{Attention, SessionBrief};
use crate::drive::{self, FromSession, Marks, Outcome, ToSession, Until};
use crate::wire::{Target, Up};

pub(super) fn send(session: &str, text: &str, from: Option<&str>) -> Up {
    Up::Send {
        session: session.into(),
        text: text.into(),
        steer: false,
        from: from.map(str::to_string),
    }
}

pub(super) fn wait(session: &str, until: Until) -> Up {
    Up::Wait {
        session: session.into(),
        until,
        from: None,
    }
}

/// The drive messages the effects give session `n`.
pub(super) fn to_session(fx: &[ServerEffect], n: u32) -> Vec<ToSession> {
    fx.iter()
        .filter_map(|e| match e {
            ServerEffect::ToSession {
                number,
                ev: SessionMsg::Drive(msg),
            } if *number == n => Some(msg.clone()),
            _ => None,
        })
        .collect()
}

pub(super) fn error(fx: &[ServerEffect], id: u64) -> String {
    match told(fx, id).as_slice() {
        [Down::Error { message }] => message.clone(),
        other => panic!("no error for {id}: {other:?}"),
    }
}

pub(super) fn report(s: &mut ServerState, n: u32, attention: Attention, marks: Marks) -> Vec<ServerEffect> {
    let brief = SessionBrief::new(n, "w", "/w", attention, attention.keyword());
    let report = Report {
        brief: Some(brief),
        drive: marks,
        at_ms: 1234,
        ..Default::default()
    };
    let fx = s.handle(ServerEvent::Report { number: n, report }, now());
    ack_saves(s, &fx);
    fx
}

pub(super) fn marks(begun: u64, settled: u64) -> Marks {
    Marks {
        begun,
        settled,
        going_on: false,
    }
}

pub(super) fn delivered(s: &mut ServerState, n: u32, marker: u64) -> Vec<ServerEffect> {
    let out = FromSession::Delivered { marker, error: None };
    s.handle(ServerEvent::Drive { number: n, out }, now())
}

pub(super) fn reached(fx: &[ServerEffect], id: u64) -> Option<Outcome> {
    told(fx, id).iter().find_map(|d| match d {
        Down::Reached { outcome, .. } => Some(*outcome),
        _ => None,
    })
}

#[test]
fn bad_input_is_refused_with_the_reason_and_nothing_reaches_the_session() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "w");
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let cases = [
        (send("nope", "hi", None), "no session named \"nope\""),
        (send("w", "  \n", None), "the text is empty"),
        (
            send("w", &"x".repeat(drive::MAX_TEXT_BYTES + 1), None),
            "at most 128 KiB",
        ),
        (send("w", "hi", Some("w")), "cannot send a message to itself"),
        (
            Up::Wait {
                session: "w".into(),
                until: Until::Idle,
                from: Some("w".into()),
            },
            "cannot wait for itself",
        ),
        (wait("nope", Until::Idle), "no session named"),
        (
            Up::Read {
                session: "nope".into(),
                last: None,
            },
            "no session named",
        ),
        (
            Up::Events {
                sessions: v(&["w", "nope"]),
            },
            "no session named \"nope\"",
        ),
    ];
    for (up_msg, why) in cases {
        let fx = up(&mut s, 2, up_msg);
        let message = error(&fx, 2);
        assert!(message.contains(why), "{message}");
        assert!(to_session(&fx, n).is_empty(), "nothing sent: {fx:?}");
    }
}

#[test]
fn a_wait_right_after_a_send_waits_for_the_run_that_message_started() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "w");
    report(&mut s, n, Attention::Idle, marks(0, 0));
    s.handle(ServerEvent::Connected { id: 2 }, now());
    // By its label too, as `ls` prints it.
    let fx = up(&mut s, 2, send("1:w", "fix it", None));
    let asked = to_session(&fx, n);
    let [ToSession::Send { marker: 1, text, .. }] = asked.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(text, "fix it");
    assert!(told(&fx, 2).is_empty(), "not until pi has it");
    let fx = delivered(&mut s, n, 1);
    assert!(matches!(told(&fx, 2).as_slice(), [Down::Sent { marker: 1, session }] if session == "1:w"));
    s.handle(ServerEvent::Connected { id: 3 }, now());
    // pi has not started the run yet: the brief still says idle.
    let fx = up(&mut s, 3, wait("w", Until::Idle));
    assert_eq!(reached(&fx, 3), None);
    assert_eq!(
        reached(&report(&mut s, n, Attention::Working, marks(1, 0)), 3),
        None
    );
    // Settled, but pokeshell carries it on.
    let going_on = Marks {
        going_on: true,
        ..marks(1, 1)
    };
    assert_eq!(reached(&report(&mut s, n, Attention::Idle, going_on), 3), None);
    let fx = report(&mut s, n, Attention::Idle, marks(1, 1));
    assert!(matches!(
        told(&fx, 3).as_slice(),
        [Down::Reached { outcome: Outcome::Reached, attention, at_ms: 1234, .. }] if attention == "idle"
    ));
    // A wait now is over at once.
    s.handle(ServerEvent::Connected { id: 4 }, now());
    assert_eq!(
        reached(&up(&mut s, 4, wait("w", Until::Idle)), 4),
        Some(Outcome::Reached)
    );
    // A question ends a wait for idle, told apart.
    up(&mut s, 2, send("w", "next", None));
    delivered(&mut s, n, 2);
    up(&mut s, 4, wait("w", Until::Idle));
    let fx = report(&mut s, n, Attention::Question, marks(2, 2));
    assert_eq!(reached(&fx, 4), Some(Outcome::Stopped));
}

#[test]
fn a_first_prompt_on_pis_command_line_is_the_first_message() {
    let mut s = server();
    s.handle(ServerEvent::Connected { id: 1 }, now());
    let fx = up(
        &mut s,
        1,
        open(Target::New {
            name: Some("w".into()),
            dir: "/w".into(),
            args: v(&["--", "--model", "m", "fix the test"]),
            base: None,
        }),
    );
    let start = super::tests::starts_asked(&fx)[0].clone();
    assert!(start.spec.prompted);
    let n = start.spec.number;
    s.handle(
        ServerEvent::Started {
            number: n,
            result: Ok(()),
        },
        now(),
    );
    s.handle(ServerEvent::Connected { id: 2 }, now());
    up(&mut s, 2, wait("w", Until::Idle));
    assert_eq!(reached(&report(&mut s, n, Attention::Idle, marks(0, 0)), 2), None);
    assert_eq!(
        reached(&report(&mut s, n, Attention::Idle, marks(1, 1)), 2),
        Some(Outcome::Reached)
    );
    // The next message is 2.
    let fx = up(&mut s, 2, send("w", "more", None));
    assert!(matches!(
        to_session(&fx, n).as_slice(),
        [ToSession::Send { marker: 2, .. }]
    ));
}

#[test]
fn a_wait_for_needs_you_hears_only_what_came_after_the_message() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "w");
    report(&mut s, n, Attention::GaveUp, marks(0, 0));
    s.handle(ServerEvent::Connected { id: 2 }, now());
    up(&mut s, 2, send("w", "try again", None));
    delivered(&mut s, n, 1);
    assert_eq!(reached(&up(&mut s, 2, wait("w", Until::NeedsYou)), 2), None);
    assert_eq!(
        reached(&report(&mut s, n, Attention::Working, marks(1, 0)), 2),
        None
    );
    let fx = report(&mut s, n, Attention::Limit, marks(1, 0));
    assert_eq!(reached(&fx, 2), Some(Outcome::Reached));
}

#[test]
fn a_read_goes_to_the_session_and_its_answer_to_the_reader_alone() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "w");
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let read = Up::Read {
        session: "w".into(),
        last: Some(3),
    };
    let fx = up(&mut s, 2, read);
    assert_eq!(
        to_session(&fx, n),
        [ToSession::Read {
            ticket: 2,
            last: Some(3)
        }]
    );
    let transcript = drive::Transcript {
        reply: Some("done".into()),
        ..Default::default()
    };
    let out = FromSession::Transcript {
        ticket: 2,
        transcript,
    };
    let fx = s.handle(
        ServerEvent::Drive {
            number: n,
            out: out.clone(),
        },
        now(),
    );
    assert!(
        matches!(told(&fx, 2).as_slice(), [Down::Transcript { transcript }] if transcript.reply.as_deref() == Some("done"))
    );
    // Told once.
    assert!(s.handle(ServerEvent::Drive { number: n, out }, now()).is_empty());
}

/// Client `id` with `$POKESHELL_SESSION` set (a `pokeshell` inside that session) asks for a new session.
fn agent_new(s: &mut ServerState, id: u64, parent: &str, name: &str) -> Vec<ServerEffect> {
    s.handle(ServerEvent::Connected { id }, now());
    let open = Up::Open {
        target: Target::New {
            name: Some(name.into()),
            dir: "/w".into(),
            args: v(&["--", "--model", "m"]),
            base: None,
        },
        cols: 80,
        rows: 24,
        caps: Vec::new(),
        caps_follow: false,
        env: vec![(drive::SESSION_ENV.into(), parent.into())],
        watch: false,
        terminal: None,
    };
    up(s, id, open)
}

#[test]
fn agents_may_start_a_bounded_number_of_sessions_and_the_ninth_is_refused() {
    let mut s = server();
    client_with_session(&mut s, 1, "lead");
    // The person's own sessions do not count.
    client_with_session(&mut s, 2, "mine");
    for i in 0..drive::DEFAULT_AGENT_SESSIONS as u64 {
        let fx = agent_new(&mut s, 10 + i, "lead", &format!("w{i}"));
        let start = super::tests::starts_asked(&fx)[0].clone();
        assert_eq!(start.spec.parent.as_deref(), Some("lead"));
        ack_saves(&mut s, &fx);
        let number = start.spec.number;
        let fx = s.handle(
            ServerEvent::Started {
                number,
                result: Ok(()),
            },
            now(),
        );
        ack_saves(&mut s, &fx);
    }
    let fx = agent_new(&mut s, 30, "lead", "w8");
    assert!(super::tests::starts_asked(&fx).is_empty());
    let message = error(&fx, 30);
    assert!(
        message.contains("at most 8 sessions") && message.contains("pokeshell.maxAgentSessions"),
        "{message}"
    );
    assert!(message.contains("3:w0"), "names them: {message}");
    // The parent is saved, so a restarted server still counts it.
    let saved = s.saved.clone().unwrap_or_default();
    assert_eq!(saved.iter().filter(|e| e.spec.parent.is_some()).count(), 8);
    // One ends: room for one more. A higher bound from the settings applies at once.
    s.handle(ServerEvent::Connected { id: 40 }, now());
    let kill = Up::Kill {
        name: "w0".into(),
        from: Some("lead".into()),
    };
    let fx = up(&mut s, 40, kill);
    let number = s.drive_find("w1").map(|n| n - 1).unwrap_or(0);
    assert_eq!(
        to_session(&fx, number),
        [ToSession::Killed { by: "lead".into() }],
        "recorded in the session first"
    );
    ack_saves(&mut s, &fx);
    assert!(!super::tests::starts_asked(&agent_new(&mut s, 41, "lead", "w9")).is_empty());
    assert!(super::tests::starts_asked(&agent_new(&mut s, 42, "lead", "w10")).is_empty());
    s.handle(ServerEvent::DriveBound(9), now());
    assert!(!super::tests::starts_asked(&agent_new(&mut s, 43, "lead", "w11")).is_empty());
}

#[test]
fn events_follow_state_changes_interventions_messages_and_ends() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "w");
    s.handle(ServerEvent::Connected { id: 2 }, now());
    s.handle(ServerEvent::Connected { id: 3 }, now());
    up(&mut s, 2, Up::Events { sessions: Vec::new() });
    up(&mut s, 3, Up::Events { sessions: v(&["w"]) });
    let kinds = |fx: &[ServerEffect], id| -> Vec<String> {
        told(fx, id)
            .iter()
            .filter_map(|d| match d {
                Down::Event { event } => Some(format!("{} {}", event.session, event.line())),
                _ => None,
            })
            .collect()
    };
    let fx = report(&mut s, n, Attention::Working, marks(0, 0));
    assert_eq!(kinds(&fx, 2), ["1:w state working"]);
    assert_eq!(kinds(&fx, 3), ["1:w state working"]);
    assert!(
        kinds(&report(&mut s, n, Attention::Working, marks(0, 0)), 2).is_empty(),
        "no change"
    );
    let out = FromSession::Intervention {
        rule: "POKE-W4".into(),
        text: "resumed".into(),
    };
    let fx = s.handle(ServerEvent::Drive { number: n, out }, now());
    assert_eq!(kinds(&fx, 2), ["1:w intervention POKE-W4 resumed"]);
    up(&mut s, 1, send("w", "hello", Some("lead")));
    let fx = delivered(&mut s, n, 1);
    assert_eq!(kinds(&fx, 2), ["1:w message 5 bytes by lead"]);
    // A session of later: only the follower of all hears of it.
    let fx = super::drive_tests::agent_new(&mut s, 5, "w", "x");
    assert_eq!(kinds(&fx, 2), ["2:x started by w"]);
    assert!(kinds(&fx, 3).is_empty());
    let ended = ServerEvent::Ended {
        number: n,
        code: 3,
        shutdown: false,
        farewell: Vec::new(),
    };
    assert_eq!(kinds(&s.handle(ended, now()), 3), ["1:w ended (code 3)"]);
    // Gone: told nothing more.
    s.handle(ServerEvent::Gone { id: 2 }, now());
    let out = FromSession::Intervention {
        rule: "POKE-W4".into(),
        text: "again".into(),
    };
    assert!(told(&s.handle(ServerEvent::Drive { number: 2, out }, now()), 2).is_empty());
}

/// Second red-team pass (issue 34): pi draws a sent text as it is, so escape sequences in it acted
/// on the terminal (a notification in the session's name, a cleared screen): they reach pi written
/// out.
#[test]
fn a_sent_text_reaches_pi_with_its_escape_sequences_written_out() {
    let mut s = server();
    let n = client_with_session(&mut s, 1, "w");
    report(&mut s, n, Attention::Idle, marks(0, 0));
    s.handle(ServerEvent::Connected { id: 2 }, now());
    let fx = up(&mut s, 2, send("w", "look\u{1b}]9;fake\u{7}\nnext", None));
    let asked = to_session(&fx, n);
    let [ToSession::Send { text, .. }] = asked.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(text, "look\\x1b]9;fake\\x07\nnext");
}
