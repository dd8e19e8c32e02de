use std::os::fd::AsFd;

use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;
use tokio::sync::mpsc::unbounded_channel;

use super::*;
use crate::ipc::halves;
use crate::ipc::outbox::Direct;
use crate::ipc::terminal::Terminal;
use crate::ipc::terminal::tests::{pty, quiet, shown};

/// The writer finishes a frame the session's thread left half-written before writing anything of
/// its own, and the client reads one whole stream.
#[tokio::test(flavor = "current_thread")]
async fn the_writer_finishes_a_half_written_frame_before_its_own_message() {
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    let outbox = Arc::new(Outbox::new(ours.as_fd()).expect("outbox"));
    let (_rd, wr) = halves::split(ours.into_std().expect("std")).expect("split");
    let follow = outbox.next_follow();
    let frame: Vec<u8> = (0..4u32 << 20).map(|j| (j % 251) as u8).collect();
    assert_eq!(outbox.try_write(follow, &frame), Direct::Tail);
    let reader = tokio::spawn(async move {
        let mut theirs = theirs;
        let mut got = Vec::new();
        theirs.read_to_end(&mut got).await.map(|_| got)
    });
    let mut sink = Sink {
        wr,
        term: terminal::Writer::default(),
    };
    let message = Piece::Message(b"the server's own message".to_vec());
    write(&mut sink, &outbox, &message).await.expect("written");
    // Nothing is left over for the session, which may write at once again.
    assert!(outbox.before_write().is_none());
    assert_eq!(outbox.try_write(follow, b"!"), Direct::Written);
    sink.wr.shutdown().await.expect("shut down");
    drop(sink);
    let got = reader.await.expect("reader").expect("read");
    let mut want = pokeshell_core::wire::encode_output(&frame);
    want.extend_from_slice(b"the server's own message");
    want.extend_from_slice(&pokeshell_core::wire::encode_output(b"!"));
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the stream arrived out of order");
}

/// With the client's terminal held, the screen's bytes go there and the server's messages on the
/// socket, in the one order the writer has them; the terminal is closed before the client hears it
/// is detached, so nothing reaches it (nor is read from it) afterwards.
#[tokio::test(flavor = "current_thread")]
async fn the_screen_goes_to_the_held_terminal_which_is_closed_before_the_client_is_told_it_left() {
    let (master, _slave, path) = pty();
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    let outbox = Arc::new(Outbox::new(ours.as_fd()).expect("outbox"));
    let term = Arc::new(Terminal::open(&path).expect("the terminal opens"));
    outbox.set_terminal(term.clone());
    let (_rd, wr) = halves::split(ours.into_std().expect("std")).expect("split");
    let (ctl_tx, ctl_rx) = unbounded_channel();
    let writer = tokio::spawn(write_loop(wr, ctl_rx, Following::default(), outbox.clone()));
    let (out_tx, out_rx) = unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let send = |cmd| {
        outbox.counted();
        ctl_tx.send(cmd).expect("the writer runs");
    };
    send(ConnCmd::Follow {
        out: out_rx,
        queued: queued.clone(),
        input_queued: Arc::default(),
    });
    // Queued behind the follow: the writer writes it, to the terminal, raw.
    outbox.counted();
    queued.fetch_add(6, Ordering::AcqRel);
    out_tx.send(ClientOut::Bytes(b"screen".to_vec())).expect("sent");
    send(ConnCmd::Down(Down::Detached {
        reason: "detached from 1:work".into(),
    }));
    writer.await.expect("the writer ends after a detach");
    assert_eq!(
        shown(&master),
        b"screen",
        "the screen went to the terminal, unframed"
    );
    let mut got = Vec::new();
    let mut theirs = theirs;
    theirs.read_to_end(&mut got).await.expect("read");
    let mut frames = wire::FrameBuf::new();
    frames.push(&got);
    let (kind, payload) = frames.next().expect("a frame").expect("whole");
    assert_eq!(
        wire::decode_down(kind, &payload).expect("decoded"),
        Down::Detached {
            reason: "detached from 1:work".into()
        },
        "the socket carries the message alone"
    );
    assert!(frames.next().expect("no garbage").is_none());
    assert!(term.is_closed(), "closed before the client was told");
    // The session's thread, late, writes nothing there any more.
    assert_eq!(outbox.try_write(outbox.next_follow(), b"late"), Direct::Written);
    assert!(quiet(&master), "nothing reached the terminal after");
}
