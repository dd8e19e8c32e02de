//! The settle arbiter's memory (docs/supervision.md, "Arbitration"): which rule owned the last settle,
//! what was sent since, who stopped the last run, the shared cooldown and the one resume that may wait
//! for it. At most one resume message goes out per settle; the priority order itself is applied by the
//! supervisor (`flow/settle.rs`).

use super::guard::ladder::Repeat;
use super::ledger::rule;
use super::limit::{ErrorKind, Plan};
use super::recovery::emptiness::EmptyReply;
use super::stall::StallKind;

/// A resume message one rule wants to send.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Resume {
    /// POKE-W4: the post-compaction wake decided to poke.
    WakePoke,
    /// POKE-O1: a tool outlived its interrupted run (tick-driven, never deferred).
    Orphan { tool_id: String },
    /// SAR-S8: retry an empty reply.
    Retry { reason: EmptyReply },
    /// SAR-L4: a continuation (`nudge: None`) or nudge number `n`.
    Loop {
        signature: String,
        tool: String,
        count: u32,
        nudge: Option<u32>,
        last: bool,
    },
    /// RST-R1: pi was restarted mid-run; `reason` says why.
    Restart { reason: String },
    /// STALL-S1 / STALL-R1: pokeshell stopped a silent run; resume it.
    Stall { kind: StallKind, seconds: u64 },
    /// PROM-P1: the run ended on an announced step it did not take; `step` quotes it, `certain` says
    /// whether the cues were sure (else the run had tool calls and they were unsure).
    Promise { step: String, certain: bool },
    /// GUARD-E1: the ladder's message about a repetition; GUARD-E2 after its handoff (`after_handoff`).
    Guard { repeat: Repeat, after_handoff: bool },
}

impl Resume {
    pub(crate) fn rule(&self) -> &'static str {
        match self {
            Self::WakePoke => rule::POKE_WAKE,
            Self::Orphan { .. } => rule::POKE_ORPHAN,
            Self::Retry { .. } => rule::SAR_RETRY,
            Self::Loop { .. } => rule::SAR_LOOP,
            Self::Restart { .. } => rule::RESTART_RESUME,
            Self::Stall { kind, .. } => stall_rule(*kind),
            Self::Promise { .. } => rule::PROM_POKE,
            Self::Guard {
                after_handoff: false, ..
            } => rule::GUARD_STEP_MESSAGE,
            Self::Guard {
                after_handoff: true, ..
            } => rule::GUARD_STEP_HANDOFF,
        }
    }

    /// Pokes also obey pi-poke's own cooldown and per-episode maximum.
    pub(crate) fn is_poke(&self) -> bool {
        matches!(self, Self::WakePoke | Self::Orphan { .. })
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Self::WakePoke => "the post-compaction resume poke".to_string(),
            Self::Orphan { .. } => "the orphaned-tool poke".to_string(),
            Self::Retry { reason } => format!("the retry ({})", reason.reason().to_lowercase()),
            Self::Loop { tool, count, .. } => format!("the loop-guard message ({tool} failed {count} times)"),
            Self::Restart { .. } => "the resume after pi's restart".to_string(),
            Self::Stall { seconds, .. } => format!("the resume after a {seconds}s stall"),
            Self::Promise { step, certain } => {
                let how = if *certain { "certain" } else { "unsure" };
                format!("the promise poke ({how}: \"{step}\")")
            }
            Self::Guard {
                repeat,
                after_handoff,
            } => {
                let what = if *after_handoff {
                    "the message after the guard rail's handoff"
                } else {
                    "the guard rail's message"
                };
                format!("{what} ({})", repeat.evidence())
            }
        }
    }
}

/// A rule that stops insisting at this settle. It only gives up (resets its count, tells the user) if
/// it wins the settle: a rule that loses changes nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum GiveUp {
    /// POKE-W4: the episode's maximum of pokes is reached.
    Wake,
    /// SAR-S7: the retries for this empty reply are spent.
    Retry { reason: EmptyReply },
}

impl GiveUp {
    pub(crate) fn rule(&self) -> &'static str {
        match self {
            Self::Wake => rule::POKE_WAKE,
            Self::Retry { .. } => rule::SAR_RETRY_GIVE_UP,
        }
    }

    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Self::Wake => "the post-compaction wake's give-up",
            Self::Retry { .. } => "the retry's give-up",
        }
    }
}

pub(crate) fn stall_rule(kind: StallKind) -> &'static str {
    match kind {
        StallKind::Stream => rule::STALL_STREAM,
        StallKind::Run => rule::STALL_RUN,
    }
}

/// What a rule made of a settle.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Claim {
    Inject(Resume),
    /// It acted without a message (stays quiet on purpose, or gave up already): nothing else resumes.
    Quiet {
        rule: &'static str,
    },
    /// It gives up if it wins; nothing else resumes.
    GiveUp(GiveUp),
    /// LIMIT-W1 / LIMIT-N1: a provider error pi's retries did not get past; the plan for it.
    Limit {
        plan: Plan,
        kind: ErrorKind,
        error: String,
    },
}

impl Claim {
    pub(crate) fn rule(&self) -> &'static str {
        match self {
            Self::Inject(resume) => resume.rule(),
            Self::Quiet { rule } => rule,
            Self::GiveUp(give_up) => give_up.rule(),
            Self::Limit { plan, .. } => match plan {
                Plan::Resume { .. } => rule::LIMIT_WAIT,
                Plan::Notify { .. } | Plan::GiveUp => rule::LIMIT_NOTIFY,
            },
        }
    }

    /// The loop guard's final nudge or its silence after it: a later "resume the work" poke would
    /// contradict it (X6).
    pub(crate) fn tells_agent_to_stop(&self) -> bool {
        match self {
            Self::Inject(Resume::Loop { last, .. }) => *last,
            Self::Quiet { rule } => *rule == rule::SAR_LOOP,
            Self::Inject(_) | Self::GiveUp(_) | Self::Limit { .. } => false,
        }
    }
}

