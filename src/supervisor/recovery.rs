//! pi-stalled-agent-recovery [SAR-S1..S8, SAR-L1..L5, SAR-D1]: the empty-reply retry and the
//! failing-call loop guard. The pure detectors live in the submodules; this component keeps the
//! per-session budgets. The supervisor turns a settle's tail into a claim (`flow/recovery.rs`).

pub mod emptiness;
pub mod loop_guard;
pub mod signature;

use std::collections::HashMap;

/// The budgets of one session (SAR-S7, SAR-L4).
#[derive(Clone, Debug, Default)]
struct Budgets {
    /// Retries sent for the current empty-reply occurrence.
    retries: u32,
    /// Per loop signature: the last nudge number (or crossing, after giving up).
    loop_nudges: HashMap<String, u32>,
}

/// Budgets keyed by session id, as the original kept them.
#[derive(Debug, Default)]
pub(crate) struct Recovery {
    sessions: HashMap<String, Budgets>,
    /// The failure (signature and count) the loop guard last spoke about between turns. When the run
    /// then settles on that same failure, the message is already on its way: the settle stays quiet.
    in_run: Option<(String, u32)>,
}

const NO_SESSION: &str = "default";

impl Recovery {
    fn budgets(&self, session: Option<&str>) -> Option<&Budgets> {
        self.sessions.get(session.unwrap_or(NO_SESSION))
    }

    fn budgets_mut(&mut self, session: Option<&str>) -> &mut Budgets {
        self.sessions
            .entry(session.unwrap_or(NO_SESSION).to_string())
            .or_default()
    }

    /// SAR-S2, SAR-L5: a text reply, an aborted run or a new session forgets both budgets.
    pub(crate) fn reset(&mut self, session: Option<&str>) {
        self.sessions.remove(session.unwrap_or(NO_SESSION));
    }

    pub(crate) fn retries(&self, session: Option<&str>) -> u32 {
        self.budgets(session).map_or(0, |budgets| budgets.retries)
    }

    /// SAR-S7: the give-up starts the next occurrence afresh.
    pub(crate) fn reset_retries(&mut self, session: Option<&str>) {
        self.budgets_mut(session).retries = 0;
    }

    /// Consumes a retry: `(attempt, max)`, or `None` when the budget is spent.
    pub(crate) fn take_retry(&mut self, session: Option<&str>, max: u32) -> Option<(u32, u32)> {
        let budgets = self.budgets_mut(session);
        if budgets.retries >= max {
            return None;
        }
        budgets.retries += 1;
        Some((budgets.retries, max))
    }

    pub(crate) fn last_nudge(&self, session: Option<&str>, signature: &str) -> u32 {
        self.budgets(session)
            .and_then(|budgets| budgets.loop_nudges.get(signature).copied())
            .unwrap_or(0)
    }

    pub(crate) fn store_nudge(&mut self, session: Option<&str>, signature: &str, value: u32) {
        self.budgets_mut(session)
            .loop_nudges
            .insert(signature.to_string(), value);
    }

    /// The highest nudge number stored for the session, for the view.
    pub(crate) fn highest_nudge(&self, session: Option<&str>) -> u32 {
        self.budgets(session)
            .and_then(|budgets| budgets.loop_nudges.values().max().copied())
            .unwrap_or(0)
    }

    /// The loop guard spoke about this failure between turns.
    pub(crate) fn spoke_in_run(&mut self, signature: &str, count: u32) {
        self.in_run = Some((signature.to_string(), count));
    }

    /// Whether the loop guard last spoke between turns about exactly this failure (forgotten after).
    pub(crate) fn take_spoke_in_run(&mut self, signature: &str, count: u32) -> bool {
        self.in_run
            .take()
            .is_some_and(|(spoken, spoken_count)| spoken == signature && spoken_count == count)
    }

    /// A new run: what was said in the last one no longer matters.
    pub(crate) fn new_run(&mut self) {
        self.in_run = None;
    }
}
