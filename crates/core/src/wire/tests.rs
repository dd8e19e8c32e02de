use std::io::{self, Read};

use proptest::prelude::*;

use super::kind_tests::{down_kind, up_kind};
use super::message_strategies::{bytes, down, up};

use super::*;

/// Every frame in `stream`, read with the blocking reader; panics on an error.
fn frames(stream: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut reader = stream;
    std::iter::from_fn(|| read_frame(&mut reader).unwrap()).collect()
}

fn frames_byte_by_byte(stream: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut buf = FrameBuf::new();
    let mut out = Vec::new();
    for byte in stream {
        buf.push(std::slice::from_ref(byte));
        while let Some(frame) = buf.next().unwrap() {
            out.push(frame);
        }
    }
    buf.finish().unwrap();
    out
}

proptest! {
    #[test]
    fn every_client_message_round_trips(message in up()) {
        let encoded = encode_up(&message);
        let frames = frames(&encoded);
        prop_assert_eq!(frames.len(), 1);
        let (kind, payload) = &frames[0];
        prop_assert_eq!(decode_up(*kind, payload).unwrap(), message);
    }

    #[test]
    fn every_server_message_round_trips(message in down()) {
        let encoded = encode_down(&message);
        let frames = frames(&encoded);
        prop_assert_eq!(frames.len(), 1);
        let (kind, payload) = &frames[0];
        prop_assert_eq!(decode_down(*kind, payload).unwrap(), message);
    }

    #[test]
    fn a_frame_buf_fed_one_byte_at_a_time_yields_the_same_frames(
        ups in prop::collection::vec(up(), 0..6),
        downs in prop::collection::vec(down(), 0..6),
    ) {
        let mut stream: Vec<u8> = ups.iter().flat_map(encode_up).collect();
        stream.extend(downs.iter().flat_map(encode_down));
        let whole = frames(&stream);
        prop_assert_eq!(whole.len(), ups.len() + downs.len());
        prop_assert_eq!(frames_byte_by_byte(&stream), whole);
    }

    #[test]
    fn input_and_output_carry_any_bytes_unchanged(raw in bytes()) {
        let input = encode_up(&Up::Input(raw.clone()));
        prop_assert_eq!(&input[5..], &raw[..], "the payload is the bytes themselves");
        prop_assert_eq!(encode_input(&raw), input);
        let output = encode_down(&Down::Output(raw.clone()));
        prop_assert_eq!(&output[5..], &raw[..]);
        prop_assert_eq!(encode_output(&raw), output.clone());
        let (kind, payload) = read_frame(&mut &output[..]).unwrap().unwrap();
        prop_assert_eq!(decode_down(kind, &payload).unwrap(), Down::Output(raw));
    }
}

#[test]
fn nul_and_invalid_utf8_pass_through_input_and_output() {
    let raw = b"\x00\xff\xfe\x1b[31m\xc3\x28\x00".to_vec();
    let input = encode_up(&Up::Input(raw.clone()));
    assert_eq!(input, [&[0, 0, 0, 12, kind::INPUT][..], &raw].concat());
    let (kind, payload) = read_frame(&mut &input[..]).unwrap().unwrap();
    assert_eq!(decode_up(kind, &payload).unwrap(), Up::Input(raw.clone()));
    let output = encode_down(&Down::Output(raw.clone()));
    assert_eq!(frames_byte_by_byte(&output), vec![(kind::OUTPUT, raw)]);
    assert_eq!(encode_up(&Up::Input(Vec::new())), [0, 0, 0, 1, kind::INPUT]);
}

#[test]
fn output_longer_than_a_frame_is_split_into_frames_that_add_up() {
    let raw: Vec<u8> = (0..3 * MAX_FRAME + 7).map(|i| (i % 251) as u8).collect();
    let frames = frames(&encode_down(&Down::Output(raw.clone())));
    assert_eq!(frames.len(), 4);
    assert!(
        frames
            .iter()
            .all(|(kind, p)| *kind == kind::OUTPUT && p.len() < MAX_FRAME)
    );
    let joined: Vec<u8> = frames.into_iter().flat_map(|(_, p)| p).collect();
    assert_eq!(joined, raw);
}

