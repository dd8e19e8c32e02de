//! The PTY's output side: one thread reads, another parses into the mirror and answers queries. A
//! small read after a quiet spell, with nothing queued before it (a typed key's echo, a quiet
//! program's line), is parsed by the reader itself: one thread hop less on the way to the screen.
//! Output that keeps coming goes to the parser, whose bigger batches cost fewer wake-ups and let
//! the mirror skip more of a flood.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use super::io::{self, Master};
use super::{Events, PtyEvent};
use crate::term::screen::Mirror;

/// Chunks read from the PTY but not parsed yet; beyond this the reader waits.
const READ_QUEUE: usize = 64;
/// At most this much output is parsed under one hold of the mirror's lock.
const MAX_BATCH: usize = 256 * 1024;
/// A read this big suggests more output is on its way (a PTY hands out at most 4 KiB at a time).
const FULL_READ: usize = 4000;
/// How long the parser waits for the rest of a flood before parsing it: well under a frame.
const FLOOD_LINGER: Duration = Duration::from_millis(1);
/// A read this long after the one before comes after a quiet spell (not in the middle of a flood).
const QUIET: Duration = Duration::from_millis(2);

/// What parsing needs, shared by the reader (small reads) and the parser (everything else).
struct Parse {
    mirror: Arc<Mutex<Mirror>>,
    replies: io::Input,
    pending: Arc<AtomicBool>,
    events: Events,
}

impl Parse {
    /// Parses `bytes` into the mirror, answers the queries in them, and tells the loop (once until
    /// it takes the output). `false`: the mirror's lock is poisoned, the process is ending.
    fn run(&self, bytes: &[u8]) -> bool {
        {
            let Ok(mut m) = self.mirror.lock() else {
                return false;
            };
            m.process(bytes);
            let answer = m.take_replies();
            // Sent under the lock: answers the start-up probe released keep their place.
            self.replies.write(answer);
        }
        if !self.pending.swap(true, Ordering::AcqRel) {
            (self.events)(PtyEvent::Output);
        }
        true
    }
}

pub(super) fn spawn_reader(
    master: Master,
    mirror: Arc<Mutex<Mirror>>,
    replies: io::Input,
    pending: Arc<AtomicBool>,
    events: Events,
) {
    let parse = Arc::new(Parse {
        mirror,
        replies,
        pending,
        events,
    });
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
        loop {
            let read = io::read(&master, &mut buf);
            let now = Instant::now();
            let quiet = last_read.is_none_or(|t| now.duration_since(t) >= QUIET);
            last_read = Some(now);
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
            // A full read means a flood: let more of it arrive first. Fewer, bigger batches cost
            // fewer wake-ups, and the mirror skips more of a flood.
            if batch.len() >= FULL_READ {
                thread::sleep(FLOOD_LINGER);
            }
            // Whatever is queued is parsed as one batch; the cap bounds how long the lock keeps a
            // frame waiting.
            let mut chunks = 1;
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
