//! Sending messages to pi safely (fix B7): automatic messages are hidden custom messages that start a
//! turn when pi is idle and queue as a follow-up when it is busy; the bridge's reply to each send comes
//! back as `SendResult`.

use std::collections::VecDeque;

use serde_json::json;

use super::Supervisor;
use super::action::{Action, DeliverAs, NotifyLevel};
use super::ledger::{LedgerKind, rule};
use super::texts;
use super::time::Now;

/// What a send was for, to act on its result.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sent {
    Resume { rule: &'static str },
    ManualPoke,
    Wakeup { id: String, reason: String },
}

const REMEMBERED_SENDS: usize = 64;

#[derive(Debug, Default)]
pub(crate) struct SendLog {
    last_id: u64,
    recent: VecDeque<(u64, Sent)>,
}

impl SendLog {
    fn register(&mut self, sent: Sent) -> u64 {
        self.last_id += 1;
        if self.recent.len() == REMEMBERED_SENDS {
            self.recent.pop_front();
        }
        self.recent.push_back((self.last_id, sent));
        self.last_id
    }

    fn take(&mut self, send_id: u64) -> Option<Sent> {
        let index = self.recent.iter().position(|(id, _)| *id == send_id)?;
        self.recent.remove(index).map(|(_, sent)| sent)
    }
}

impl Supervisor {
    /// WAK-P3 for every automatic message: steer when idle (it starts a turn), follow-up when busy or
    /// unsure (safe either way).
    pub(super) fn auto_deliver_as(&self) -> DeliverAs {
        if self.run.idle() {
            DeliverAs::Steer
        } else {
            DeliverAs::FollowUp
        }
    }

    /// Emits a `SendMessage` that starts a turn; returns its id.
    pub(super) fn send(
        &mut self,
        out: &mut Vec<Action>,
        custom_type: &'static str,
        text: String,
        display: bool,
        deliver_as: DeliverAs,
        sent: Sent,
    ) -> u64 {
        if self.run.idle() {
            self.run.starting = true;
        }
        let send_id = self.sends.register(sent);
        out.push(Action::SendMessage {
            send_id,
            custom_type,
            text,
            display,
            deliver_as,
            trigger_turn: true,
        });
        send_id
    }

    pub(super) fn on_send_result(
        &mut self,
        send_id: u64,
        error: Option<String>,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let Some(sent) = self.sends.take(send_id) else {
            return;
        };
        let Some(error) = error else {
            if let Sent::Wakeup { id, reason } = sent {
                let data = json!({ "id": id, "reason": reason });
                out.push(Action::AppendEntry {
                    custom_type: texts::ENTRY_WAKEUP_FIRED,
                    data,
                });
            }
            return;
        };
        // Nothing will start: pi is where it was before the send.
        self.run.starting = false;
        let (rule, what) = match sent {
            Sent::Wakeup { id, .. } => {
                let data = json!({ "id": id, "error": error });
                out.push(Action::AppendEntry {
                    custom_type: texts::ENTRY_WAKEUP_FAILED,
                    data,
                });
                (rule::WAK_FIRE, format!("Wakeup {id}"))
            }
            Sent::Resume { rule } => {
                self.forget_outcome(send_id);
                (rule, "The automatic resume".to_string())
            }
            Sent::ManualPoke => (rule::POKE_MANUAL, "The poke".to_string()),
        };
        let reason = format!("pi refused the message ({what}): {error}");
        self.record(out, now, rule, LedgerKind::Declined, reason, None);
        out.push(Action::Notify {
            level: NotifyLevel::Error,
            text: texts::notify_send_failed(&what, &error),
            desktop: false,
        });
    }
}
