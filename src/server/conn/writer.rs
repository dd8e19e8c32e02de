//! A connection's writer: the server's messages and the session's frames, on the socket, or the
//! frames on the client's terminal when the server holds it (`crate::ipc::terminal`), in the one
//! order it has them, after whatever the session left half-written (`crate::ipc::outbox`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc::UnboundedReceiver;

use super::{ConnCmd, Following};
use crate::ipc::halves::WriteHalf;
use crate::ipc::outbox::Outbox;
use crate::ipc::terminal;
use crate::server::event_loop::ClientOut;
use pokeshell_core::wire::{self, Down};

fn set_following(following: &Following, queue: Option<Arc<AtomicUsize>>) {
    if let Ok(mut f) = following.lock() {
        *f = queue;
    }
}

/// The session's frames waiting for this client, and its count of their bytes.
type Follow = (UnboundedReceiver<ClientOut>, Arc<AtomicUsize>);

/// What the writer writes.
enum Piece {
    /// Bytes of the screen: raw to the client's terminal when the server writes it, else framed on
    /// the socket.
    Screen(Vec<u8>),
    /// A message of the server's, framed: always on the socket.
    Message(Vec<u8>),
}

/// Where the writer writes: the socket, and the client's terminal once the outbox has it.
struct Sink {
    wr: WriteHalf,
    term: terminal::Writer,
}

impl Sink {
    /// Screen bytes as the outbox sends them: raw to the terminal, or already framed.
    async fn screen(&mut self, outbox: &Outbox, bytes: &[u8]) -> std::io::Result<()> {
        match outbox.terminal() {
            Some(t) => self.term.write_all(t, bytes).await,
            None => self.wr.write_all(bytes).await,
        }
    }
}

/// Writes the end of a frame the session left unwritten, if any (see [`Outbox`]).
async fn write_tail(sink: &mut Sink, outbox: &Outbox) -> std::io::Result<()> {
    let Some(tail) = outbox.before_write() else {
        return Ok(());
    };
    let written = sink.screen(outbox, &tail).await;
    outbox.uncounted();
    written
}

/// Writes `piece`, after the end of a frame the session left unwritten.
async fn write(sink: &mut Sink, outbox: &Outbox, piece: &Piece) -> std::io::Result<()> {
    write_tail(sink, outbox).await?;
    match piece {
        Piece::Screen(bytes) if outbox.terminal().is_some() => sink.screen(outbox, bytes).await,
        Piece::Screen(bytes) => sink.wr.write_all(&wire::encode_output(bytes)).await,
        Piece::Message(frame) => sink.wr.write_all(frame).await,
    }
}

/// Lets go of a follow: what its session sent and was not written is dropped, and uncounted.
fn unfollow(follow: &mut Option<Follow>, outbox: &Outbox) {
    if let Some((mut rx, _)) = follow.take() {
        rx.close();
        while rx.try_recv().is_ok() {
            outbox.uncounted();
        }
    }
}

pub(super) async fn write_loop(
    wr: WriteHalf,
    mut ctl: UnboundedReceiver<ConnCmd>,
    following: Following,
    outbox: Arc<Outbox>,
) {
    let mut sink = Sink {
        wr,
        term: terminal::Writer::default(),
    };
    let mut follow: Option<Follow> = None;
    loop {
        let out = async {
            match &mut follow {
                Some((rx, _)) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        let frame = tokio::select! {
            biased;
            cmd = ctl.recv() => {
                let Some(cmd) = cmd else { break };
                // Every command was counted when it was sent; it is done with once handled here.
                let _done = Uncount(&outbox);
                match cmd {
                    ConnCmd::Down(down) => {
                        let last = matches!(down, Down::Detached { .. } | Down::Exited { .. } | Down::Error { .. });
                        if last && let Some((rx, queued)) = &mut follow {
                            // What the session drew before it ended comes first.
                            while let Ok(out) = rx.try_recv() {
                                let _done = Uncount(&outbox);
                                if let Some(piece) = encode_out(out, queued, &outbox)
                                    && write(&mut sink, &outbox, &piece).await.is_err()
                                {
                                    break;
                                }
                            }
                        }
                        if (last || matches!(down, Down::Hop { .. }))
                            && let Some(t) = outbox.terminal()
                        {
                            // Before the client hears it: it gives the terminal back to the shell
                            // (or to ssh) as soon as it does.
                            let _ = write_tail(&mut sink, &outbox).await;
                            t.close();
                        }
                        let frame = Piece::Message(wire::encode_down(&down));
                        if write(&mut sink, &outbox, &frame).await.is_err() || last {
                            break;
                        }
                        continue;
                    }
                    ConnCmd::Follow { out, queued, input_queued } => {
                        unfollow(&mut follow, &outbox);
                        follow = Some((out, queued));
                        set_following(&following, Some(input_queued));
                        continue;
                    }
                    ConnCmd::Unfollow => {
                        unfollow(&mut follow, &outbox);
                        set_following(&following, None);
                        continue;
                    }
                }
            },
            out = out => out,
        };
        let Some(out) = frame else {
            // The session's loop let go of this client.
            follow = None;
            continue;
        };
        let _done = Uncount(&outbox);
        let Some((_, queued)) = &follow else {
            continue;
        };
        let written = match encode_out(out, queued, &outbox) {
            Some(piece) => write(&mut sink, &outbox, &piece).await,
            // The end of a frame the session left.
            None => write_tail(&mut sink, &outbox).await,
        };
        if written.is_err() {
            break;
        }
    }
    let _ = sink.wr.shutdown().await;
}

/// Uncounts one message of the outbox's when dropped, however its handling ended.
struct Uncount<'a>(&'a Outbox);

impl Drop for Uncount<'_> {
    fn drop(&mut self) {
        self.0.uncounted();
    }
}

/// One thing a session sent this client, as the writer writes it.
fn encode_out(out: ClientOut, queued: &AtomicUsize, outbox: &Outbox) -> Option<Piece> {
    match out {
        ClientOut::Bytes(b) => {
            queued.fetch_sub(b.len(), Ordering::AcqRel);
            Some(Piece::Screen(b))
        }
        // The end of the frame, left in the outbox, is written before anything.
        ClientOut::Tail => None,
        ClientOut::Suspend => {
            // The shell has the terminal until the client is back (`Up::Resumed`).
            if let Some(t) = outbox.terminal() {
                t.pause();
            }
            Some(Piece::Message(wire::encode_down(&Down::Suspend)))
        }
        ClientOut::Size { cols, rows } => Some(Piece::Message(wire::encode_down(&Down::Size { cols, rows }))),
    }
}

#[cfg(test)]
mod tests;
