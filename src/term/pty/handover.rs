//! Who reads the PTY. The reader thread does, with a parser thread beside it, while output keeps
//! coming. After a quiet spell it lends the reading to the session's loop, if the loop asked for
//! quiet spells: the loop then waits on the descriptor itself and parses a typed key's echo on its
//! own thread, so no other thread has to wake between pi's echo and the frame that shows it. The
//! loop gives the reading back at its first big read (a flood starting), with that read, which the
//! parser takes before anything the reader reads next: output is parsed in the order it came.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use super::{Events, PtyEvent};

enum Turn {
    /// The reader thread reads.
    Reader,
    /// Lent to the loop; the reader thread waits.
    Loop,
    /// Given back by the loop, with what it read and did not parse.
    Back(Vec<u8>),
    /// The loop has let go of this PTY for good (its child was replaced or the loop ended): the
    /// reader reads on its own until the end.
    Closed,
}

pub(super) struct Handover {
    turn: Mutex<Turn>,
    changed: Condvar,
    /// The loop takes quiet spells: it runs, on a runtime that can wait on the descriptor.
    wanted: AtomicBool,
}

impl Handover {
    pub(super) fn new(wanted: bool) -> Self {
        Self {
            turn: Mutex::new(Turn::Reader),
            changed: Condvar::new(),
            wanted: AtomicBool::new(wanted),
        }
    }

    fn turn(&self) -> MutexGuard<'_, Turn> {
        self.turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the reader should look for a quiet spell to lend.
    pub(super) fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Acquire)
    }

    /// Reader: lends the reading to the loop and waits until it comes back. Returns what the loop
    /// read and left to be parsed first.
    pub(super) fn lend(&self, events: &Events) -> Vec<u8> {
        {
            let mut turn = self.turn();
            if !matches!(*turn, Turn::Reader) || !self.wanted() {
                return Vec::new();
            }
            *turn = Turn::Loop;
        }
        events(PtyEvent::Quiet);
        let mut turn = self.turn();
        loop {
            match std::mem::replace(&mut *turn, Turn::Reader) {
                Turn::Loop => {
                    *turn = Turn::Loop;
                    turn = self
                        .changed
                        .wait(turn)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
                Turn::Back(chunk) => return chunk,
                Turn::Reader => return Vec::new(),
                Turn::Closed => {
                    *turn = Turn::Closed;
                    return Vec::new();
                }
            }
        }
    }

    /// Loop: whether the reading is lent to it now (a `Quiet` from a replaced child's reader is
    /// not for this PTY).
    pub(super) fn lent(&self) -> bool {
        matches!(*self.turn(), Turn::Loop)
    }

    /// Loop: gives the reading back, with what it read and did not parse.
    pub(super) fn give_back(&self, chunk: Vec<u8>) {
        let mut turn = self.turn();
        if matches!(*turn, Turn::Loop) {
            *turn = Turn::Back(chunk);
            self.changed.notify_all();
        }
    }

    /// Loop: wants quiet spells from now on, or no more (then the reading comes back now).
    pub(super) fn want(&self, on: bool) {
        self.wanted.store(on, Ordering::Release);
        if !on {
            self.give_back(Vec::new());
        }
    }

    /// Loop: lets go of this PTY for good.
    pub(super) fn close(&self) {
        self.wanted.store(false, Ordering::Release);
        let mut turn = self.turn();
        if let Turn::Back(chunk) = std::mem::replace(&mut *turn, Turn::Closed) {
            // Not taken yet by the reader: it still is, as its chunk.
            *turn = Turn::Back(chunk);
        }
        self.changed.notify_all();
    }
}
