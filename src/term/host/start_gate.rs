//! Keys typed before pi's screen is up are held back, then passed on together.
//!
//! Until pi switches its terminal to raw mode, the line discipline of the PTY pokeshell gives it
//! turns Ctrl+C, Ctrl+\ and Ctrl+Z into signals for pi instead of passing them on as keys: a Ctrl+\
//! typed while pi starts kills it with SIGQUIT. pi switches to raw mode first and then turns
//! bracketed paste on, so once the child has asked for bracketed paste its terminal is raw. Until
//! then (or a time limit, for a pi that never gets there) the keys the clients type are held here
//! (through `event_loop/typing.rs`). A child that is not pi gets its terminal's usual meaning of
//! those keys, so its gate starts open.

use std::time::{Duration, Instant};

/// How long keys are held at most: pi's start-up takes a few seconds, and past ten on a machine busy
/// with builds (a Ctrl+\ passed on before pi is raw kills it: seen in tests/e2e_signals.rs under
/// load); a pi that shows no screen by then gets the keys as they are.
pub const HOLD_LIMIT: Duration = Duration::from_secs(30);
/// Beyond this many held bytes (a huge paste at start-up) the gate opens.
pub const MAX_HELD: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartGate {
    held: Vec<u8>,
    /// `None` once open.
    until: Option<Instant>,
}

impl StartGate {
    /// A gate that passes everything at once.
    pub fn open() -> Self {
        Self {
            held: Vec::new(),
            until: None,
        }
    }

    /// A gate that holds until the child is ready, at most [`HOLD_LIMIT`] from `now`.
    pub fn until_ready(now: Instant) -> Self {
        Self {
            held: Vec::new(),
            until: Some(now + HOLD_LIMIT),
        }
    }

    pub fn holding(&self) -> bool {
        self.until.is_some()
    }

    /// When the held keys go out even if the child never gets ready.
    pub fn deadline(&self) -> Option<Instant> {
        self.until
    }

    pub fn held_bytes(&self) -> usize {
        self.held.len()
    }

    /// Bytes a client typed; returns what to pass on now (held bytes first, in order).
    pub fn offer(&mut self, bytes: &[u8], now: Instant, child_ready: bool) -> Option<Vec<u8>> {
        if self.holding() {
            self.held.extend_from_slice(bytes);
            return self.check(now, child_ready);
        }
        (!bytes.is_empty()).then(|| bytes.to_vec())
    }

    /// Without new bytes: opens the gate when the child is ready, the limit has passed or too much
    /// is held, and returns what was held.
    pub fn check(&mut self, now: Instant, child_ready: bool) -> Option<Vec<u8>> {
        let until = self.until?;
        if child_ready || now >= until || self.held.len() > MAX_HELD {
            self.until = None;
            let held = std::mem::take(&mut self.held);
            return (!held.is_empty()).then_some(held);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_gate_passes_every_byte_at_once() {
        let mut g = StartGate::open();
        let t0 = Instant::now();
        assert_eq!(g.offer(b"\x1c", t0, false), Some(b"\x1c".to_vec()));
        assert_eq!(g.check(t0, false), None);
        assert!(!g.holding());
    }

    #[test]
    fn keys_before_the_child_is_ready_come_out_together_and_in_order_once_it_is() {
        let t0 = Instant::now();
        let mut g = StartGate::until_ready(t0);
        assert_eq!(g.offer(b"ab\x1c", t0, false), None);
        assert_eq!(g.offer(b"cd", t0, false), None);
        assert_eq!(g.check(t0 + Duration::from_secs(1), false), None);
        assert_eq!(g.held_bytes(), 5);
        assert_eq!(g.offer(b"e", t0, true), Some(b"ab\x1ccde".to_vec()));
        assert!(!g.holding());
        assert_eq!(
            g.offer(b"f", t0, false),
            Some(b"f".to_vec()),
            "once open, it stays open"
        );
    }

    #[test]
    fn a_child_that_never_gets_ready_has_its_keys_after_the_limit() {
        let t0 = Instant::now();
        let mut g = StartGate::until_ready(t0);
        assert_eq!(g.offer(b"x", t0, false), None);
        assert_eq!(g.check(t0 + HOLD_LIMIT - Duration::from_millis(1), false), None);
        assert_eq!(g.check(t0 + HOLD_LIMIT, false), Some(b"x".to_vec()));
        assert!(!g.holding());
    }

    #[test]
    fn a_huge_paste_opens_the_gate_instead_of_growing_it() {
        let t0 = Instant::now();
        let mut g = StartGate::until_ready(t0);
        let chunk = vec![b'a'; 64 * 1024];
        let mut out = None;
        for _ in 0..(MAX_HELD / chunk.len() + 2) {
            out = out.or(g.offer(&chunk, t0, false));
        }
        assert!(!g.holding());
        assert!(out.is_some_and(|b| b.len() > MAX_HELD));
    }

    #[test]
    fn an_empty_gate_that_opens_has_nothing_to_pass() {
        let t0 = Instant::now();
        let mut g = StartGate::until_ready(t0);
        assert_eq!(g.check(t0, true), None);
        assert!(!g.holding());
    }
}
