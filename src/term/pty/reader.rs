//! The PTY's output side: one thread reads, another parses into the mirror and answers queries.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use super::PtyEvent;
use crate::term::screen::Mirror;

/// Chunks read from the PTY but not parsed yet; beyond this the reader waits.
const READ_QUEUE: usize = 64;
/// At most this much output is parsed under one hold of the mirror's lock.
const MAX_BATCH: usize = 256 * 1024;
/// A read this big suggests more output is on its way (a PTY hands out at most 4 KiB at a time).
const FULL_READ: usize = 4000;
/// How long the parser waits for the rest of a flood before parsing it: well under a frame.
const FLOOD_LINGER: Duration = Duration::from_millis(1);

pub(super) fn spawn_reader(
    mut reader: Box<dyn Read + Send>,
    mirror: Arc<Mutex<Mirror>>,
    replies: super::InputTx,
    pending: Arc<AtomicBool>,
    events: impl Fn(PtyEvent) + Send + 'static,
) {
    // Reading and parsing run in two threads so the child can keep writing while a chunk is parsed:
    // throughput is then bounded by the slower of the two, not by their sum.
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(READ_QUEUE);
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
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
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(more) => batch.extend_from_slice(&more),
                    Err(_) => break,
                }
            }
            {
                let Ok(mut m) = mirror.lock() else { break };
                m.process(&batch);
                let answer = m.take_replies();
                // Sent under the lock: answers the start-up probe released keep their place.
                if !answer.is_empty() {
                    replies.send(answer);
                }
            }
            if !pending.swap(true, Ordering::AcqRel) {
                events(PtyEvent::Output);
            }
        }
        events(PtyEvent::Closed);
    });
}
