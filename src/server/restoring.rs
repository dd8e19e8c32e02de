//! How many saved sessions the server is still bringing back, as the server's core last said
//! (`ServerEffect::Restoring`). Kept outside the core's own state because every connection's
//! welcome reads it from its own task, also while the core is busy.

use std::sync::atomic::{AtomicU32, Ordering};

static PENDING: AtomicU32 = AtomicU32::new(0);

pub fn set(n: u32) {
    PENDING.store(n, Ordering::Release);
}

pub fn pending() -> u32 {
    PENDING.load(Ordering::Acquire)
}
