//! The circuit breaker across sessions [GUARD-K1, GUARD-K2, GUARD-K3]: sessions whose runs meet the
//! same provider failure (the same provider, and the same kind: rate limit, overload, server or network
//! error) wait out one countdown together instead of each retrying on its own. The first session to
//! meet it keeps its own plan and probes when its wait is over; the others are held, shown the same
//! countdown, and resume only once a probe got through, one after the other, [`STAGGER_MS`] apart. A
//! probe that fails again sets a new countdown for all of them. When the probing session leaves (the
//! person typed there, its session ended), the next one in line probes instead.

use std::collections::BTreeMap;

use super::BreakerOrder;

/// Between the resumes of the sessions held behind a probe that got through.
pub const STAGGER_MS: u64 = 2_000;

#[derive(Debug, Clone, PartialEq)]
struct Circuit {
    prober: u32,
    /// Held sessions, in the order they met the failure.
    held: Vec<u32>,
    until_wall_ms: u64,
}

/// The orders to send: (session, order).
pub type Orders = Vec<(u32, BreakerOrder)>;

#[derive(Debug, Default)]
pub struct Breakers {
    circuits: BTreeMap<String, Circuit>,
}

impl Breakers {
    /// The circuit a session is in, if any.
    fn circuit_of(&self, number: u32) -> Option<String> {
        self.circuits
            .iter()
            .find(|(_, c)| c.prober == number || c.held.contains(&number))
            .map(|(key, _)| key.clone())
    }

    fn hold(circuit: &Circuit, number: u32, label: &impl Fn(u32) -> String) -> (u32, BreakerOrder) {
        let order = BreakerOrder::Hold {
            until_wall_ms: circuit.until_wall_ms,
            prober: label(circuit.prober),
        };
        (number, order)
    }

    /// Session `number` met failure `key`; its resume is planned at `until_wall_ms`. `label` names a
    /// session for the others' side panes.
    pub fn failed(
        &mut self,
        number: u32,
        key: &str,
        until_wall_ms: u64,
        label: impl Fn(u32) -> String,
    ) -> Orders {
        let mut orders = Vec::new();
        if let Some(other) = self.circuit_of(number).filter(|k| k != key) {
            // Another failure now: the session leaves the circuit it was in.
            orders.extend(self.left(number, &other));
        }
        let Some(circuit) = self.circuits.get_mut(key) else {
            let circuit = Circuit {
                prober: number,
                held: Vec::new(),
                until_wall_ms,
            };
            self.circuits.insert(key.to_string(), circuit);
            return orders;
        };
        if circuit.prober == number {
            // The probe failed again: a new countdown for everyone behind it.
            circuit.until_wall_ms = until_wall_ms;
            for &held in &circuit.held {
                orders.push(Self::hold(circuit, held, &label));
            }
            return orders;
        }
        if !circuit.held.contains(&number) {
            circuit.held.push(number);
        }
        orders.push(Self::hold(circuit, number, &label));
        orders
    }

    /// Session `number` got past failure `key`: the circuit closes, and every session held behind it
    /// resumes, one after the other.
    pub fn recovered(&mut self, number: u32, key: &str) -> Orders {
        let Some(circuit) = self.circuits.get(key) else {
            return Vec::new();
        };
        if circuit.prober != number && !circuit.held.contains(&number) {
            return Vec::new();
        }
        let Some(circuit) = self.circuits.remove(key) else {
            return Vec::new();
        };
        circuit
            .held
            .into_iter()
            .filter(|&n| n != number)
            .enumerate()
            .map(|(i, n)| {
                let after_ms = STAGGER_MS.saturating_mul(i as u64 + 1);
                let order = BreakerOrder::Resume { after_ms };
                (n, order)
            })
            .collect()
    }

    /// Session `number` no longer waits on `key`: when it was to probe, the next in line probes.
    pub fn left(&mut self, number: u32, key: &str) -> Orders {
        let Some(circuit) = self.circuits.get_mut(key) else {
            return Vec::new();
        };
        circuit.held.retain(|&n| n != number);
        if circuit.prober != number {
            return Vec::new();
        }
        if circuit.held.is_empty() {
            self.circuits.remove(key);
            return Vec::new();
        }
        let next = circuit.held.remove(0);
        circuit.prober = next;
        vec![(next, BreakerOrder::Probe)]
    }

