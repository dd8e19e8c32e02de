//! Small pieces of state shared by several components.

use super::message::StopReason;

/// pi-poke's runPhase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum RunPhase {
    /// Settled.
    #[default]
    Idle,
    /// Between `agent_start` and `agent_end`.
    Running,
    /// After `agent_end`, before `agent_settled` (retries, compaction, queued follow-ups may follow).
    BetweenRuns,
}

/// Where pi's agent loop is, as far as the events tell.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunState {
    pub phase: RunPhase,
    /// stopReason and errorMessage of the last `agent_end` (POKE-E6).
    pub last_stop: Option<StopReason>,
    pub last_error: Option<String>,
    /// False after a bridge (re)connection until pi says where it is.
    pub known: bool,
    /// A message that starts a turn went out while idle and `agent_start` has not come yet.
    pub starting: bool,
    /// `agent_settled` reported that pi was not idle (work queued by someone else).
    pub busy_after_settle: bool,
}

impl RunState {
    /// Idle for sure: a message with `triggerTurn` starts a new run.
    pub(crate) fn idle(&self) -> bool {
        self.known && self.phase == RunPhase::Idle && !self.starting && !self.busy_after_settle
    }

    pub(crate) fn started(&mut self) {
        self.phase = RunPhase::Running;
        self.last_stop = None;
        self.last_error = None;
        self.known = true;
        self.starting = false;
        self.busy_after_settle = false;
    }

    pub(crate) fn settled(&mut self, is_idle: bool) {
        self.phase = RunPhase::Idle;
        self.known = true;
        self.starting = false;
        self.busy_after_settle = !is_idle;
    }

    /// POKE-W1, the part that depends on the run: work was in flight when the compaction came. A stop
    /// reason only counts before the settle of its run (fix B8).
    pub(crate) fn interrupted(&self) -> bool {
        match self.phase {
            RunPhase::Running => true,
            RunPhase::BetweenRuns => {
                matches!(
                    self.last_stop,
                    Some(StopReason::Error | StopReason::Aborted | StopReason::Length)
                )
            }
            RunPhase::Idle => false,
        }
    }

    /// The last run ended in error or length: stall evidence for an orphaned tool (aborted excluded, B6).
    pub(crate) fn failed(&self) -> bool {
        self.last_stop.as_ref().is_some_and(StopReason::is_failure)
    }
}

/// Who stopped the last run, when a settle was aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopCause {
    User,
    AutoAbort,
    Handoff,
}

impl StopCause {
    /// Who stopped the run, for the ledger.
    pub fn who(self) -> &'static str {
        match self {
            Self::User => "you (Esc)",
            Self::AutoAbort => "pokeshell's auto-abort",
            Self::Handoff => "the handoff compaction",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Compaction {
    pub active: bool,
    pub since_mono: u64,
    /// pokeshell asked for a handoff compaction and it has not ended yet.
    pub handoff_in_flight: bool,
}
