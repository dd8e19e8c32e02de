use tokio::io::AsyncReadExt;

use super::*;
use crate::ipc::outbox::Direct;

/// The writer finishes a frame the session's thread left half-written before writing anything of
/// its own, and the client reads one whole stream.
#[tokio::test(flavor = "current_thread")]
async fn the_writer_finishes_a_half_written_frame_before_its_own_message() {
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    let outbox = Arc::new(Outbox::new(ours.as_fd()).expect("outbox"));
    let (_rd, mut wr) = halves::split(ours.into_std().expect("std")).expect("split");
    let follow = outbox.next_follow();
    let frame: Vec<u8> = (0..4u32 << 20).map(|j| (j % 251) as u8).collect();
    assert_eq!(outbox.try_write(follow, || frame.clone()), Direct::Tail);
    let reader = tokio::spawn(async move {
        let mut theirs = theirs;
        let mut got = Vec::new();
        theirs.read_to_end(&mut got).await.map(|_| got)
    });
    write(&mut wr, &outbox, b"the server's own message")
        .await
        .expect("written");
    // Nothing is left over for the session, which may write at once again.
    assert!(outbox.before_write().is_none());
    assert_eq!(outbox.try_write(follow, || b"!".to_vec()), Direct::Written);
    wr.shutdown().await.expect("shut down");
    drop(wr);
    let got = reader.await.expect("reader").expect("read");
    let mut want = frame;
    want.extend_from_slice(b"the server's own message!");
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the stream arrived out of order");
}
