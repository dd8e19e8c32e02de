//! A connection at work on the runtime that holds it: one loop that writes what is due, reads the
//! client's socket and its held terminal, and hears the performer, until the connection ends or
//! belongs elsewhere.

use tokio::runtime::Handle as Runtime;

use super::out::{Dest, Here, Term};
use super::{Conn, READ_BUFFER};
use crate::ipc::halves;
use crate::server::event_loop::input_meter;
use pokeshell_core::wire::{self, Up};

/// `f`'s output, or never when there is nothing to wait for.
async fn maybe<F: Future>(f: Option<F>) -> F::Output {
    match f {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}

impl Conn {
    /// Serves the client here; `Some`: the runtime the connection goes to next, `None`: it ended.
    pub(super) async fn serve_here(&mut self) -> Option<(Runtime, Option<u32>)> {
        let mut here = match halves::split(&self.socket) {
            Ok((socket, socket_wr)) => Here {
                socket,
                socket_wr,
                term: None,
                term_wr: None,
            },
            Err(e) => {
                eprintln!("pokeshell server: cannot read a connection here: {e}");
                return None;
            }
        };
        let mut sbuf = vec![0u8; READ_BUFFER];
        let mut tbuf = vec![0u8; READ_BUFFER];
        loop {
            self.hold_terminal(&mut here);
            match self.out.flush(&mut self.term, &mut self.paused, &mut here) {
                Ok(()) => {}
                Err(Dest::Socket) => self.done = true,
                Err(Dest::Terminal) => self.terminal_lost(),
            }
            // After its last word the server waits for the client to close (a client may still be
            // sending what it sent before it read that word), and takes nothing from it.
            let said_all = self.out.said_last && !self.reading;
            if self.done || said_all || (self.ctl_closed && self.out.idle()) {
                return None;
            }
            if let Some(next) = self.elsewhere() {
                return Some(next);
            }
            // What it handed over may have brought something to write, or a move.
            if self.take_frames() {
                continue;
            }
            let room = !self.unheard && self.input_room();
            let read_socket = room && self.reading;
            let read_keys = room && self.keys && !self.paused && matches!(self.term, Term::Held(_));
            let held = self.held_since.is_some() && self.reading;
            let take_screen = self.out.idle();
            let blocked = self.out.blocked;
            tokio::select! {
                biased;
                cmd = self.ctl.recv(), if !self.ctl_closed => match cmd {
                    Some(cmd) => self.command(cmd),
                    None => self.ctl_closed = true,
                },
                n = here.socket.read(&mut sbuf), if read_socket => match n {
                    Ok(0) => self.socket_ended(None),
                    Ok(n) => self.frames.push(&sbuf[..n]),
                    Err(e) => self.socket_ended(Some(e.to_string())),
                },
                n = maybe(here.term.as_mut().map(|r| r.read(&mut tbuf))), if read_keys => match n {
                    Ok(n) if n > 0 => self.key(tbuf[..n].to_vec()),
                    _ => self.terminal_lost(),
                },
                out = maybe(self.screen.as_mut().map(|(rx, _)| rx.recv())), if take_screen => self.drawn(out),
                r = here.socket_wr.room(), if blocked == Some(Dest::Socket) => {
                    if r.is_err() {
                        self.done = true;
                    }
                }
                r = maybe(here.term_wr.as_mut().map(|w| w.room())), if blocked == Some(Dest::Terminal) => {
                    if r.is_err() {
                        self.terminal_lost();
                    }
                }
                () = tokio::time::sleep(input_meter::RECHECK), if held => {}
            }
        }
    }

    /// The held terminal's halves on this runtime, for as long as it is held.
    fn hold_terminal(&mut self, here: &mut Here) {
        match &self.term {
            Term::Held(fd) if here.term.is_none() => match halves::split(fd) {
                Ok((rd, wr)) => (here.term, here.term_wr) = (Some(rd), Some(wr)),
                Err(_) => self.terminal_lost(),
            },
            Term::Held(_) => {}
            _ => (here.term, here.term_wr) = (None, None),
        }
    }

    /// Hands over the whole frames read, for as long as the client may be read; whether it did.
    fn take_frames(&mut self) -> bool {
        let mut took = false;
        while self.reading && !self.unheard && self.input_room() {
            let (kind, payload) = match self.frames.next() {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(e) => {
                    self.garbage(e.to_string());
                    break;
                }
            };
            took = true;
            match wire::decode_up(kind, &payload) {
                _ if self.out.said_last => {}
                Ok(Up::Input(bytes)) => self.key(bytes),
                Ok(up) => self.message(up),
                Err(e) => self.garbage(e.to_string()),
            }
        }
        took
    }

    /// The client closed its socket (or it failed): the connection ends.
    fn socket_ended(&mut self, error: Option<String>) {
        if let Some(reason) = error.or_else(|| self.frames.finish().err().map(|e| e.to_string())) {
            self.garbage(reason);
        }
        self.done = true;
    }

    /// The held terminal can no longer be read or written: unless the server let go of it, the
    /// client is detached, as a client whose own read of its terminal failed detaches itself.
    fn terminal_lost(&mut self) {
        if matches!(self.term, Term::Held(_)) {
            self.term = Term::Closed;
            self.message(Up::Detach);
        }
    }
}
