//! Guard rails for unattended runs (docs/supervision.md, "Guard rails"): an agent going the wrong way
//! must not go on for hours. What a session may spend (`spend`: its budget, and the model calls since
//! the person's last word), the no-progress rails (`repeat`: the same call, two calls taking turns;
//! `replies`: the same reply; `pokes`: pokes that bring nothing), the one escalation ladder they all
//! climb (`ladder`), and the pause that asks the person (`halt`). This component keeps their state;
//! the supervisor feeds it and acts (`flow/guard.rs`, `flow/guard_ladder.rs`).

pub mod circuit;
pub mod halt;
pub mod ladder;
pub mod pokes;
pub mod repeat;
pub mod replies;
pub mod spend;
pub mod texts;

use std::collections::VecDeque;

use self::circuit::Circuit;
use self::halt::Halt;
use self::ladder::{Ladder, Repeat};
use self::pokes::IdlePokes;
use self::repeat::CallHistory;
use self::replies::ReplyRepeats;
use self::spend::SpendRail;

/// The rails' settings (docs/configuration.md, "Guard rails"); 0 turns a rail off.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardConfig {
    /// `pokeshell.budgetUsd`: what one session may cost before it is stopped and the person asked.
    pub budget_usd: f64,
    /// `pokeshell.dailyBudgetUsd`: what every session together may cost in a day (the server's core
    /// sums it; the session reports it and offers it when the day's pause asks for more).
    pub daily_budget_usd: f64,
    /// `pokeshell.maxCallsPerRun`: model calls since the person's last word.
    pub max_calls_per_run: u32,
    /// `pokeshell.sameCallRepeats`: the same call with the same result, times in a row.
    pub same_call_repeats: u32,
    /// `pokeshell.alternatingRepeats`: rounds of two calls taking turns with unchanged results.
    pub alternating_repeats: u32,
    /// `pokeshell.sameReplyRepeats`: runs in a row that end on the same reply.
    pub same_reply_repeats: u32,
    /// `pokeshell.idlePokes`: pokes in a row that bring no new tool call.
    pub idle_pokes: u32,
    /// `pokeshell.pollWaitSeconds`: a call that runs this long is a wait, and repeats around it a poll.
    pub poll_wait_seconds: u64,
}

impl Default for GuardConfig {
    fn default() -> Self {
        Self {
            budget_usd: 25.0,
            daily_budget_usd: 100.0,
            max_calls_per_run: 400,
            same_call_repeats: 5,
            alternating_repeats: 4,
            same_reply_repeats: 4,
            idle_pokes: 3,
            poll_wait_seconds: 5,
        }
    }
}

impl GuardConfig {
    pub fn poll_wait_ms(&self) -> u64 {
        self.poll_wait_seconds.saturating_mul(1000)
    }
}

/// The day's budget across every session, as the server's core last said (GUARD-B2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DailyState {
    pub spent_usd: f64,
    pub limit_usd: f64,
}

#[derive(Debug, Default)]
pub struct Guard {
    pub spend: SpendRail,
    pub calls: CallHistory,
    pub replies: ReplyRepeats,
    pub pokes: IdlePokes,
    pub ladder: Ladder,
    /// The pause the person is asked about.
    pub halt: Option<Halt>,
    /// The day's budget is spent: nothing automatic goes out, runs are stopped.
    pub daily: Option<DailyState>,
    /// A ladder handoff is under way for this repetition: its end resumes the agent (GUARD-E2).
    pub handoff: Option<Repeat>,
    /// The ladder's last handoff failed (pi could not compact): the message after it must not claim
    /// a fresh context.
    pub handoff_failed: bool,
    /// The last ladder step or pause, for the side pane: rule and evidence.
    pub last: Option<(&'static str, String)>,
    /// The provider failure this session waits on with others, if any (GUARD-K1).
    pub circuit: Option<Circuit>,
    /// Tool calls under way: their identity and label, kept from their start for their end.
    started: VecDeque<Started>,
}

/// A tool call under way, as the rails will compare it when it ends.
#[derive(Debug)]
pub struct Started {
    pub id: String,
    pub name: String,
    pub signature: String,
    pub label: String,
    pub start_mono: u64,
}

/// Calls under way remembered at once: more than pi runs in one batch.
const KEPT_STARTED: usize = 64;

impl Guard {
    /// The person's word (a typed prompt): a new unattended stretch. The session's budget stays spent.
    pub fn person_spoke(&mut self) {
        self.spend.reset_calls();
        self.calls.clear();
        self.replies.clear();
        self.pokes.clear();
        self.ladder.reset();
    }

    /// A ladder step was taken: the rails count from zero again.
    pub fn restart_counts(&mut self) {
        self.calls.restart();
        self.replies.clear();
        self.pokes.clear();
    }

    /// A tool call started.
    pub fn started(&mut self, call: Started) {
        self.started.retain(|s| s.id != call.id);
        if self.started.len() == KEPT_STARTED {
            self.started.pop_front();
        }
        self.started.push_back(call);
    }

    /// A tool call ended: what was kept from its start.
    pub fn ended(&mut self, id: &str) -> Option<Started> {
        let at = self.started.iter().position(|s| s.id == id)?;
        self.started.remove(at)
    }

    /// pi's tools were forgotten (a new session, a new bridge): so are their starts.
    pub fn forget_started(&mut self) {
        self.started.clear();
    }

    /// A wait the agent planned itself (a wakeup fired): repeats across it are a poll's.
    pub fn waited(&mut self) {
        self.calls.wait();
        self.replies.clear();
    }
}
