//! The supervisor's records: a refusal, a give-up, what the person did from outside pi, and the one
//! way every record reaches the ledger.

use super::ledger::LedgerKind as Kind;
use super::{Action, LedgerRecord, NotifyLevel, Now, Supervisor};

impl Supervisor {
    /// A request of the user's that cannot be carried out now: the ledger and a warning say why.
    pub(super) fn refuse(&mut self, out: &mut Vec<Action>, now: Now, rule: &'static str, text: String) {
        self.record(out, now, rule, Kind::Declined, text.clone(), None);
        out.push(Action::Notify {
            level: NotifyLevel::Warning,
            text,
            desktop: false,
        });
    }

    /// A rule stops insisting: recorded, and announced with the bell and a desktop notification.
    pub(super) fn give_up(
        &mut self,
        out: &mut Vec<Action>,
        now: Now,
        rule: &'static str,
        reason: String,
        notice: String,
    ) {
        self.record(out, now, rule, Kind::Declined, reason, None);
        out.push(Action::Notify {
            level: NotifyLevel::Error,
            text: notice,
            desktop: true,
        });
    }

    /// Records what the person did from outside pi (a link from a push, AWAY-U1, AWAY-U2): it shows
    /// with the interventions and goes to the ledger.
    pub fn record_person(
        &mut self,
        now: Now,
        rule: &'static str,
        kind: Kind,
        reason: String,
        sent: Option<String>,
    ) -> Vec<Action> {
        let mut out = Vec::new();
        self.record(&mut out, now, rule, kind, reason, sent);
        out
    }

    /// Appends one ledger record: kept for the view and emitted for the log file.
    pub(super) fn record(
        &mut self,
        out: &mut Vec<Action>,
        now: Now,
        rule: &'static str,
        kind: Kind,
        reason: String,
        sent: Option<String>,
    ) {
        let record = LedgerRecord {
            wall_ms: now.wall_ms,
            session_id: self.session_id.clone(),
            rule,
            kind,
            reason,
            sent,
        };
        self.ledger.push(record.clone());
        out.push(Action::Log(record));
    }
}
