//! A client's socket read on the thread of the session it types into. The connection's task runs on
//! the server's main thread, so each key woke that thread and then the session's; while the client
//! follows a session and nothing it sent is on its way through the core, the connection lends the
//! reading to the session's runtime instead, and a key wakes the session's thread alone, as tmux's
//! one server thread is woken once. Keys go on to the loop through its channel as before, with
//! their tickets, and on the same thread.
//!
//! The reading comes back to the connection, with whatever is unread, as soon as anything but a
//! key is next (a resize, the terminal's answers, a request: those go through the core, in order),
//! the socket ends or fails, the client's input is to be held back, or the route changes (a switch,
//! a detach, the session ending). It always comes back: dropping a lent reading (its runtime
//! ending before or while it runs) gives it back too.

use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

use super::{Following, READ_BUFFER, queued, tell_typed};
use crate::ipc::halves::ReadHalf;
use crate::ipc::terminal::{Keys, Terminal, Typed};
use crate::server::event_loop::input_meter::{self, Ticket, Verdict};
use crate::server::route::Route;
use crate::server::serve::ServerMsg;
use pokeshell_core::wire::{self, FrameBuf, kind};

/// What a connection hands the session's runtime, and gets back.
pub struct Reading {
    pub stream: Arc<UnixStream>,
    pub frames: FrameBuf,
    /// The session's runtime did not take the reading (it had ended, or could not register the
    /// socket): the connection keeps it for as long as the route is the same.
    pub refused: bool,
}

/// The keys of a client's terminal that the server reads itself (`crate::ipc::terminal`), lent as
/// its socket is.
pub struct Keyboard {
    pub term: Arc<Terminal>,
    /// Keys read and not handed over: the connection sends them on, the way it finds.
    pub unread: Vec<u8>,
    pub refused: bool,
    /// The terminal was closed, hung up or failed: nothing more is read from it.
    pub ended: bool,
}

/// What a lent reading gives back.
pub trait Given {
    /// The session's runtime never ran the reading.
    fn refuse(&mut self);
}

impl Given for Reading {
    fn refuse(&mut self) {
        self.refused = true;
    }
}

impl Given for Keyboard {
    fn refuse(&mut self) {
        self.refused = true;
    }
}

/// A reading lent: given back when dropped, however its task ended.
pub struct Lent<R: Given = Reading> {
    id: u64,
    reading: Option<R>,
    back: Option<oneshot::Sender<R>>,
    route: Arc<Route>,
    /// The route's generation when lent: a change of route ends the lending.
    generation: u64,
    server: UnboundedSender<ServerMsg>,
    in_flight: Arc<AtomicUsize>,
    following: Following,
    /// The reading task ran: a runtime that ended drops a task without running it.
    taken: bool,
}

impl<R: Given> Drop for Lent<R> {
    fn drop(&mut self) {
        if let (Some(mut reading), Some(back)) = (self.reading.take(), self.back.take()) {
            if !self.taken {
                reading.refuse();
            }
            let _ = back.send(reading);
        }
    }
}

impl<R: Given> Lent<R> {
    pub fn new(
        id: u64,
        reading: R,
        route: Arc<Route>,
        generation: u64,
        server: UnboundedSender<ServerMsg>,
        counts: (Arc<AtomicUsize>, Following),
    ) -> (Lent<R>, oneshot::Receiver<R>) {
        let (back, returned) = oneshot::channel();
        let lent = Lent {
            id,
            reading: Some(reading),
            back: Some(back),
            route,
            generation,
            server,
            in_flight: counts.0,
            following: counts.1,
            taken: false,
        };
        (lent, returned)
    }

    /// Whether the client's input may be read now (else the connection waits or drops it).
    fn room(&self) -> bool {
        let verdict = input_meter::verdict(
            self.in_flight.load(Ordering::Acquire),
            queued(&self.following),
            Duration::ZERO,
            Duration::MAX,
        );
        verdict == Verdict::Read
    }
}

/// Reads the client's keys on this runtime until the reading goes back (see the module's comment).
pub async fn read(mut lent: Lent) {
    let Some(stream) = lent.reading.as_ref().map(|r| r.stream.clone()) else {
        return;
    };
    let Ok(mut rd) = ReadHalf::of(stream) else {
        return;
    };
    lent.taken = true;
    let mut buf = vec![0u8; READ_BUFFER];
    let mut told_typed: Option<Instant> = None;
    loop {
        let room = lent.room();
        let Some(frames) = lent.reading.as_mut().map(|r| &mut r.frames) else {
            break;
        };
        match frames.peek_kind() {
            Ok(Some(kind::INPUT)) if room => {
                // An input frame's payload is the keys themselves (`wire::encode_input`).
                let Ok(Some((_, bytes))) = frames.next() else {
                    break;
                };
                let ticket = Ticket::new(&lent.in_flight, bytes.len());
                if let Err((bytes, _)) = lent.route.lent_key(lent.generation, lent.id, bytes, ticket) {
                    frames.unread(&wire::encode_input(&bytes));
                    break;
                }
                tell_typed(&mut told_typed, &lent.server, lent.id);
                continue;
            }
            Ok(None) => {}
            // Anything else, a frame it does not take or a broken one, is the connection's.
            _ => break,
        }
        let changed = lent.route.changed();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if !lent.route.is_still(lent.generation) {
            break;
        }
        tokio::select! {
            () = &mut changed => break,
            read = rd.read(&mut buf) => match read {
                Ok(n) if n > 0 => frames.push(&buf[..n]),
                // The end, or an error: the connection reads it again and says so.
                _ => break,
            },
        }
    }
    // The registration with this runtime goes before the socket goes back.
    drop(rd.into_stream());
}

/// Reads the keys of the client's terminal on this runtime until the reading goes back: the route
/// changes, the input is to be held back, a key cannot go the short way, or the terminal is closed.
pub async fn read_terminal(mut lent: Lent<Keyboard>) {
    let Some(term) = lent.reading.as_ref().map(|r| r.term.clone()) else {
        return;
    };
    let Ok(mut keys) = Keys::new(&term) else {
        return;
    };
    lent.taken = true;
    let mut buf = vec![0u8; READ_BUFFER];
    let mut told_typed: Option<Instant> = None;
    while lent.room() {
        let changed = lent.route.changed();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if !lent.route.is_still(lent.generation) {
            break;
        }
        let typed = tokio::select! {
            () = &mut changed => break,
            typed = keys.read(&term, &mut buf) => typed,
        };
        let Typed::Bytes(n) = typed else {
            if let Some(r) = lent.reading.as_mut() {
                r.ended = true;
            }
            break;
        };
        let bytes = buf[..n].to_vec();
        let ticket = Ticket::new(&lent.in_flight, bytes.len());
        if let Err((bytes, _)) = lent.route.lent_key(lent.generation, lent.id, bytes, ticket) {
            if let Some(r) = lent.reading.as_mut() {
                r.unread = bytes;
            }
            break;
        }
        tell_typed(&mut told_typed, &lent.server, lent.id);
    }
    // The registration with this runtime goes before the reading goes back.
    drop(keys);
}

#[cfg(test)]
mod tests;
