//! pokeshell relaunched pi (RST-F1, RST-F2, RST-D1): the old pi's state is gone, and a run it was in
//! the middle of is resumed once the new pi's session has started (RST-R1), through the arbiter: the
//! user's stop, the bridge, a compaction and the shared cooldown hold it like any resume.

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, NotifyLevel};
use crate::supervisor::arbiter::Resume;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

impl Supervisor {
    pub(in crate::supervisor) fn on_pi_restarted(
        &mut self,
        rule: &'static str,
        reason: String,
        resume: bool,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.connected = false;
        self.run.lost_track();
        self.tools.clear();
        self.compaction.reset();
        // The old session's timers go with it (its wakeups and a planned resume are in pi's session
        // and come back at the new session's start): one left here fired into the new pi before its
        // session started, and again once re-armed (simulation seed 1348).
        self.wakeups.clear();
        self.provider.drop_timer();
        self.cancel_deferred("pi is being restarted", now, out);
        self.record(
            out,
            now,
            rule,
            LedgerKind::Action,
            format!("restarted pi on its session: {reason}"),
            None,
        );
        out.push(Action::Notify {
            level: NotifyLevel::Warning,
            text: texts::notify_restart(&reason),
            desktop: true,
        });
        // The same session comes back: a stop the user made still holds after its restart.
        self.restart = Some(crate::supervisor::PendingRestart {
            resume: resume.then_some(reason),
            stopped: self.arbiter.stopped(),
        });
    }

    /// A relaunched pi's run is still to be resumed (for whoever saves what runs: it still counts as
    /// under way).
    pub fn resume_pending(&self) -> bool {
        self.restart.as_ref().is_some_and(|r| r.resume.is_some())
    }

    /// The relaunched pi's session started: resume the run it was in, if any.
    pub(in crate::supervisor) fn restart_resume_due(&mut self, now: Now, out: &mut Vec<Action>) {
        let Some(restart) = self.restart.take() else {
            return;
        };
        if let Some(cause) = restart.stopped {
            self.arbiter.stop(cause);
        }
        let Some(reason) = restart.resume else {
            return;
        };
        // ARB-ONE: a wakeup that came due while pi was down fired as the session started, and
        // restarted the agent already (simulation seed 1348: both went out).
        if self.arbiter.injected_since_settle() {
            let why =
                "pi was restarted mid-run; a wakeup that fired as its session started resumed it".to_string();
            self.record(out, now, rule::RESTART_RESUME, LedgerKind::Declined, why, None);
            return;
        }
        if !self.config.poke.enabled {
            let why = "pi was restarted mid-run, but supervision is off: nothing resumes it".to_string();
            self.record(out, now, rule::RESTART_RESUME, LedgerKind::Declined, why, None);
            return;
        }
        self.dispatch(Resume::Restart { reason }, now, out);
    }
}
