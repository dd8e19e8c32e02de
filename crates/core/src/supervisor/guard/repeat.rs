//! Tool calls that bring nothing new [GUARD-L1, GUARD-L2, GUARD-P1]: the same call with the same
//! result several times in a row (successful calls too), or two calls alternating (A, B, A, B) with
//! unchanged results. A call is its tool, its arguments (keys in any order) and a digest of its
//! result, so a check whose output changes (a time stamp, a new line of a log) is never a repeat.
//!
//! A repetition of failing calls is left to the loop guard (SAR-L1..L5), which nudges about it and
//! gives up on its own; these rails are for the calls that succeed and still change nothing.
//!
//! A poll is not a loop: an agent asked to wait for CI runs the same check again and again by design.
//! What tells it apart is a wait between the checks: a call in the repeated stretch that ran at least
//! `pollWaitSeconds` (a `sleep 60`, `sleep 60 && gh run view`, a `gh run watch`), or a wakeup the
//! agent scheduled and that fired. The count starts again after each wait.

use std::collections::{HashSet, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};

/// Calls kept: enough for the longest stretch any threshold (at most 100 cycles of two) looks at.
const KEPT_CALLS: usize = 256;
/// Distinct calls remembered for "did the agent do anything new" (GUARD-L4).
const KEPT_SEEN: usize = 1024;

/// One finished tool call, as the guard compares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// Tool, arguments and result together; `None` when the result's digest is unknown (an older
    /// bridge): such a call never equals another.
    key: Option<u64>,
    /// How the call is named in the ledger and the messages: the tool and its arguments' preview.
    pub label: String,
    /// The call itself took long enough to count as a wait.
    waited: bool,
    /// The call failed: a repetition of failures is the loop guard's (SAR-L1..L5), not these rails'.
    failed: bool,
}

impl Call {
    /// `signature`: the tool and its arguments with sorted keys (SAR-L1); `result_digest` from the
    /// bridge; `waited`: the call ran at least `pollWaitSeconds`, or was a wakeup being scheduled.
    pub fn new(signature: &str, result_digest: Option<&str>, label: String, waited: bool) -> Call {
        let key = result_digest.map(|digest| {
            let mut hasher = DefaultHasher::new();
            (signature, digest).hash(&mut hasher);
            hasher.finish()
        });
        Call {
            key,
            label,
            waited,
            failed: false,
        }
    }

    /// The same call, marked as failed.
    pub fn failed(self) -> Call {
        Call { failed: true, ..self }
    }

    fn same(&self, other: &Call) -> bool {
        self.key.is_some() && self.key == other.key
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Entry {
    Call(Call),
    /// A wakeup fired: whatever comes after it is a new check.
    Wait,
}

/// A repetition found at the end of the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// The same call, with the same result, `count` times in a row.
    Same { call: String, count: u32 },
    /// Two calls taking turns, `cycles` full rounds of both, results unchanged.
    Alternating { a: String, b: String, cycles: u32 },
}

/// The calls made since the person's last word (or the ladder's last step), newest last.
#[derive(Debug, Default)]
pub struct CallHistory {
    recent: VecDeque<Entry>,
    /// Keys of every call of this stretch, to tell a new call from one seen before.
    seen: HashSet<u64>,
    seen_order: VecDeque<u64>,
}

impl CallHistory {
    /// Records a finished call; returns whether it is new in this stretch (a call without a digest
    /// counts as new: nothing says it is not).
    pub fn push(&mut self, call: Call) -> bool {
        let new = match call.key {
            Some(key) => self.remember(key),
            None => true,
        };
        if self.recent.len() == KEPT_CALLS {
            self.recent.pop_front();
        }
        self.recent.push_back(Entry::Call(call));
        new
    }

    fn remember(&mut self, key: u64) -> bool {
        if !self.seen.insert(key) {
            return false;
        }
        self.seen_order.push_back(key);
        if self.seen_order.len() > KEPT_SEEN
            && let Some(old) = self.seen_order.pop_front()
        {
            self.seen.remove(&old);
        }
        true
    }

    /// A wakeup the agent scheduled fired: a poll's wait.
    pub fn wait(&mut self) {
        if self.recent.back() != Some(&Entry::Wait) {
            self.recent.push_back(Entry::Wait);
        }
    }

    /// The counts start again (a ladder step); what was seen stays seen.
    pub fn restart(&mut self) {
        self.recent.clear();
    }

