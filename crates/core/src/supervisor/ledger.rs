//! The intervention ledger: every action pokeshell takes on its own, every decision not to act that a
//! user would ask about, and the outcome of each automatic resume. The shell appends each record as a
//! JSON line; the supervisor keeps the last few for the side pane.

use std::collections::VecDeque;

mod record;

pub use record::{LedgerKind, LedgerRecord};

/// Rule IDs used in ledger records: the IDs of docs/supervision.md, plus `ARB-*` for the arbiter.
pub mod rule {
    pub const POKE_BREACH: &str = "POKE-M2";
    pub const POKE_AUTO_ABORT: &str = "POKE-M3";
    pub const POKE_ORPHAN: &str = "POKE-O1";
    pub const POKE_WAKE_ARM: &str = "POKE-W1";
    pub const POKE_WAKE: &str = "POKE-W4";
    pub const POKE_MANUAL: &str = "POKE-P1";
    pub const POKE_TOOL_END: &str = "POKE-E4";
    pub const POKE_INPUT: &str = "POKE-E11";
    pub const POKE_CONFIG: &str = "POKE-C4";
    pub const SAR_RETRY: &str = "SAR-S8";
    pub const SAR_RETRY_GIVE_UP: &str = "SAR-S7";
    pub const SAR_LOOP: &str = "SAR-L4";
    pub const WAK_SCHEDULE: &str = "WAK-T1";
    pub const WAK_CANCEL: &str = "WAK-T2";
    pub const WAK_FIRE: &str = "WAK-T3";
    pub const WAK_RESTORE: &str = "WAK-T5";
    pub const HO_AUTO: &str = "HO-T1";
    pub const HO_MANUAL: &str = "HO-T2";
    pub const STALL_STREAM: &str = "STALL-S1";
    pub const STALL_RUN: &str = "STALL-R1";
    pub const STALL_FROZEN: &str = "STALL-F1";
    pub const LIMIT_WAIT: &str = "LIMIT-W1";
    pub const LIMIT_NOTIFY: &str = "LIMIT-N1";
    pub const LIMIT_RESTORE: &str = "LIMIT-R1";
    pub const ARB_ABORTED: &str = "ARB-ABORT";
    pub const RESTART_FROZEN: &str = "RST-F1";
    pub const RESTART_ABORT: &str = "RST-F2";
    pub const RESTART_DIED: &str = "RST-D1";
    pub const RESTART_LIMIT: &str = "RST-B1";
    pub const RESTART_RESUME: &str = "RST-R1";
    pub const RESTART_SERVER: &str = "RST-S1";
    pub const RESTART_UNREAPED: &str = "RST-K1";
    pub const ARB_COMPACTION_HOLD: &str = "ARB-HOLD";
    pub const PROM_DETECT: &str = "PROM-D1";
    pub const PROM_POKE: &str = "PROM-P1";
    pub const PROM_LIMIT: &str = "PROM-B1";
    pub const PROM_ASK: &str = "PROM-A1";
    pub const AWAY_USED: &str = "AWAY-U1";
    pub const AWAY_REFUSED: &str = "AWAY-U2";
    pub const GUARD_BUDGET: &str = "GUARD-B1";
    pub const GUARD_DAILY: &str = "GUARD-B2";
    pub const GUARD_CALLS: &str = "GUARD-C1";
    pub const GUARD_SAME_CALL: &str = "GUARD-L1";
    pub const GUARD_ALTERNATING: &str = "GUARD-L2";
    pub const GUARD_SAME_REPLY: &str = "GUARD-L3";
    pub const GUARD_IDLE_POKES: &str = "GUARD-L4";
    pub const GUARD_POLL: &str = "GUARD-P1";
    pub const GUARD_STEP_MESSAGE: &str = "GUARD-E1";
    pub const GUARD_STEP_HANDOFF: &str = "GUARD-E2";
    pub const GUARD_STEP_STOP: &str = "GUARD-E3";
    pub const GUARD_ALLOW: &str = "GUARD-A1";
    pub const GUARD_LEAVE: &str = "GUARD-A2";
    pub const GUARD_BREAKER_HOLD: &str = "GUARD-K1";
    pub const GUARD_BREAKER_PROBE: &str = "GUARD-K2";
    pub const GUARD_BREAKER_RESUME: &str = "GUARD-K3";
}

/// How many records the supervisor keeps for the view.
pub const KEPT_RECORDS: usize = 50;

#[derive(Debug, Default)]
pub(crate) struct Ledger {
    recent: VecDeque<LedgerRecord>,
}

impl Ledger {
    pub(crate) fn push(&mut self, record: LedgerRecord) {
        if self.recent.len() == KEPT_RECORDS {
            self.recent.pop_front();
        }
        self.recent.push_back(record);
    }

    pub(crate) fn recent(&self) -> impl Iterator<Item = &LedgerRecord> {
        self.recent.iter()
    }
}
