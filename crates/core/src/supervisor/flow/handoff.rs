//! pi-auto-handoff's trigger [HO-T1, HO-T2]: a settle with the context at or above `percent` compacts
//! with a handoff document, when nothing else acted on that settle. The document itself is the bridge's
//! job.

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, NotifyLevel};
use crate::supervisor::arbiter::StopCause;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

/// A wakeup due this soon keeps the automatic handoff for a later settle (the compaction would abort
/// the wakeup's run).
pub const HANDOFF_WAKEUP_MARGIN_MS: u64 = 10_000;

impl Supervisor {
    /// HO-T1, called by the arbiter on a settle no other rule claimed, not aborted, with no wake.
    pub(in crate::supervisor) fn evaluate_handoff(&mut self, is_idle: bool, now: Now, out: &mut Vec<Action>) {
        let Some(percent) = self.context.and_then(|usage| usage.percent) else {
            return;
        };
        let limit = self.config.handoff_percent();
        if percent < limit {
            return;
        }
        let blocked = if !self.config.handoff.enabled {
            Some("the automatic handoff is off".to_string())
        } else if let Some(why) = self.guard_holds() {
            Some(why.to_string())
        } else if self.compaction.busy() {
            Some("a compaction is already running".to_string())
        } else if !is_idle {
            Some("pi is still busy and a compaction would abort its work".to_string())
        } else if self.wakeups.due_within(now.mono_ms, HANDOFF_WAKEUP_MARGIN_MS) {
            Some("a wakeup is about to fire".to_string())
        } else if !self.connected {
            Some("the bridge is not connected".to_string())
        } else {
            None
        };
        if let Some(blocked) = blocked {
            let reason = format!("context at {percent:.0}% (limit {limit:.0}%), but {blocked}");
            self.record(out, now, rule::HO_AUTO, LedgerKind::Declined, reason, None);
            return;
        }
        self.start_handoff(None, now, out);
        let reason =
            format!("context at {percent:.0}% (limit {limit:.0}%): compacting with a handoff document");
        self.record(out, now, rule::HO_AUTO, LedgerKind::Action, reason, None);
        out.push(Action::Notify {
            level: NotifyLevel::Info,
            text: texts::notify_handoff(percent, limit),
            desktop: true,
        });
    }

    /// HO-T2: the user asked for a handoff; works whatever the toggles say.
    pub(in crate::supervisor) fn manual_handoff(
        &mut self,
        focus: Option<String>,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let blocked = if self.compaction.busy() {
            Some(texts::notify_handoff_busy())
        } else if !self.connected {
            Some(texts::notify_not_connected("No handoff"))
        } else {
            None
        };
        if let Some(text) = blocked {
            self.refuse(out, now, rule::HO_MANUAL, text);
            return;
        }
        // ctx.compact() aborts a busy agent first; that aborted settle is the handoff's doing.
        if !self.run.idle() {
            self.arbiter.self_aborted(StopCause::Handoff);
        }
        let reason = match &focus {
            Some(focus) => format!("you asked for a handoff (focus: {focus})"),
            None => "you asked for a handoff".to_string(),
        };
        self.start_handoff(focus, now, out);
        self.record(out, now, rule::HO_MANUAL, LedgerKind::Action, reason, None);
        out.push(Action::Notify {
            level: NotifyLevel::Info,
            text: texts::notify_manual_handoff(),
            desktop: false,
        });
    }

    pub(in crate::supervisor) fn start_handoff(
        &mut self,
        focus: Option<String>,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.compaction.start_handoff(now.mono_ms);
        out.push(Action::Compact {
            focus,
            save: self.config.handoff.save,
        });
    }

    /// The handoff compaction ended (its `session_compact*` event or the command's reply).
    pub(in crate::supervisor) fn finish_handoff(
        &mut self,
        error: Option<&str>,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        if !self.compaction.finish_handoff() {
            return;
        }
        self.guard_handoff_done(error.is_some(), now, out);
        match error {
            None => {
                let reason = "the handoff compaction finished".to_string();
                self.record(out, now, rule::HO_AUTO, LedgerKind::Outcome, reason, None);
            }
            Some(error) => {
                let reason = format!("the handoff compaction failed: {error}");
                self.record(out, now, rule::HO_AUTO, LedgerKind::Outcome, reason, None);
                out.push(Action::Notify {
                    level: NotifyLevel::Warning,
                    text: texts::notify_handoff_failed(error),
                    desktop: false,
                });
            }
        }
    }
}
