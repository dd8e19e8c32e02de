//! How many saved sessions the server is still bringing back. Kept outside the server's state
//! because every connection's welcome reads it, also while the state is busy.

use std::sync::atomic::{AtomicU32, Ordering};

static PENDING: AtomicU32 = AtomicU32::new(0);

/// `n` more sessions are being brought back.
pub fn begin(n: usize) {
    PENDING.fetch_add(u32::try_from(n).unwrap_or(u32::MAX), Ordering::AcqRel);
}

/// One of them is up, or could not be brought back.
pub fn one_done() {
    let _ = PENDING.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| Some(n.saturating_sub(1)));
}

pub fn pending() -> u32 {
    PENDING.load(Ordering::Acquire)
}
