//! pi-stalled-agent-recovery [SAR-S1..S8, SAR-L1..L5, SAR-D1]: the empty-reply retry and the
//! failing-call loop guard. The pure detectors live in the submodules; this component keeps the
//! per-session budgets. The supervisor turns a settle's tail into a claim (`flow/recovery.rs`).

pub mod emptiness;
pub mod loop_guard;
pub mod signature;

use std::collections::{HashMap, VecDeque};

/// Sessions whose budgets are kept (the ones used last): a budget is reset whenever its session
/// gets a text reply, but a session left on a failure would otherwise be kept for as long as
/// pokeshell runs, one more with every `/new`.
pub const KEPT_SESSIONS: usize = 8;
/// Loop signatures kept per session (the ones stored last), for a model that fails in ever new ways.
pub const KEPT_SIGNATURES: usize = 32;

/// Keys in the order they were last used, the oldest first.
#[derive(Clone, Debug, Default)]
struct Recency(VecDeque<String>);

impl Recency {
    /// Marks `key` as used; returns the key to forget when more than `cap` are known.
    fn touch(&mut self, key: &str, cap: usize) -> Option<String> {
        if let Some(index) = self.0.iter().position(|k| k == key) {
            let _ = self.0.remove(index);
        }
        self.0.push_back(key.to_string());
        (self.0.len() > cap).then(|| self.0.pop_front()).flatten()
    }

    fn forget(&mut self, key: &str) {
        self.0.retain(|k| k != key);
    }
}

/// The budgets of one session (SAR-S7, SAR-L4).
#[derive(Clone, Debug, Default)]
struct Budgets {
    /// Retries sent for the current empty-reply occurrence.
    retries: u32,
    /// Per loop signature: the last nudge number (or crossing, after giving up).
    loop_nudges: HashMap<String, u32>,
    signatures: Recency,
}

/// Budgets keyed by session id, as the original kept them.
#[derive(Debug, Default)]
pub(crate) struct Recovery {
    sessions: HashMap<String, Budgets>,
    used: Recency,
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
        let key = session.unwrap_or(NO_SESSION);
        if let Some(oldest) = self.used.touch(key, KEPT_SESSIONS) {
            self.sessions.remove(&oldest);
        }
        self.sessions.entry(key.to_string()).or_default()
    }

    /// How many sessions have budgets, and how many loop signatures they hold in all.
    pub(crate) fn size(&self) -> (usize, usize) {
        let signatures = self.sessions.values().map(|b| b.loop_nudges.len()).sum();
        (self.sessions.len(), signatures)
    }

    /// SAR-S2, SAR-L5: a text reply, an aborted run or a new session forgets both budgets.
    pub(crate) fn reset(&mut self, session: Option<&str>) {
        let key = session.unwrap_or(NO_SESSION);
        self.sessions.remove(key);
        self.used.forget(key);
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
        let budgets = self.budgets_mut(session);
        if let Some(oldest) = budgets.signatures.touch(signature, KEPT_SIGNATURES) {
            budgets.loop_nudges.remove(&oldest);
        }
        budgets.loop_nudges.insert(signature.to_string(), value);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_sessions_used_last_keep_their_budgets() {
        let mut r = Recovery::default();
        for n in 0..KEPT_SESSIONS + 5 {
            let session = format!("s{n}");
            assert_eq!(r.take_retry(Some(&session), 3), Some((1, 3)));
        }
        assert_eq!(r.size().0, KEPT_SESSIONS);
        assert_eq!(r.retries(Some("s0")), 0, "the oldest is forgotten");
        let last = format!("s{}", KEPT_SESSIONS + 4);
        assert_eq!(r.retries(Some(&last)), 1);
        // Using a kept session again keeps it longest.
        let kept = "s5";
        r.take_retry(Some(kept), 3);
        for n in 100..100 + KEPT_SESSIONS - 1 {
            r.take_retry(Some(&format!("s{n}")), 3);
        }
        assert_eq!(r.retries(Some(kept)), 2);
    }

    #[test]
    fn a_session_keeps_the_signatures_stored_last() {
        let mut r = Recovery::default();
        r.store_nudge(None, "first", 1);
        for n in 0..KEPT_SIGNATURES + 10 {
            r.store_nudge(None, &format!("sig{n}"), 1);
            // The loop that goes on is stored again each time: it stays.
            r.store_nudge(None, "first", 2);
        }
        assert_eq!(r.size(), (1, KEPT_SIGNATURES));
        assert_eq!(r.last_nudge(None, "first"), 2);
        assert_eq!(
            r.last_nudge(None, "sig0"),
            0,
            "the one stored longest ago is forgotten"
        );
    }

    #[test]
    fn a_reset_session_is_forgotten_entirely() {
        let mut r = Recovery::default();
        r.store_nudge(Some("a"), "sig", 2);
        r.reset(Some("a"));
        assert_eq!(r.size(), (0, 0));
        assert_eq!(r.last_nudge(Some("a"), "sig"), 0);
    }
}
