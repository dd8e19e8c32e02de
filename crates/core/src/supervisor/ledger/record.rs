//! One record of the ledger: what the supervisor decided, in the shape the ledger file keeps (the
//! binary crate appends each as a JSON line).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LedgerKind {
    /// pokeshell did something (sent a message, aborted, compacted, scheduled a wakeup...).
    Action,
    /// pokeshell chose not to act, or to wait; `reason` says why.
    Declined,
    /// What came of an earlier automatic resume.
    Outcome,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LedgerRecord {
    /// Unix epoch milliseconds.
    pub wall_ms: u64,
    pub session_id: Option<String>,
    /// The rule behind the record, e.g. `POKE-W4` (see `core::supervisor::rule` and docs/supervision.md).
    pub rule: &'static str,
    pub kind: LedgerKind,
    /// In plain words.
    pub reason: String,
    /// The text sent to the model, if any.
    pub sent: Option<String>,
}
