//! Where pi's agent loop is, as far as the bridge's events tell.

use super::message::StopReason;
use super::stall::StallKind;

/// pi-poke's run phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum RunPhase {
    /// Settled.
    #[default]
    Idle,
    /// Between `agent_start` and `agent_end`.
    Running,
    /// After `agent_end`, before `agent_settled` (retries, compaction, queued follow-ups may follow).
    BetweenRuns,
}

#[derive(Clone, Debug)]
pub(crate) struct RunState {
    phase: RunPhase,
    /// stopReason and errorMessage of the last `agent_end` (POKE-E6).
    last_stop: Option<StopReason>,
    last_error: Option<String>,
    /// False after a bridge (re)connection until pi says where it is.
    known: bool,
    /// A message that starts a turn went out while idle and `agent_start` has not come yet.
    starting: bool,
    /// `agent_settled` reported that pi was not idle (work queued by someone else).
    busy_after_settle: bool,
}

impl Default for RunState {
    fn default() -> Self {
        Self {
            phase: RunPhase::Idle,
            last_stop: None,
            last_error: None,
            known: true,
            starting: false,
            busy_after_settle: false,
        }
    }
}

impl RunState {
    /// Idle for sure: a message with `triggerTurn` starts a new run.
    pub(crate) fn idle(&self) -> bool {
        self.known && self.phase == RunPhase::Idle && !self.starting && !self.busy_after_settle
    }

    /// pi has settled and no run started since (whatever pi said about queued work).
    pub(crate) fn settled_phase(&self) -> bool {
        self.phase == RunPhase::Idle
    }

    /// Whether a run is in flight, and which silence the stall watch would see (STALL-S1, STALL-R1).
    pub(crate) fn in_flight(&self) -> Option<StallKind> {
        if !self.known {
            return None;
        }
        match self.phase {
            RunPhase::Running => Some(StallKind::Stream),
            RunPhase::BetweenRuns => Some(StallKind::Run),
            RunPhase::Idle => None,
        }
    }

    /// The error text of the last run, when it ended on an error (LIMIT-W1).
    pub(crate) fn provider_error(&self) -> Option<&str> {
        match self.last_stop {
            Some(StopReason::Error) => self.last_error.as_deref(),
            _ => None,
        }
    }

    pub(crate) fn known(&self) -> bool {
        self.known
    }

    /// A message sent now may not start a turn for a while: pi's state is unknown, or a turn is on its
    /// way.
    pub(crate) fn awaiting_start(&self) -> bool {
        !self.known || self.starting
    }

    /// POKE-E5.
    pub(crate) fn started(&mut self) {
        self.phase = RunPhase::Running;
        self.last_stop = None;
        self.last_error = None;
        self.known = true;
        self.starting = false;
        self.busy_after_settle = false;
    }

    /// POKE-E6.
    pub(crate) fn ended(&mut self, stop_reason: Option<StopReason>, error_message: Option<String>) {
        self.phase = RunPhase::BetweenRuns;
        self.known = true;
        if stop_reason.is_some() {
            self.last_stop = stop_reason;
            self.last_error = error_message;
        }
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

    pub(crate) fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Fix B8: once the user took over, the dead run's stop reason is no stall evidence.
    pub(crate) fn forget_stop(&mut self) {
        self.last_stop = None;
        self.last_error = None;
    }

    /// A session change or `/tree`: no run is remembered.
    pub(crate) fn reset(&mut self) {
        self.phase = RunPhase::Idle;
        self.forget_stop();
    }

    /// `session_start`: pi is idle in the new session.
    pub(crate) fn session_started(&mut self) {
        self.known = true;
        self.starting = false;
        self.busy_after_settle = false;
    }

    /// A new bridge instance, a lost bridge or a shutdown: pi's state is unknown until its next event.
    pub(crate) fn lost_track(&mut self) {
        self.known = false;
    }

    /// The bridge's snapshot after a (re)connection, sent after the lines it kept meanwhile: pi
    /// still busy in the run the events showed makes that run known again, so the stall watch goes
    /// on watching it (a stream that stalled across a reconnect was otherwise never aborted:
    /// simulation seed 1026). Anything else stays unknown until pi's next event.
    pub(crate) fn snapshot(&mut self, idle: Option<bool>) {
        if idle == Some(false) && self.phase != RunPhase::Idle {
            self.known = true;
        }
    }

    /// A message that starts a turn went out.
    pub(crate) fn message_sent(&mut self) {
        if self.idle() {
            self.starting = true;
        }
    }

    /// pi refused a message: nothing will start, pi is where it was before the send.
    pub(crate) fn message_refused(&mut self) {
        self.starting = false;
    }
}
