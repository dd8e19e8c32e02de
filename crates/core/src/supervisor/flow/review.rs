//! The person's review of the agent's changes [REVIEW-S1]: their comments, written on the web
//! view's Changes view, go to the agent as one visible message. It is the person speaking, as when
//! they type: whatever pokeshell waited to send on its own gives way to it. While the agent works it
//! waits as a follow-up, so the run in progress is not cut off; an idle agent starts a run with it.

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, NotifyLevel};
use crate::supervisor::delivery::Sent;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

impl Supervisor {
    pub(in crate::supervisor) fn on_review(&mut self, text: String, now: Now, out: &mut Vec<Action>) {
        if !self.connected {
            let notice = texts::notify_not_connected("The review was not sent");
            self.record(
                out,
                now,
                rule::REVIEW_SEND,
                LedgerKind::Declined,
                notice.clone(),
                None,
            );
            // Loud: the person may be on the web view, far from this session's footer.
            out.push(Action::Notify {
                level: NotifyLevel::Error,
                text: notice,
                desktop: true,
            });
            return;
        }
        self.post_compact.drop_wake();
        self.post_compact.end_episode();
        self.stall.end_episode();
        self.arbiter.lift_stop();
        self.cancel_limit_wait("your review resumes the agent", now, out);
        self.cancel_deferred("you sent a review", now, out);
        self.drop_held_manual_poke("a review went out instead", now, out);
        let deliver_as = self.auto_deliver_as();
        self.send(
            out,
            texts::CT_REVIEW,
            text.clone(),
            true,
            deliver_as,
            Sent::Review,
        );
        let reason = "you sent a review of the changes".to_string();
        self.record(
            out,
            now,
            rule::REVIEW_SEND,
            LedgerKind::Action,
            reason,
            Some(text),
        );
        out.push(Action::Notify {
            level: NotifyLevel::Info,
            text: texts::notify_review_sent(),
            desktop: false,
        });
    }
}
