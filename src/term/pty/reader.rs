//! The PTY's output side: one thread reads, another parses into the mirror and answers queries. A
//! small read after a quiet spell, with nothing queued before it (a typed key's echo, a quiet
//! program's line), is parsed by the reader itself: one thread hop less on the way to the screen.
//! Output that keeps coming goes to the parser, whose bigger batches cost fewer wake-ups and let
//! the mirror skip more of a flood. A quiet spell with nothing left to parse is lent to the
//! session's loop when it asks for them ([`super::handover`]): then not even the reader wakes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use super::handover::Handover;
use super::io::{self, Master};
use super::{Events, PtyEvent};
use crate::term::screen::Mirror;

/// Chunks read from the PTY but not parsed yet; beyond this the reader waits, and the child's
/// writes wait in the kernel. All of it is parsed before a key's echo that comes after it: the
/// queue is kept short (at most 64 KiB, well under a millisecond of parsing) so an echo typed into
/// a flood does not wait behind it.
const READ_QUEUE: usize = 16;
/// At most this much output is parsed under one hold of the mirror's lock, which a frame waits for.
const MAX_BATCH: usize = 64 * 1024;
/// A flood's batch is parsed once it is this big, or after [`FLOOD_LINGER`]: big enough that
/// fast-forwarding skips most of it, small enough to be parsed in a fraction of a millisecond.
const FLOOD_BATCH: usize = 32 * 1024;
/// A read this big suggests more output is on its way (a PTY hands out at most 4 KiB at a time).
pub(super) const FULL_READ: usize = 4000;
/// How long the parser waits for the rest of a flood before parsing it: well under a frame.
const FLOOD_LINGER: Duration = Duration::from_millis(1);
/// A read this long after the one before comes after a quiet spell (not in the middle of a flood).
const QUIET: Duration = Duration::from_millis(2);
/// The same spell, as `poll` counts.
const QUIET_MS: i32 = QUIET.as_millis() as i32;

/// What parsing needs, shared by the reader (small reads), the parser (everything else) and the
/// loop (quiet spells).
pub(super) struct Parse {
    pub(super) mirror: Arc<Mutex<Mirror>>,
    pub(super) replies: io::Input,
    pub(super) pending: Arc<AtomicBool>,
    pub(super) events: Events,
}

impl Parse {
    /// Parses `bytes` into the mirror and answers the queries in them. `false`: the mirror's lock
    /// is poisoned, the process is ending.
    pub(super) fn parse(&self, bytes: &[u8]) -> bool {
        let Ok(mut m) = self.mirror.lock() else {
            return false;
        };
        m.process(bytes);
        let answer = m.take_replies();
        // Sent under the lock: answers the start-up probe released keep their place.
        self.replies.write(answer);
        true
    }

    /// Parses `bytes` and tells the loop (once until it takes the output).
    fn run(&self, bytes: &[u8]) -> bool {
        if !self.parse(bytes) {
            return false;
        }
        if !self.pending.swap(true, Ordering::AcqRel) {
            (self.events)(PtyEvent::Output);
        }
        true
    }
}

pub(super) fn spawn_reader(master: Master, parse: Arc<Parse>, handover: Arc<Handover>) {
    // Chunks handed to the parser and not parsed yet. Only the reader adds to it, so when it reads
    // zero nothing is before the reader's next chunk, and parsing it here keeps the order.
    let queued = Arc::new(AtomicUsize::new(0));
    // Reading and parsing run in two threads so the child can keep writing while a chunk is parsed:
    // throughput is then bounded by the slower of the two, not by their sum.
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(READ_QUEUE);
    let (inline, reader_queued) = (parse.clone(), queued.clone());
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut last_read: Option<Instant> = None;
        let mut last_len = 0;
        loop {
            // After a read that was not full, a quiet spell may begin: if nothing comes for one and
            // nothing waits to be parsed, the loop takes the reading.
            if last_len < FULL_READ && handover.wanted() && !io::readable_within(&master, QUIET_MS) {
                if reader_queued.load(Ordering::Acquire) == 0 {
                    let chunk = handover.lend(&inline.events);
                    last_read = None;
                    last_len = chunk.len();
                    if !chunk.is_empty() {
                        reader_queued.fetch_add(1, Ordering::AcqRel);
                        if tx.send(chunk).is_err() {
                            break;
                        }
                    }
                }
                continue;
            }
            let read = io::read(&master, &mut buf);
            let now = Instant::now();
            let quiet = last_read.is_none_or(|t| now.duration_since(t) >= QUIET);
            last_read = Some(now);
            last_len = *read.as_ref().unwrap_or(&0);
            match read {
                Ok(0) | Err(_) => break,
                Ok(n) if n < FULL_READ && quiet && reader_queued.load(Ordering::Acquire) == 0 => {
                    if !inline.run(&buf[..n]) {
                        break;
                    }
                }
                Ok(n) => {
                    reader_queued.fetch_add(1, Ordering::AcqRel);
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    thread::spawn(move || {
        while let Ok(mut batch) = rx.recv() {
            // A full read means a flood: let more of it arrive first, up to a batch. Fewer, bigger
            // batches cost fewer wake-ups, and the mirror skips more of a flood; a blind sleep
            // would leave the parser idle while the queue is already full.
            let mut chunks = 1;
            if batch.len() >= FULL_READ {
                let until = Instant::now() + FLOOD_LINGER;
                while batch.len() < FLOOD_BATCH {
                    match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
                        Ok(more) => {
                            batch.extend_from_slice(&more);
                            chunks += 1;
                        }
                        Err(_) => break,
                    }
                }
            }
            // Whatever is queued is parsed as one batch; the cap bounds how long the lock keeps a
            // frame waiting.
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(more) => {
                        batch.extend_from_slice(&more);
                        chunks += 1;
                    }
                    Err(_) => break,
                }
            }
            let ok = parse.run(&batch);
            queued.fetch_sub(chunks, Ordering::AcqRel);
            if !ok {
                break;
            }
        }
        (parse.events)(PtyEvent::Closed);
    });
}