/// A resume chosen at a settle that waits for a cooldown or a compaction (POKE-N3, B7).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Deferred {
    pub resume: Resume,
    pub due_mono: u64,
}

/// Who stopped the last run, when a settle was aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopCause {
    User,
    AutoAbort,
    Handoff,
    /// pokeshell stopped a silent run (STALL-S1, STALL-R1); its settle resumes it.
    Stall,
    /// A guard rail stopped the run (its budget, its call cap, no progress): the person is asked.
    Guard,
}

impl StopCause {
    /// Who stopped the run, for the ledger.
    pub fn who(self) -> &'static str {
        match self {
            Self::User => "you (Esc)",
            Self::AutoAbort => "pokeshell's auto-abort",
            Self::Handoff => "the handoff compaction",
            Self::Stall => "pokeshell's stall watch",
            Self::Guard => "a guard rail",
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Arbiter {
    /// When the last automatic resume went out (the shared cooldown).
    last_injection_mono: Option<u64>,
    deferred: Option<Deferred>,
    /// A rule owned the last settle (sent, deferred, gave up, or stayed quiet on purpose).
    settle_claimed: bool,
    /// A message went to the model since the last settle (any kind: resume, nudge, wakeup, manual).
    injected_since_settle: bool,
    /// A message went to the model since the last turn's end (or settle).
    injected_since_turn: bool,
    /// Set by an aborted settle; only the user's next input clears it.
    stopped: Option<StopCause>,
    /// pokeshell itself aborted the run (auto-abort, or a handoff compacting a busy agent).
    self_abort: Option<StopCause>,
    /// Footer `📤 resume` until the next settle.
    resume_shown: bool,
}

impl Arbiter {
    /// A settle starts a new round; returns who stopped the run if it was aborted.
    pub(crate) fn new_settle(&mut self) -> StopCause {
        self.settle_claimed = false;
        self.injected_since_settle = false;
        self.injected_since_turn = false;
        self.resume_shown = false;
        self.self_abort.take().unwrap_or(StopCause::User)
    }

    /// A rule owned this settle.
    pub(crate) fn claim(&mut self) {
        self.settle_claimed = true;
    }

    pub(crate) fn settle_claimed(&self) -> bool {
        self.settle_claimed
    }

    /// Esc means stop: nothing resumes until the user acts.
    pub(crate) fn stop(&mut self, cause: StopCause) {
        self.settle_claimed = true;
        self.stopped = Some(cause);
    }

    pub(crate) fn stopped(&self) -> Option<StopCause> {
        self.stopped
    }

    /// The user poked by hand or typed: the stop is lifted.
    pub(crate) fn lift_stop(&mut self) {
        self.stopped = None;
    }

    /// pokeshell is about to abort the run itself; the aborted settle that follows is its doing.
    pub(crate) fn self_aborted(&mut self, cause: StopCause) {
        self.self_abort = Some(cause);
    }

    /// When the shared cooldown after the last automatic resume ends.
    pub(crate) fn cooldown_ends(&self, cooldown_ms: u64) -> u64 {
        self.last_injection_mono
            .map_or(0, |at| at.saturating_add(cooldown_ms))
    }

    /// An automatic resume went out; `shown` puts `📤 resume` in the footer.
    pub(crate) fn injected(&mut self, now_mono: u64, shown: bool) {
        self.last_injection_mono = Some(now_mono);
        self.resume_shown = shown;
    }

    /// Any message to the model went out: one per settle, of any kind (ARB-ONE).
    pub(crate) fn sent(&mut self) {
        self.injected_since_settle = true;
        self.injected_since_turn = true;
    }

    pub(crate) fn injected_since_settle(&self) -> bool {
        self.injected_since_settle
    }

    /// At a turn's end: whether a message went out during that turn; the next turn starts afresh.
    pub(crate) fn take_injected_since_turn(&mut self) -> bool {
        std::mem::take(&mut self.injected_since_turn)
    }

    pub(crate) fn resume_shown(&self) -> bool {
        self.resume_shown
    }

    pub(crate) fn hide_resume(&mut self) {
        self.resume_shown = false;
    }

    pub(crate) fn park(&mut self, resume: Resume, due_mono: u64) {
        self.deferred = Some(Deferred { resume, due_mono });
    }

    pub(crate) fn parked(&self) -> Option<&Deferred> {
        self.deferred.as_ref()
    }

    pub(crate) fn unpark(&mut self) -> Option<Deferred> {
        self.deferred.take()
    }

    /// A session change or `/tree`: everything but a parked resume (the caller cancels that one with a
    /// ledger record) and what was sent since the last settle (ARB-ONE counts until the next settle) is
    /// forgotten.
    pub(crate) fn reset(&mut self) {
        *self = Self {
            deferred: self.deferred.take(),
            injected_since_settle: self.injected_since_settle,
            injected_since_turn: self.injected_since_turn,
            ..Self::default()
        };
    }

    /// A new session: what went to the old one does not hold back the new one's first message.
    pub(crate) fn forget_sent(&mut self) {
        self.injected_since_settle = false;
        self.injected_since_turn = false;
    }
}
