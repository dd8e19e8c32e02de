//! This session's side of the circuit breaker [GUARD-K1..K3]: a run that ends on a provider failure
//! pokeshell waits out is reported to the server's core, which holds the session behind another
//! session's probe when one met the same failure first; a run that gets past it is reported too, so
//! the sessions held behind it resume, staggered. The countdown shown is the shared one.

use crate::format::clock;
use crate::supervisor::Supervisor;
use crate::supervisor::action::Action;
use crate::supervisor::guard::circuit::{BreakerNote, BreakerOrder, Circuit, Held};
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::time::Now;

impl Supervisor {
    /// A wait is armed (or re-armed from the session) for a failure of this kind.
    pub(in crate::supervisor) fn circuit_failed(
        &mut self,
        kind: &'static str,
        until_wall_ms: u64,
        out: &mut Vec<Action>,
    ) {
        let held = self
            .guard
            .circuit
            .take()
            .filter(|c| c.kind == kind)
            .and_then(|c| c.held);
        self.guard.circuit = Some(Circuit { kind, held });
        out.push(Action::Breaker(BreakerNote::Failed { kind, until_wall_ms }));
    }

    /// A run settled without a provider error while this session was in a circuit: it got through.
    pub(in crate::supervisor) fn circuit_recovered(&mut self, out: &mut Vec<Action>) {
        if let Some(circuit) = self.guard.circuit.take() {
            out.push(Action::Breaker(BreakerNote::Recovered { kind: circuit.kind }));
        }
    }

    /// The wait was cancelled (the person typed, stopped the run): the session leaves the circuit.
    pub(in crate::supervisor) fn circuit_left(&mut self, out: &mut Vec<Action>) {
        if let Some(circuit) = self.guard.circuit.take() {
            out.push(Action::Breaker(BreakerNote::Left { kind: circuit.kind }));
        }
    }

    /// Held behind another session's probe: why the planned resume waits, in the side pane's words.
    pub(in crate::supervisor) fn circuit_held(&self) -> Option<&Held> {
        self.guard.circuit.as_ref()?.held.as_ref()
    }

    /// The server's core on the failure this session met.
    pub(in crate::supervisor) fn guard_breaker(
        &mut self,
        order: BreakerOrder,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let Some(circuit) = self.guard.circuit.as_mut() else {
            // The wait is over already (resumed, cancelled): nothing to hold.
            return;
        };
        let kind = circuit.kind;
        match order {
            BreakerOrder::Hold {
                until_wall_ms,
                prober,
            } => {
                let first = circuit.held.is_none();
                let at = clock(until_wall_ms, self.utc_offset_secs);
                circuit.held = Some(Held {
                    until_wall_ms,
                    prober: prober.clone(),
                });
                let reason = if first {
                    format!(
                        "session {prober} met the same {kind} first: this one waits for its probe at {at} instead \
                         of retrying on its own"
                    )
                } else {
                    format!(
                        "session {prober}'s probe met the {kind} again: the shared countdown ends at {at}"
                    )
                };
                self.record(
                    out,
                    now,
                    rule::GUARD_BREAKER_HOLD,
                    LedgerKind::Declined,
                    reason,
                    None,
                );
            }
            BreakerOrder::Probe => {
                circuit.held = None;
                let reason = format!(
                    "the session that was to probe the {kind} is gone: this one probes when its wait ends"
                );
                self.record(
                    out,
                    now,
                    rule::GUARD_BREAKER_PROBE,
                    LedgerKind::Action,
                    reason,
                    None,
                );
            }
            BreakerOrder::Resume { after_ms } => {
                circuit.held = None;
                self.provider.reschedule(
                    now.mono_ms.saturating_add(after_ms),
                    now.wall_ms.saturating_add(after_ms),
                );
                let reason = format!(
                    "another session's probe got past the {kind}: this one resumes in {}s",
                    after_ms.div_ceil(1000)
                );
                self.record(
                    out,
                    now,
                    rule::GUARD_BREAKER_RESUME,
                    LedgerKind::Action,
                    reason,
                    None,
                );
            }
        }
    }
}
