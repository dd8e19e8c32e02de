use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use super::*;

fn pair() -> (Outbox, UnixStream, UnixStream) {
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    ours.set_nonblocking(true).expect("non-blocking");
    theirs.set_nonblocking(true).expect("non-blocking");
    (Outbox::new(ours.as_fd()).expect("outbox"), ours, theirs)
}

fn drain(s: &mut UnixStream) -> Vec<u8> {
    let mut all = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return all,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return all,
            Err(e) => panic!("read: {e}"),
        }
    }
}

/// Offers the session's screen bytes `frame` to the outbox.
fn put(outbox: &Outbox, follow: u64, frame: &[u8]) -> Direct {
    outbox.try_write(follow, frame)
}

/// `bytes` as they go on the socket.
fn framed(bytes: &[u8]) -> Vec<u8> {
    pokeshell_core::wire::encode_output(bytes)
}

#[test]
fn a_frame_is_written_at_once_while_nothing_is_on_its_way() {
    let (outbox, _ours, mut theirs) = pair();
    let follow = outbox.next_follow();
    assert_eq!(put(&outbox, follow, b"frame one"), Direct::Written);
    assert_eq!(drain(&mut theirs), framed(b"frame one"));
}

#[test]
fn while_the_writer_has_something_the_session_queues() {
    let (outbox, _ours, mut theirs) = pair();
    let follow = outbox.next_follow();
    outbox.counted();
    assert_eq!(put(&outbox, follow, b"later"), Direct::Queue);
    assert!(drain(&mut theirs).is_empty());
    outbox.uncounted();
    assert_eq!(put(&outbox, follow, b"now"), Direct::Written);
    assert_eq!(drain(&mut theirs), framed(b"now"));
}

#[test]
fn an_old_follow_writes_nothing() {
    let (outbox, _ours, mut theirs) = pair();
    let old = outbox.next_follow();
    let new = outbox.next_follow();
    assert_eq!(put(&outbox, old, b"from the session left"), Direct::Queue);
    assert_eq!(put(&outbox, new, b"from the new one"), Direct::Written);
    assert_eq!(drain(&mut theirs), framed(b"from the new one"));
}

#[test]
fn a_frame_the_socket_takes_in_part_leaves_its_end_to_the_writer_and_the_stream_stays_whole() {
    let (outbox, _ours, mut theirs) = pair();
    let follow = outbox.next_follow();
    // Frames of a pattern of their own until the socket is full.
    let mut sent = Vec::new();
    let mut outcome = Direct::Written;
    for i in 0..10_000u32 {
        let frame: Vec<u8> = (0..3000u32).map(|j| ((i * 7 + j) % 251) as u8).collect();
        outcome = put(&outbox, follow, &frame);
        match outcome {
            Direct::Written | Direct::Tail => sent.extend_from_slice(&framed(&frame)),
            _ => break,
        }
        if outcome != Direct::Written {
            break;
        }
    }
    assert_ne!(outcome, Direct::Written, "the socket never filled");
    // Nothing is written past a frame's unwritten end, nor past a full socket.
    assert_eq!(put(&outbox, follow, b"next"), Direct::Queue);
    let mut got = drain(&mut theirs);
    if outcome == Direct::Tail {
        let tail = outbox.before_write().expect("the end of the frame is left");
        outbox.uncounted();
        got.extend_from_slice(&tail);
    } else {
        assert!(outbox.before_write().is_none());
    }
    assert_eq!(got.len(), sent.len());
    assert!(got == sent, "the bytes arrived out of order");
    assert_eq!(put(&outbox, follow, b"next"), Direct::Written);
}

#[test]
fn a_closed_socket_is_said() {
    let (outbox, _ours, theirs) = pair();
    let follow = outbox.next_follow();
    drop(theirs);
    assert_eq!(put(&outbox, follow, b"anyone?"), Direct::Gone);
}

#[test]
fn a_frame_bigger_than_the_socket_takes_is_finished_by_the_writer() {
    let (outbox, _ours, mut theirs) = pair();
    let follow = outbox.next_follow();
    let frame: Vec<u8> = (0..4u32 << 20).map(|j| (j % 253) as u8).collect();
    assert_eq!(put(&outbox, follow, &frame), Direct::Tail);
    assert_eq!(put(&outbox, follow, b"next"), Direct::Queue);
    let mut got = drain(&mut theirs);
    assert!(!got.is_empty() && got.len() < frame.len());
    got.extend_from_slice(&outbox.before_write().expect("the end of the frame is left"));
    outbox.uncounted();
    assert!(got == framed(&frame), "the frame arrived broken");
    assert_eq!(put(&outbox, follow, b"next"), Direct::Written);
}