#[test]
fn the_json_shapes_are_the_documented_ones() {
    // Compared as JSON: the order of an object's fields means nothing.
    let payload = |frame: Vec<u8>| serde_json::from_slice::<serde_json::Value>(&frame[5..]).unwrap();
    let json = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
    let hello = Up::Hello {
        token: "ab".into(),
        protocol: PROTOCOL,
    };
    assert_eq!(payload(encode_up(&hello)), json(r#"{"token":"ab","protocol":3}"#));
    let open = Up::Open {
        target: Target::New {
            name: None,
            dir: "/w".into(),
            args: vec!["-c".into()],
            base: None,
        },
        cols: 80,
        rows: 24,
        caps: b"\x1b[?1c".to_vec(),
        caps_follow: false,
        env: vec![("TERM".into(), "xterm".into())],
        watch: false,
        terminal: Some("/dev/pts/3".into()),
    };
    assert_eq!(
        payload(encode_up(&open)),
        json(
            r#"{"target":{"type":"new","name":null,"dir":"/w","args":["-c"]},"cols":80,"rows":24,"caps":[27,91,63,49,99],"caps_follow":false,"env":[["TERM","xterm"]],"watch":false,"terminal":"/dev/pts/3"}"#
        )
    );
    assert_eq!(
        payload(encode_down(&Down::Terminal { taken: true })),
        json(r#"{"taken":true}"#)
    );
    assert_eq!(payload(encode_up(&Up::Detach)), json("{}"));
    assert_eq!(
        payload(encode_down(&Down::Listing { sessions: Vec::new() })),
        json(r#"{"sessions":[]}"#)
    );
    // Missing optional fields and unknown fields are fine: later versions may add fields.
    let attach = br#"{"target":{"type":"attach"},"cols":1,"rows":2,"caps":[],"env":[],"cwd":"/","new":1}"#;
    let Up::Open { target, .. } = decode_up(up_kind("open"), attach).unwrap() else {
        panic!("not an open")
    };
    assert_eq!(target, Target::Attach { name: None });
    assert_eq!(decode_up(up_kind("list"), br#"{"all":true}"#).unwrap(), Up::List);
}

/// Hands out `data`, then fails the test if anything reads further.
struct Only<'a>(&'a [u8]);

impl Read for Only<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        assert!(
            !self.0.is_empty(),
            "read past the header of a frame that should have been refused"
        );
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn an_oversized_length_is_refused_from_the_header_alone() {
    let two_gib = 0x8000_0000u32.to_be_bytes();
    let err = read_frame(&mut Only(&two_gib)).unwrap_err();
    assert!(matches!(err, WireError::TooLong { len: 0x8000_0000 }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "frame of 2147483648 bytes exceeds the 1 MiB limit"
    );

    let mut buf = FrameBuf::new();
    buf.push(&two_gib);
    assert!(matches!(buf.next(), Err(WireError::TooLong { .. })));
    buf.push(b"more");
    assert!(
        matches!(buf.next(), Err(WireError::TooLong { .. })),
        "the error sticks"
    );

    let just_over = u32::try_from(MAX_FRAME + 1).unwrap().to_be_bytes();
    assert!(matches!(
        read_frame(&mut Only(&just_over)),
        Err(WireError::TooLong { .. })
    ));
    let largest = [
        &u32::try_from(MAX_FRAME).unwrap().to_be_bytes()[..],
        &[kind::OUTPUT],
    ]
    .concat();
    let mut stream = largest.clone();
    stream.resize(4 + MAX_FRAME, b'x');
    let (kind, payload) = read_frame(&mut &stream[..]).unwrap().unwrap();
    assert_eq!((kind, payload.len()), (kind::OUTPUT, MAX_FRAME - 1));
}

#[test]
fn a_zero_length_is_refused() {
    let err = read_frame(&mut Only(&[0, 0, 0, 0])).unwrap_err();
    assert!(matches!(err, WireError::Empty), "{err:?}");
    assert!(err.to_string().contains("0 bytes"), "{err}");
    let mut buf = FrameBuf::new();
    buf.push(&[0, 0, 0, 0, 1]);
    assert!(matches!(buf.next(), Err(WireError::Empty)));
}

#[test]
fn a_stream_ending_inside_a_frame_is_an_error_and_between_frames_is_not() {
    let frame = encode_up(&Up::Kill {
        name: "x".into(),
        from: None,
    });
    assert!(read_frame(&mut &[][..]).unwrap().is_none());
    for cut in 1..frame.len() {
        let err = read_frame(&mut &frame[..cut]).unwrap_err();
        assert!(matches!(err, WireError::Truncated), "cut at {cut}: {err:?}");
        let mut buf = FrameBuf::new();
        buf.push(&frame[..cut]);
        assert!(buf.next().unwrap().is_none());
        assert!(matches!(buf.finish(), Err(WireError::Truncated)));
    }
    let err = read_frame(&mut &frame[..frame.len() - 1]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the peer closed the connection in the middle of a frame"
    );
    let mut two = frame.clone();
    two.extend(&frame);
    let mut reader = &two[..];
    assert!(read_frame(&mut reader).unwrap().is_some());
    assert!(read_frame(&mut reader).unwrap().is_some());
    assert!(read_frame(&mut reader).unwrap().is_none());
}

#[test]
fn an_unknown_kind_is_an_error_naming_the_kind() {
    let err = decode_up(0x7f, b"{}").unwrap_err();
    assert!(matches!(err, WireError::UnknownKind { kind: 0x7f }), "{err:?}");
    assert!(err.to_string().starts_with("bad message of kind 0x7f"), "{err}");
    // A server message sent to the server, and the other way round.
    assert!(matches!(
        decode_up(kind::OUTPUT, b"x"),
        Err(WireError::UnknownKind { kind: 0x82 })
    ));
    assert!(matches!(
        decode_down(kind::INPUT, b"x"),
        Err(WireError::UnknownKind { kind: 0x03 })
    ));
}

#[test]
fn bad_json_is_an_error_naming_the_kind() {
    let err = decode_up(up_kind("hello"), b"{not json").unwrap_err();
    assert!(
        matches!(err, WireError::BadMessage { kind, .. } if kind == up_kind("hello")),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with("bad message of kind 0x01 (hello): "),
        "{err}"
    );
    let cases: [(u8, &[u8]); 5] = [
        (up_kind("resize"), br#"{"cols":70000,"rows":1}"#),
        (up_kind("kill"), br#"{}"#),
        (up_kind("detach"), b""),
        (
            up_kind("open"),
            br#"{"target":{"type":"steal"},"cols":1,"rows":1,"caps":[],"env":[],"cwd":""}"#,
        ),
        (up_kind("hello"), b"\xff\xfe"),
    ];
    for (kind, payload) in cases {
        let err = decode_up(kind, payload).unwrap_err();
        assert!(
            matches!(&err, WireError::BadMessage { kind: k, .. } if *k == kind),
            "{err:?}"
        );
    }
    let err = decode_down(down_kind("exited"), br#"{"code":"one","farewell":[]}"#).unwrap_err();
    assert!(err.to_string().contains("(exited)"), "{err}");
    let io: io::Error = err.into();
    assert_eq!(io.kind(), io::ErrorKind::InvalidData);
}

/// A peer of another protocol is told which side is older and what to do; an older server's own
/// refusal (protocols 1 and 2 worded it so) is recognised, so that the client can say the same.
#[test]
fn another_protocol_is_refused_with_what_to_do() {
    let older_client = protocol_mismatch(2, PROTOCOL, 77);
    assert!(
        older_client.contains("this pokeshell is older")
            && older_client.contains("protocol 2, the server 3")
            && older_client.contains("kill 77"),
        "{older_client}"
    );
    let older_server = protocol_mismatch(PROTOCOL, 2, 77);
    assert!(
        older_server.contains("server that runs (pid 77) is older")
            && older_server.contains("kill 77")
            && older_server.contains("brings them back"),
        "{older_server}"
    );
    let said_by_2 = "the client speaks protocol 3, this server 2: the client and the server are \
                     different pokeshell versions";
    assert_eq!(older_server_refusal(said_by_2), Some(2));
    assert_eq!(older_server_refusal("wrong token"), None);
    assert_eq!(older_server_refusal(&older_client), None, "ours is clear already");
}
