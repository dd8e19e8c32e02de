//! The messages of scripts and agents driving sessions (`send`, `wait`, `read`, `events`): their
//! kinds, their JSON shapes and their round trips.

use serde_json::json;

use super::kind_tests::{down_kind, up_kind};
use super::*;
use crate::drive::{Event, Outcome, Transcript, Until};

fn round_trip_up(message: Up) {
    let frame = encode_up(&message);
    let (kind, payload) = read_frame(&mut frame.as_slice()).unwrap().unwrap();
    assert_eq!(decode_up(kind, &payload).unwrap(), message);
}

fn round_trip_down(message: Down) {
    let frame = encode_down(&message);
    let (kind, payload) = read_frame(&mut frame.as_slice()).unwrap().unwrap();
    assert_eq!(decode_down(kind, &payload).unwrap(), message);
}

#[test]
fn the_driving_kinds_are_in_their_range() {
    for name in ["send", "wait", "read", "events"] {
        assert!((0x16..=0x1d).contains(&up_kind(name)), "{name}");
    }
    for name in ["sent", "reached", "transcript", "event"] {
        assert!((0x9a..=0xa1).contains(&down_kind(name)), "{name}");
    }
}

#[test]
fn every_driving_message_round_trips() {
    round_trip_up(Up::Send {
        session: "2:w".into(),
        text: "fix it\n\u{1b}".into(),
        steer: true,
        from: Some("lead".into()),
    });
    for until in [Until::Idle, Until::NeedsYou, Until::Exited] {
        round_trip_up(Up::Wait {
            session: "w".into(),
            until,
            from: None,
        });
    }
    round_trip_up(Up::Read {
        session: "w".into(),
        last: Some(5),
    });
    round_trip_up(Up::Events {
        sessions: vec!["a".into(), "b".into()],
    });
    round_trip_up(Up::Kill {
        name: "w".into(),
        from: Some("lead".into()),
    });
    round_trip_down(Down::Sent {
        session: "2:w".into(),
        marker: 3,
    });
    round_trip_down(Down::Reached {
        session: "2:w".into(),
        outcome: Outcome::Stopped,
        attention: "question".into(),
        state: "waiting for you".into(),
        code: None,
        at_ms: 5,
    });
    round_trip_down(Down::Transcript {
        transcript: Transcript {
            schema: 1,
            reply: Some("done".into()),
            ..Default::default()
        },
    });
    round_trip_down(Down::Event {
        event: Event {
            schema: 1,
            kind: "state".into(),
            attention: Some("idle".into()),
            ..Default::default()
        },
    });
}

#[test]
fn the_driving_json_shapes_are_the_documented_ones() {
    let body = |frame: Vec<u8>| -> serde_json::Value {
        let (_, payload) = read_frame(&mut frame.as_slice()).unwrap().unwrap();
        serde_json::from_slice(&payload).unwrap()
    };
    let send = Up::Send {
        session: "w".into(),
        text: "hi".into(),
        steer: false,
        from: None,
    };
    assert_eq!(
        body(encode_up(&send)),
        json!({"session": "w", "text": "hi", "steer": false, "from": null})
    );
    let wait = Up::Wait {
        session: "w".into(),
        until: Until::NeedsYou,
        from: None,
    };
    assert_eq!(body(encode_up(&wait))["until"], "needs_you");
    // Only what is needed: a bare send and an old kill still decode.
    let bare = decode_up(up_kind("send"), br#"{"session":"w","text":"hi"}"#).unwrap();
    assert!(matches!(
        bare,
        Up::Send {
            steer: false,
            from: None,
            ..
        }
    ));
    let kill = decode_up(up_kind("kill"), br#"{"name":"w"}"#).unwrap();
    assert_eq!(
        kill,
        Up::Kill {
            name: "w".into(),
            from: None
        }
    );
    let reached = Down::Reached {
        session: "w".into(),
        outcome: Outcome::Reached,
        attention: "idle".into(),
        state: "idle".into(),
        code: None,
        at_ms: 7,
    };
    assert_eq!(body(encode_down(&reached))["outcome"], "reached");
    let event = Down::Event {
        event: Event {
            kind: "ended".into(),
            code: Some(0),
            ..Default::default()
        },
    };
    let v = body(encode_down(&event));
    assert_eq!(
        v["event"]["kind"], "ended",
        "the event's own kind survives the frame's"
    );
    assert_eq!(v["event"]["code"], 0);
}
