//! What a connection writes, in the one order it was decided: the server's messages on the socket,
//! the screen's bytes on the client's terminal when the server holds it (else framed on the
//! socket). One piece at a time, from its first byte to its last, whatever else waits: the stream
//! stays whole, and the terminal is paused or let go of exactly between two pieces.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::sync::Arc;

use crate::ipc::halves::{ReadHalf, WriteHalf};
use pokeshell_core::wire::{self, Down};

/// The client's terminal, as far as the server is concerned.
pub(super) enum Term {
    /// The client reads and writes it itself: the screen goes on the socket.
    Client,
    Held(Arc<File>),
    /// Let go of for good: nothing more is read from it or written to it.
    Closed,
}

/// What the terminal becomes before a message is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    Plain,
    /// The client stops with pi: the shell has the terminal until it is back.
    Pause,
    /// The client goes to another machine: it gives the terminal to ssh at once.
    Close,
    /// The client leaves (its last word): the terminal goes back to the shell, the connection ends.
    Last,
}

pub(super) enum Piece {
    Screen(Vec<u8>),
    Message(Vec<u8>, Mark),
}

impl Piece {
    pub(super) fn message(down: &Down) -> Piece {
        let mark = match down {
            Down::Detached { .. } | Down::Exited { .. } | Down::Error { .. } => Mark::Last,
            Down::Hop { .. } => Mark::Close,
            Down::Suspend => Mark::Pause,
            _ => Mark::Plain,
        };
        Piece::Message(wire::encode_down(down), mark)
    }
}

/// Where a piece goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dest {
    Socket,
    Terminal,
}

/// The descriptors as the runtime that holds the connection reads and writes them.
pub(super) struct Here {
    pub(super) socket: ReadHalf,
    pub(super) socket_wr: WriteHalf,
    pub(super) term: Option<ReadHalf>,
    pub(super) term_wr: Option<WriteHalf>,
}

#[derive(Default)]
pub(super) struct Outgoing {
    queue: VecDeque<Piece>,
    /// The piece being written: where, its bytes, how many are written, whether it is the last.
    head: Option<(Dest, Vec<u8>, usize, bool)>,
    /// The head waits for room there.
    pub(super) blocked: Option<Dest>,
    /// The last message is written: nothing more is.
    pub(super) said_last: bool,
}

impl Outgoing {
    pub(super) fn push(&mut self, piece: Piece) {
        if !self.said_last {
            self.queue.push_back(piece);
        }
    }

    pub(super) fn idle(&self) -> bool {
        self.head.is_none() && self.queue.is_empty()
    }

    /// Writes all it can now, without waiting; `Err`: a write there failed (the client, or its
    /// terminal, is gone).
    pub(super) fn flush(&mut self, term: &mut Term, paused: &mut bool, here: &mut Here) -> Result<(), Dest> {
        self.blocked = None;
        loop {
            let Some((dest, bytes, done, last)) = &mut self.head else {
                let Some(piece) = self.queue.pop_front() else {
                    return Ok(());
                };
                self.head = start(piece, term, paused, here);
                continue;
            };
            let wr = match dest {
                Dest::Socket => Some(&mut here.socket_wr),
                Dest::Terminal => here.term_wr.as_mut(),
            };
            let written = match wr {
                Some(wr) if *done < bytes.len() => wr.try_write(&bytes[*done..]),
                _ => Ok(bytes.len() - *done),
            };
            match written {
                Ok(n) => {
                    *done += n;
                    if *done == bytes.len() {
                        self.said_last |= *last;
                        self.head = None;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.blocked = Some(*dest);
                    return Ok(());
                }
                Err(_) => {
                    let dest = *dest;
                    self.head = None;
                    return Err(dest);
                }
            }
        }
    }
}

/// A piece as it is written: its bytes and where they go, the terminal made ready for it; `None`:
/// screen bytes for a terminal that is not the session's now (drawn again when it is back).
fn start(
    piece: Piece,
    term: &mut Term,
    paused: &mut bool,
    here: &mut Here,
) -> Option<(Dest, Vec<u8>, usize, bool)> {
    match (piece, &*term) {
        (Piece::Screen(bytes), Term::Client) => Some((Dest::Socket, wire::encode_output(&bytes), 0, false)),
        (Piece::Screen(bytes), Term::Held(_)) if !*paused => Some((Dest::Terminal, bytes, 0, false)),
        (Piece::Screen(_), _) => None,
        (Piece::Message(frame, mark), _) => {
            match mark {
                Mark::Pause => *paused = true,
                Mark::Close | Mark::Last if matches!(term, Term::Held(_)) => {
                    *term = Term::Closed;
                    (here.term, here.term_wr) = (None, None);
                }
                _ => {}
            }
            Some((Dest::Socket, frame, 0, mark == Mark::Last))
        }
    }
}
