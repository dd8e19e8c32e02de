//! Input is bounded per client as output is: a client's keys wait in the server only up to a bound.
//! A connection stops reading its socket while the session's input queue (the bytes on their way
//! from this client to the session's loop, and those queued for pi's terminal) is over
//! [`SOFT_BOUND`]: the client's own writes then wait, and a real terminal slows to pi's pace. A
//! client held back for [`HELD_LIMIT`], or whose session's queue passes [`HARD_BOUND`] (several
//! clients typing into a pi that reads nothing), is dropped with a message.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Over this, the connection stops reading its client.
pub const SOFT_BOUND: usize = 1 << 20;
/// Over this, the client is dropped.
pub const HARD_BOUND: usize = 16 << 20;
/// A client held back this long is dropped: its session's program is not reading its input.
pub const HELD_LIMIT: Duration = Duration::from_secs(60);
/// How often a held connection looks at the queue again.
pub const RECHECK: Duration = Duration::from_millis(5);

/// Bytes of one input frame on their way to the session's loop; counted in `gauge` until the loop
/// has taken them (the ticket is dropped with the event, wherever that is). The default ticket
/// counts nothing (input that did not come through a connection).
#[derive(Debug, Default)]
pub struct Ticket {
    gauge: Option<Arc<AtomicUsize>>,
    len: usize,
}

impl Ticket {
    pub fn new(gauge: &Arc<AtomicUsize>, len: usize) -> Ticket {
        gauge.fetch_add(len, Ordering::AcqRel);
        Ticket {
            gauge: Some(gauge.clone()),
            len,
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(gauge) = &self.gauge {
            gauge.fetch_sub(self.len, Ordering::AcqRel);
        }
    }
}

/// What a connection does before it reads its client's next frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Read,
    Wait,
    Drop(String),
}

/// How long a client may be held: [`HELD_LIMIT`], unless the server was started with
/// `POKESHELL_TEST_INPUT_HELD_SECS` (the test of the drop need not wait a minute).
pub fn held_limit() -> Duration {
    std::env::var("POKESHELL_TEST_INPUT_HELD_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(HELD_LIMIT, Duration::from_secs)
}

/// `in_flight`: this client's bytes not yet taken by the loop; `queued`: bytes the session holds for
/// pi's terminal; `held`: how long this client has been waiting, `held_limit` how long it may be.
pub fn verdict(in_flight: usize, queued: usize, held: Duration, held_limit: Duration) -> Verdict {
    let total = in_flight + queued;
    if total > HARD_BOUND {
        return Verdict::Drop(format!(
            "the session's program is not reading its input and {} MiB of it wait (the bound is {} MiB)",
            total >> 20,
            HARD_BOUND >> 20
        ));
    }
    if total <= SOFT_BOUND {
        return Verdict::Read;
    }
    if held >= held_limit {
        return Verdict::Drop(format!(
            "the session's program has not read its input for {} s ({} KiB wait)",
            held.as_secs(),
            total >> 10
        ));
    }
    Verdict::Wait
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_stops_over_the_soft_bound_and_the_client_goes_past_the_hard_one() {
        let s = Duration::from_secs(1);
        assert_eq!(verdict(0, 0, Duration::ZERO, HELD_LIMIT), Verdict::Read);
        assert_eq!(
            verdict(SOFT_BOUND / 2, SOFT_BOUND / 2, s, HELD_LIMIT),
            Verdict::Read
        );
        assert_eq!(verdict(SOFT_BOUND, 1, s, HELD_LIMIT), Verdict::Wait);
        let Verdict::Drop(why) = verdict(0, HARD_BOUND + 1, Duration::ZERO, HELD_LIMIT) else {
            panic!("not dropped past the hard bound");
        };
        assert!(why.contains("16 MiB"), "{why}");
        let Verdict::Drop(why) = verdict(0, SOFT_BOUND + 1, HELD_LIMIT, HELD_LIMIT) else {
            panic!("not dropped after the held limit");
        };
        assert!(why.contains("60 s"), "{why}");
    }

    #[test]
    fn a_ticket_counts_until_dropped() {
        let gauge = Arc::new(AtomicUsize::new(0));
        let a = Ticket::new(&gauge, 10);
        let b = Ticket::new(&gauge, 5);
        assert_eq!(gauge.load(Ordering::Acquire), 15);
        drop(a);
        assert_eq!(gauge.load(Ordering::Acquire), 5);
        drop(b);
        assert_eq!(gauge.load(Ordering::Acquire), 0);
        drop(Ticket::default());
        assert_eq!(gauge.load(Ordering::Acquire), 0);
    }
}