    /// The person spoke: a new stretch.
    pub fn clear(&mut self) {
        self.recent.clear();
        self.seen.clear();
        self.seen_order.clear();
    }

    /// The calls of the history, newest last: after the last wait marker, or all of them.
    fn calls(&self, through_waits: bool) -> Vec<&Call> {
        let mut calls: Vec<&Call> = Vec::new();
        for entry in self.recent.iter().rev() {
            match entry {
                Entry::Call(call) => calls.push(call),
                Entry::Wait if through_waits => {}
                Entry::Wait => break,
            }
        }
        calls.reverse();
        calls
    }

    /// GUARD-L1: how many times in a row the last call was made with the same result. Counted back to
    /// (and including) the nearest call that waited, unless `through_waits`.
    fn same_count(&self, through_waits: bool) -> Option<(String, u32)> {
        let calls = self.calls(through_waits);
        let last = *calls.last()?;
        let mut count = 0;
        for call in calls.iter().rev() {
            if !call.same(last) {
                break;
            }
            count += 1;
            if call.waited && !through_waits {
                break;
            }
        }
        Some((last.label.clone(), count))
    }

    /// GUARD-L2: how many full rounds of two different calls taking turns end the history. Counted back
    /// to (and including) the nearest round with a call that waited, unless `through_waits`.
    fn alternating_cycles(&self, through_waits: bool) -> Option<(String, String, u32)> {
        self.alternation(through_waits)
            .map(|(a, b, cycles, _)| (a, b, cycles))
    }

    /// The alternation at the end of the history, and whether it began half a round earlier (the
    /// call before its first round is its second call): the same alternation seen a call later.
    fn alternation(&self, through_waits: bool) -> Option<(String, String, u32, bool)> {
        let calls = self.calls(through_waits);
        let n = calls.len();
        if n < 2 {
            return None;
        }
        let (a, b) = (calls[n - 2], calls[n - 1]);
        if a.same(b) || a.key.is_none() || b.key.is_none() || a.failed || b.failed {
            return None;
        }
        let mut cycles = 0;
        let mut end = n;
        let mut cut = false;
        while end >= 2 {
            let (x, y) = (calls[end - 2], calls[end - 1]);
            if !(x.same(a) && y.same(b)) {
                break;
            }
            cycles += 1;
            end -= 2;
            if (x.waited || y.waited) && !through_waits {
                cut = true;
                break;
            }
        }
        let half = !cut && end >= 1 && calls[end - 1].same(b);
        Some((a.label.clone(), b.label.clone(), cycles, half))
    }

    fn last_failed(&self) -> bool {
        self.recent
            .back()
            .is_some_and(|entry| matches!(entry, Entry::Call(call) if call.failed))
    }

    fn find(&self, same_threshold: u32, alternating_threshold: u32, through_waits: bool) -> Option<Found> {
        if let Some((call, count)) = self.same_count(through_waits)
            && same_threshold > 0
            && count >= same_threshold
            && !self.last_failed()
        {
            return Some(Found::Same { call, count });
        }
        match self.alternating_cycles(through_waits) {
            Some((a, b, cycles)) if alternating_threshold > 0 && cycles >= alternating_threshold => {
                Some(Found::Alternating { a, b, cycles })
            }
            _ => None,
        }
    }

    /// The repetition that reached its threshold, if any (0 turns a threshold off).
    pub fn found(&self, same_threshold: u32, alternating_threshold: u32) -> Option<Found> {
        self.find(same_threshold, alternating_threshold, false)
    }

    /// GUARD-P1: a repetition that would reach its threshold but for the waits between its repeats:
    /// a poll, left alone. Returned only when it reaches the threshold exactly, so that the ledger
    /// says it once per poll.
    pub fn poll(&self, same_threshold: u32, alternating_threshold: u32) -> Option<Found> {
        if self.found(same_threshold, alternating_threshold).is_some() {
            return None;
        }
        match self.find(same_threshold, alternating_threshold, true)? {
            found @ Found::Same { count, .. } if count == same_threshold => Some(found),
            found @ Found::Alternating { cycles, .. } if cycles == alternating_threshold => {
                // Seen from its other phase a call later, the same poll is not said twice.
                let (_, _, _, half) = self.alternation(true)?;
                (!half).then_some(found)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "repeat_tests.rs"]
mod tests;
