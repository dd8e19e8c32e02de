//! Keeps a panic inside vt100 from ending pokeshell. vt100 0.18.1 can panic on some output (a
//! character widened by a variation selector in the last column, then a scroll and more text, is
//! one such), and the process-wide panic hook ends the whole process, every session of the server
//! with it. A panic while parsing is caught instead, and the mirror starts afresh.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;

thread_local! {
    static PARSING: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is parsing the child's output: a panic here is caught, not fatal.
pub fn parsing() -> bool {
    PARSING.with(Cell::get)
}

/// Runs `parse`; `None` if it panicked.
pub(super) fn caught<R>(parse: impl FnOnce() -> R) -> Option<R> {
    let was = PARSING.with(|p| p.replace(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(parse));
    PARSING.with(|p| p.set(was));
    result.ok()
}
