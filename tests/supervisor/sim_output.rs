//! The simulator's view of what came out: sends, notifications, entries, replies, the ledger and the
//! supervisor's view.

use pokeshell_core::supervisor::{Action, LedgerKind, LedgerRecord, NotifyLevel, View};
use serde_json::Value;

use super::sim::{Sent, Sim};

impl Sim {
    pub fn mark(&self) -> usize {
        self.actions.len()
    }

    pub fn sent(&self) -> Vec<Sent> {
        self.sent_since(0)
    }

    pub fn sent_since(&self, mark: usize) -> Vec<Sent> {
        self.actions[mark..]
            .iter()
            .filter_map(|action| match action {
                Action::SendMessage {
                    custom_type,
                    text,
                    display,
                    deliver_as,
                    trigger_turn,
                    ..
                } => Some(Sent {
                    custom_type,
                    text: text.clone(),
                    display: *display,
                    deliver_as: *deliver_as,
                    trigger_turn: *trigger_turn,
                }),
                _ => None,
            })
            .collect()
    }

    pub fn sent_of(&self, custom_type: &str) -> Vec<Sent> {
        self.sent()
            .into_iter()
            .filter(|sent| sent.custom_type == custom_type)
            .collect()
    }

    /// Automatic pokes: customType "poke" and a text that is not the manual one.
    pub fn auto_pokes(&self) -> usize {
        self.sent_of("poke")
            .iter()
            .filter(|sent| !sent.text.contains("by hand"))
            .count()
    }

    pub fn notifications(&self) -> Vec<(NotifyLevel, String, bool)> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                Action::Notify { level, text, desktop } => Some((*level, text.clone(), *desktop)),
                _ => None,
            })
            .collect()
    }

    pub fn entries(&self, custom_type: &str) -> Vec<Value> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                Action::AppendEntry {
                    custom_type: kind,
                    data,
                } if *kind == custom_type => Some(data.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn replies(&self) -> Vec<(String, String, bool, Value)> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                Action::ToolReply {
                    call_id,
                    text,
                    is_error,
                    details,
                } => Some((call_id.clone(), text.clone(), *is_error, details.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn aborts(&self) -> usize {
        self.actions
            .iter()
            .filter(|action| matches!(action, Action::Abort))
            .count()
    }

    pub fn compactions(&self) -> Vec<(Option<String>, bool)> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                Action::Compact { focus, save } => Some((focus.clone(), *save)),
                _ => None,
            })
            .collect()
    }

    pub fn ledger(&self) -> Vec<LedgerRecord> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                Action::Log(record) => Some(record.clone()),
                _ => None,
            })
            .collect()
    }

    /// Ledger records of one rule and kind.
    pub fn records(&self, rule: &str, kind: LedgerKind) -> Vec<LedgerRecord> {
        self.ledger()
            .into_iter()
            .filter(|record| record.rule == rule && record.kind == kind)
            .collect()
    }

    pub fn view(&self) -> View {
        self.sup.view(self.now)
    }

    pub fn footer(&self) -> String {
        self.view().footer.text()
    }

    pub fn pokes_in_episode(&self) -> u32 {
        self.view().counters.pokes
    }
}
