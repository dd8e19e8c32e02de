//! The user's stop (Esc) kept in pi's session, as a planned resume is: a server brought back after a
//! crash or a reboot starts the session with a new supervisor, which must still know that the user
//! said stop (simulation seed 1272: a wakeup fired into a conversation the user had stopped, once the
//! server came back). A stop is written when the user's Esc aborts a run, and its end when the user
//! types or pokes; a session start takes the last of the two.

use serde_json::json;

use crate::supervisor::Supervisor;
use crate::supervisor::action::Action;
use crate::supervisor::arbiter::StopCause;
use crate::supervisor::event::CustomEntry;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::texts::{ENTRY_STOP_LIFTED, ENTRY_STOPPED};
use crate::supervisor::time::Now;

impl Supervisor {
    /// The user's Esc stopped a run: the stop goes into the session.
    pub(in crate::supervisor) fn save_stop(&mut self, out: &mut Vec<Action>) {
        if !self.stop_saved {
            self.stop_saved = true;
            out.push(Action::AppendEntry {
                custom_type: ENTRY_STOPPED,
                data: json!({ "by": "user" }),
            });
        }
    }

    /// The user typed or poked: the stop in the session ends too.
    pub(in crate::supervisor) fn lift_saved_stop(&mut self, out: &mut Vec<Action>) {
        if self.stop_saved {
            self.stop_saved = false;
            out.push(Action::AppendEntry {
                custom_type: ENTRY_STOP_LIFTED,
                data: json!({}),
            });
        }
    }

    /// A session starts: a stop its entries still hold holds again.
    pub(in crate::supervisor) fn restore_stop(
        &mut self,
        entries: &[CustomEntry],
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let last = entries
            .iter()
            .rev()
            .find(|e| e.custom_type == ENTRY_STOPPED || e.custom_type == ENTRY_STOP_LIFTED);
        if last.is_none_or(|e| e.custom_type != ENTRY_STOPPED) {
            return;
        }
        self.stop_saved = true;
        if self.arbiter.stopped().is_some() {
            return;
        }
        self.arbiter.stop(StopCause::User);
        let reason =
            "you (Esc) stopped the run before this session was brought back: nothing resumes until you type"
                .to_string();
        self.record(out, now, rule::ARB_ABORTED, LedgerKind::Declined, reason, None);
    }
}
