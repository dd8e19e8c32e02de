//! Keys on their way from the clients into the session: the start gate holds them while pi starts
//! (remembering which client typed which bytes), and each client's half-typed sequence has a flush
//! timer of its own, so one terminal's pause does not cut another's escape sequence.

use std::collections::BTreeMap;

use tokio::time::Instant;

use super::INPUT_FLUSH;
use crate::term::host::start_gate::StartGate;
use pokeshell_core::session::ClientId;

pub(super) struct Typing {
    gate: StartGate,
    /// Who typed each run of the bytes the gate holds, in order; `None`: a client that left since.
    held_from: Vec<(Option<ClientId>, usize)>,
    /// When each client's held partial sequence goes out as it is.
    flush_due: BTreeMap<ClientId, Instant>,
}

/// Keys for the session, each run with its client.
pub(super) type Typed = Vec<(ClientId, Vec<u8>)>;

impl Typing {
    pub fn open() -> Self {
        Self {
            gate: StartGate::open(),
            held_from: Vec::new(),
            flush_due: BTreeMap::new(),
        }
    }

    /// Keys wait for pi's screen from now on (what the gate held before is dropped with it).
    pub fn hold_until_ready(&mut self, now: std::time::Instant) {
        self.gate = StartGate::until_ready(now);
        self.held_from.clear();
    }

    pub fn holding(&self) -> bool {
        self.gate.holding()
    }

    pub fn gate_deadline(&self) -> Option<Instant> {
        self.gate.deadline().map(Instant::from_std)
    }

    /// Bytes a client typed; returns what goes to the session now (held keys first, in order).
    pub fn offer(&mut self, client: ClientId, bytes: &[u8], now: std::time::Instant, ready: bool) -> Typed {
        if !self.gate.holding() {
            return if bytes.is_empty() {
                Vec::new()
            } else {
                vec![(client, bytes.to_vec())]
            };
        }
        self.held_from.push((Some(client), bytes.len()));
        let out = self.gate.offer(bytes, now, ready);
        self.split(out)
    }

    /// Without new keys: what the gate lets go now (pi is ready, or the limit passed).
    pub fn check(&mut self, now: std::time::Instant, ready: bool) -> Typed {
        let out = self.gate.check(now, ready);
        self.split(out)
    }

    fn split(&mut self, released: Option<Vec<u8>>) -> Typed {
        let Some(bytes) = released else {
            return Vec::new();
        };
        let mut rest = bytes.as_slice();
        let mut out: Typed = Vec::new();
        for (client, len) in std::mem::take(&mut self.held_from) {
            let (run, after) = rest.split_at(len.min(rest.len()));
            rest = after;
            let Some(client) = client else { continue };
            match out.last_mut() {
                Some((last, bytes)) if *last == client => bytes.extend_from_slice(run),
                _ if run.is_empty() => {}
                _ => out.push((client, run.to_vec())),
            }
        }
        out
    }

    /// The client left: what it typed while pi started is not typed for it later, and its
    /// sequence is no longer waited for.
    pub fn left(&mut self, client: ClientId) {
        for run in &mut self.held_from {
            if run.0 == Some(client) {
                run.0 = None;
            }
        }
        self.flush_due.remove(&client);
    }

    /// After the client's keys went in: whether the session holds part of a sequence for it.
    pub fn note_pending(&mut self, client: ClientId, pending: bool, now: Instant) {
        if pending {
            self.flush_due.insert(client, now + INPUT_FLUSH);
        } else {
            self.flush_due.remove(&client);
        }
    }

    pub fn flush_deadline(&self) -> Option<Instant> {
        self.flush_due.values().min().copied()
    }

    /// The clients whose held sequence is due to go out as it is.
    pub fn take_due(&mut self, now: Instant) -> Vec<ClientId> {
        let due: Vec<ClientId> = self
            .flush_due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(c, _)| *c)
            .collect();
        for c in &due {
            self.flush_due.remove(c);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn keys_held_while_pi_starts_go_out_with_the_client_that_typed_them() {
        let t0 = std::time::Instant::now();
        let mut t = Typing::open();
        t.hold_until_ready(t0);
        assert!(t.offer(1, b"\x1d", t0, false).is_empty());
        assert!(t.offer(2, b"d", t0, false).is_empty());
        assert!(t.offer(2, b"e", t0, false).is_empty());
        let out = t.offer(1, b"x", t0, true);
        assert_eq!(
            out,
            vec![(1, b"\x1d".to_vec()), (2, b"de".to_vec()), (1, b"x".to_vec())]
        );
        assert_eq!(t.offer(3, b"y", t0, false), vec![(3, b"y".to_vec())], "open now");
    }

    #[test]
    fn what_a_client_that_left_typed_while_pi_started_is_dropped() {
        let t0 = std::time::Instant::now();
        let mut t = Typing::open();
        t.hold_until_ready(t0);
        t.offer(1, b"abc", t0, false);
        t.offer(2, b"def", t0, false);
        t.left(1);
        assert_eq!(t.check(t0, true), vec![(2, b"def".to_vec())]);
    }

    #[test]
    fn each_client_has_its_own_flush_timer() {
        let t0 = Instant::now();
        let mut t = Typing::open();
        t.note_pending(1, true, t0);
        t.note_pending(2, true, t0 + Duration::from_millis(10));
        assert_eq!(t.flush_deadline(), Some(t0 + INPUT_FLUSH));
        assert_eq!(t.take_due(t0 + INPUT_FLUSH), vec![1]);
        t.left(2);
        assert_eq!(t.flush_deadline(), None);
    }
}