    /// Session `number` ended: it leaves whatever circuit it was in.
    pub fn ended(&mut self, number: u32) -> Orders {
        match self.circuit_of(number) {
            Some(key) => self.left(number, &key),
            None => Vec::new(),
        }
    }

    /// How many circuits are open (for tests and the log).
    pub fn open(&self) -> usize {
        self.circuits.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "mock · overload";

    fn label(n: u32) -> String {
        format!("{n}:s{n}")
    }

    fn hold(until: u64, prober: u32) -> BreakerOrder {
        BreakerOrder::Hold {
            until_wall_ms: until,
            prober: label(prober),
        }
    }

    #[test]
    fn guard_k1_three_sessions_meeting_one_failure_wait_for_the_first_ones_countdown() {
        let mut b = Breakers::default();
        assert_eq!(
            b.failed(1, KEY, 10_000, label),
            vec![],
            "the first keeps its plan and probes"
        );
        assert_eq!(b.failed(2, KEY, 12_000, label), vec![(2, hold(10_000, 1))]);
        assert_eq!(
            b.failed(3, KEY, 9_000, label),
            vec![(3, hold(10_000, 1))],
            "even with an earlier plan"
        );
        // The probe fails again: a new countdown for the two held.
        assert_eq!(
            b.failed(1, KEY, 40_000, label),
            vec![(2, hold(40_000, 1)), (3, hold(40_000, 1))]
        );
    }

    #[test]
    fn guard_k3_a_probe_that_gets_through_resumes_the_others_staggered() {
        let mut b = Breakers::default();
        for n in 1..=3 {
            b.failed(n, KEY, 10_000, label);
        }
        let resume = |after_ms| BreakerOrder::Resume { after_ms };
        assert_eq!(
            b.recovered(1, KEY),
            vec![(2, resume(STAGGER_MS)), (3, resume(2 * STAGGER_MS))]
        );
        assert_eq!(b.open(), 0, "the circuit is closed");
        assert_eq!(b.recovered(1, KEY), vec![], "nothing left to resume");
    }

    #[test]
    fn guard_k2_when_the_prober_leaves_the_next_in_line_probes() {
        let mut b = Breakers::default();
        for n in 1..=3 {
            b.failed(n, KEY, 10_000, label);
        }
        assert_eq!(b.left(1, KEY), vec![(2, BreakerOrder::Probe)]);
        assert_eq!(
            b.left(3, KEY),
            vec![],
            "a held one leaving changes nothing for the others"
        );
        assert_eq!(b.ended(2), vec![], "the last one ends: the circuit closes");
        assert_eq!(b.open(), 0);
    }

    #[test]
    fn guard_k1_healthy_twin_different_failures_and_a_lone_session_hold_nobody() {
        let mut b = Breakers::default();
        assert_eq!(b.failed(1, "mock · overload", 10_000, label), vec![]);
        assert_eq!(
            b.failed(2, "other · rate limit", 10_000, label),
            vec![],
            "another provider"
        );
        assert_eq!(
            b.failed(3, "mock · network error", 10_000, label),
            vec![],
            "another kind"
        );
        assert_eq!(b.open(), 3);
        assert_eq!(b.recovered(1, "mock · overload"), vec![]);
    }

    #[test]
    fn guard_k1_a_held_session_that_gets_through_by_hand_resumes_the_rest() {
        let mut b = Breakers::default();
        for n in 1..=3 {
            b.failed(n, KEY, 10_000, label);
        }
        let resumed = b.recovered(3, KEY);
        assert_eq!(
            resumed,
            vec![(2, BreakerOrder::Resume { after_ms: STAGGER_MS })],
            "the prober is not held: its own wait resumes it"
        );
    }

    #[test]
    fn guard_k1_a_session_meeting_another_failure_leaves_its_circuit() {
        let mut b = Breakers::default();
        b.failed(1, KEY, 10_000, label);
        b.failed(2, KEY, 10_000, label);
        let orders = b.failed(1, "mock · network error", 20_000, label);
        assert_eq!(orders, vec![(2, BreakerOrder::Probe)]);
    }
}
