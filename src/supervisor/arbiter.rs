//! The settle arbiter (spec §5.3): every component looks at `agent_settled`, and at most one resume
//! message goes out. Priority: user abort, then loop guard, then post-compaction wake, then empty-reply
//! retry, then orphaned-tool poke. A component that loses keeps its counters untouched. Every automatic
//! resume also waits for the shared cooldown, and for any running compaction to end.

use super::Supervisor;
use super::action::{Action, NotifyLevel};
use super::event::ContextUsage;
use super::ledger::{LedgerKind, rule};
use super::message::{Message, Role, last_visible};
use super::recovery::emptiness::{EmptyReply, evaluate_empty};
use super::state::StopCause;
use super::texts;
use super::time::Now;

/// A resume message one component wants to send.
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
}

impl Resume {
    pub(crate) fn rule(&self) -> &'static str {
        match self {
            Self::WakePoke => rule::POKE_WAKE,
            Self::Orphan { .. } => rule::POKE_ORPHAN,
            Self::Retry { .. } => rule::SAR_RETRY,
            Self::Loop { .. } => rule::SAR_LOOP,
        }
    }

    /// Pokes also obey pi-poke's own cooldown and per-episode maximum.
    fn is_poke(&self) -> bool {
        matches!(self, Self::WakePoke | Self::Orphan { .. })
    }

    fn describe(&self) -> String {
        match self {
            Self::WakePoke => "the post-compaction resume poke".to_string(),
            Self::Orphan { .. } => "the orphaned-tool poke".to_string(),
            Self::Retry { reason } => format!("the retry ({})", reason.reason().to_lowercase()),
            Self::Loop { tool, count, .. } => format!("the loop-guard message ({tool} failed {count} times)"),
        }
    }
}

/// What a component made of a settle.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Claim {
    Inject(Resume),
    /// It acted without a message (gave up, or stays quiet on purpose): nothing else resumes.
    Quiet {
        rule: &'static str,
    },
}

impl Claim {
    /// The loop guard's final nudge or its silence after it: a later "resume the work" poke would
    /// contradict it (X6).
    fn tells_agent_to_stop(&self) -> bool {
        match self {
            Self::Inject(Resume::Loop { last, .. }) => *last,
            Self::Quiet { rule } => *rule == rule::SAR_LOOP,
            Self::Inject(_) => false,
        }
    }
}

/// A resume chosen at a settle that waits for a cooldown or a compaction (POKE-N3, B7).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Deferred {
    pub resume: Resume,
    pub due_mono: u64,
}

#[derive(Debug, Default)]
pub(crate) struct ArbiterState {
    /// When the last automatic resume went out (the shared cooldown).
    pub last_injection_mono: Option<u64>,
    pub deferred: Option<Deferred>,
    /// A component owned the last settle (sent, deferred, gave up, or stayed quiet on purpose).
    pub settle_claimed: bool,
    /// A resume went out since the last settle.
    pub injected_since_settle: bool,
    /// Set by an aborted settle; only the user's next input clears it.
    pub stopped: Option<StopCause>,
    /// pokeshell itself aborted the run (auto-abort, or a handoff compacting a busy agent).
    pub self_abort: Option<StopCause>,
    /// Footer `📤 resume` until the next settle.
    pub resume_shown: bool,
}

pub(crate) struct Settle {
    pub aborted: bool,
    pub is_idle: bool,
    pub context_usage: Option<ContextUsage>,
    pub tail: Vec<Message>,
}

impl Supervisor {
    pub(super) fn on_settled(&mut self, settle: Settle, now: Now, out: &mut Vec<Action>) {
        self.run.settled(settle.is_idle);
        self.context = settle.context_usage;
        let aborted = settle.aborted || last_visible(&settle.tail).is_some_and(Message::is_aborted_assistant);
        self.judge_outcome(aborted, &settle.tail, now, out);
        self.arbiter.settle_claimed = false;
        self.arbiter.injected_since_settle = false;
        self.arbiter.resume_shown = false;
        let cause = self.arbiter.self_abort.take().unwrap_or(StopCause::User);
        self.cancel_deferred("the agent settled again before it went out", now, out);
        if !self.config.poke.enabled {
            self.explain_disabled_settle(&settle, out, now);
            return;
        }
        if aborted {
            self.settle_aborted(cause, now, out);
            return;
        }

        let loop_claim = self.evaluate_loop(&settle.tail, now, out);
        let (wake_handled, wake_claim) = self.evaluate_wake(now, out);
        if !wake_handled {
            self.close_episode_unless_orphaned(now);
        }
        let retry_claim = self.evaluate_retry(&settle.tail, now, out);

        let mut claims = [loop_claim, wake_claim, retry_claim].into_iter().flatten();
        if let Some(winner) = claims.next() {
            self.arbiter.settle_claimed = true;
            let winner_rule = match &winner {
                Claim::Inject(resume) => resume.rule(),
                Claim::Quiet { rule } => rule,
            };
            for loser in claims {
                if let Claim::Inject(resume) = loser {
                    self.record(
                        out,
                        now,
                        resume.rule(),
                        LedgerKind::Declined,
                        format!("{} was pre-empted by {winner_rule}", resume.describe()),
                        None,
                    );
                }
            }
            if winner.tells_agent_to_stop() && self.wake.take().is_some() {
                let reason =
                    "the post-compaction wake is dropped: the loop guard told the agent to stop".to_string();
                self.record(out, now, rule::POKE_WAKE, LedgerKind::Declined, reason, None);
            }
            if let Claim::Inject(resume) = winner {
                self.dispatch(resume, now, out);
            }
            return;
        }
        if self.wake.is_none() {
            self.evaluate_handoff(settle.is_idle, now, out);
        }
    }

    /// Fix B5/B6 and SAR-S2: the user's Esc (or pokeshell's own abort) ends the episode without a resume.
    fn settle_aborted(&mut self, cause: StopCause, now: Now, out: &mut Vec<Action>) {
        self.recovery.reset(self.session_id.as_deref());
        self.arbiter.settle_claimed = true;
        self.arbiter.stopped = Some(cause);
        let had_wake = self.wake.take().is_some();
        let who = cause.who();
        let reason = if had_wake {
            format!(
                "{who} stopped the run: the pending post-compaction resume is dropped; nothing resumes until you type"
            )
        } else {
            format!("{who} stopped the run: nothing resumes until you type")
        };
        self.record(out, now, rule::ARB_ABORTED, LedgerKind::Declined, reason, None);
    }

    /// When a resume may go out: the shared cooldown, and for pokes pi-poke's own.
    pub(super) fn resume_ready_at(&self, poke: bool) -> u64 {
        let global = self
            .arbiter
            .last_injection_mono
            .map_or(0, |at| at.saturating_add(self.config.global_cooldown_ms()));
        let own = match self.episode.last_poke_mono {
            Some(at) if poke => at.saturating_add(self.config.poke_cooldown_ms()),
            _ => 0,
        };
        global.max(own)
    }

    /// Sends the winner now, or parks it until the cooldown ends or the compaction is over.
    fn dispatch(&mut self, resume: Resume, now: Now, out: &mut Vec<Action>) {
        if let Some(cause) = self.arbiter.stopped {
            if resume == Resume::WakePoke {
                self.wake = None;
            }
            self.record(
                out,
                now,
                resume.rule(),
                LedgerKind::Declined,
                format!(
                    "{} held back: {} stopped the last run and you have not typed since",
                    resume.describe(),
                    cause.who()
                ),
                None,
            );
            return;
        }
        if !self.connected {
            self.record(
                out,
                now,
                resume.rule(),
                LedgerKind::Declined,
                format!("{} not sent: the bridge is not connected", resume.describe()),
                None,
            );
            return;
        }
        let ready_at = self.resume_ready_at(resume.is_poke());
        if self.compaction.active || now.mono_ms < ready_at {
            let reason = if self.compaction.active {
                format!("{} waits: a compaction is running", resume.describe())
            } else {
                format!(
                    "{} waits {}s for the cooldown between automatic messages",
                    resume.describe(),
                    (ready_at - now.mono_ms).div_ceil(1000)
                )
            };
            self.record(out, now, resume.rule(), LedgerKind::Declined, reason, None);
            self.arbiter.deferred = Some(Deferred {
                resume,
                due_mono: ready_at.max(now.mono_ms),
            });
            return;
        }
        self.commit_and_send(resume, now, out);
    }

    /// Tick: a parked resume goes out when its time has come (POKE-N4), unless something superseded it.
    pub(super) fn deferred_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        let Some(deferred) = &self.arbiter.deferred else {
            return;
        };
        if self.compaction.active || now.mono_ms < deferred.due_mono {
            return;
        }
        // Switching supervision off and losing the bridge both cancel a parked resume.
        if let Some(deferred) = self.arbiter.deferred.take() {
            self.commit_and_send(deferred.resume, now, out);
        }
    }

    pub(super) fn deferred_deadline(&self) -> Option<u64> {
        let deferred = self.arbiter.deferred.as_ref()?;
        if self.compaction.active {
            None
        } else {
            Some(deferred.due_mono)
        }
    }

    /// Drops a parked resume because something else took over (user input, a new run, a session change).
    pub(super) fn cancel_deferred(&mut self, why: &str, now: Now, out: &mut Vec<Action>) {
        if let Some(deferred) = self.arbiter.deferred.take() {
            self.record(
                out,
                now,
                deferred.resume.rule(),
                LedgerKind::Declined,
                format!("{} cancelled: {why}", deferred.resume.describe()),
                None,
            );
        }
    }

    /// Applies the winner's bookkeeping and sends it. Re-checks what may have changed while it waited.
    pub(super) fn commit_and_send(&mut self, resume: Resume, now: Now, out: &mut Vec<Action>) {
        let rule = resume.rule();
        let (custom_type, text, notify) = match &resume {
            Resume::WakePoke => {
                let Some(wake) = &self.wake else { return };
                if self.episode.pokes >= self.config.max_pokes() {
                    self.give_up_wake(now, out);
                    return;
                }
                let error = wake.error.clone().or_else(|| self.run.last_error.clone());
                let text = if wake.failed {
                    texts::failed_compaction_poke(error.as_deref())
                } else {
                    texts::compaction_poke(wake.tokens_before, error.as_deref())
                };
                let notify = (NotifyLevel::Info, texts::notify_wake_poke(wake.failed));
                self.count_poke(now);
                (texts::CT_POKE, text, Some(notify))
            }
            Resume::Orphan { tool_id } => {
                let Some(tool) = self.tools.iter_mut().find(|tool| &tool.id == tool_id) else {
                    return;
                };
                tool.poke_sent = true;
                let elapsed = now.mono_ms.saturating_sub(tool.start_mono);
                let text = texts::orphan_poke(&tool.name, (elapsed + 500) / 1000);
                let notify = (NotifyLevel::Info, texts::notify_orphan_poke(&tool.name));
                self.count_poke(now);
                (texts::CT_POKE, text, Some(notify))
            }
            Resume::Retry { reason } => {
                let Some((attempt, max)) = self.take_retry() else {
                    return;
                };
                let notify = (
                    NotifyLevel::Warning,
                    texts::notify_retry(reason.reason(), attempt, max),
                );
                (texts::CT_RETRY, texts::empty_retry(), Some(notify))
            }
            Resume::Loop {
                signature,
                tool,
                count,
                nudge,
                last,
            } => {
                self.commit_loop_nudge(signature, *nudge);
                let text = texts::loop_message(tool, *count, nudge.is_some(), *last);
                let notify = nudge.map(|_| {
                    (
                        NotifyLevel::Warning,
                        texts::notify_loop_nudge(tool, *count, *last),
                    )
                });
                (texts::CT_LOOP, text, notify)
            }
        };
        self.arbiter.last_injection_mono = Some(now.mono_ms);
        self.arbiter.injected_since_settle = true;
        self.arbiter.resume_shown = resume.is_poke();
        let deliver_as = self.auto_deliver_as();
        let send_id = self.send(
            out,
            custom_type,
            text.clone(),
            false,
            deliver_as,
            super::delivery::Sent::Resume { rule },
        );
        self.expect_outcome(rule, send_id, now);
        self.record(
            out,
            now,
            rule,
            LedgerKind::Action,
            format!("sent {}", resume.describe()),
            Some(text),
        );
        if let Some((level, text)) = notify {
            out.push(Action::Notify {
                level,
                text,
                desktop: true,
            });
        }
    }

    fn count_poke(&mut self, now: Now) {
        self.episode.pokes += 1;
        self.episode.last_poke_mono = Some(now.mono_ms);
    }

    /// While supervision is off nothing acts; say so where a rule would have acted.
    fn explain_disabled_settle(&mut self, settle: &Settle, out: &mut Vec<Action>, now: Now) {
        if settle.aborted {
            return;
        }
        if let Some(last) = last_visible(&settle.tail) {
            let failing_tool = last.role == Role::ToolResult && last.is_error;
            let stalled = if failing_tool {
                Some((rule::SAR_LOOP, "the run ended on a failed tool call"))
            } else if evaluate_empty(Some(last)).is_some() {
                Some((rule::SAR_RETRY, "the run ended without a reply"))
            } else {
                None
            };
            if let Some((stalled_rule, what)) = stalled {
                let reason = format!("{what}, but supervision is off");
                self.record(out, now, stalled_rule, LedgerKind::Declined, reason, None);
            }
        }
        let percent = self.context.and_then(|usage| usage.percent);
        if let Some(percent) = percent.filter(|percent| *percent >= self.config.handoff_percent()) {
            let reason = format!("context at {percent:.0}%, but supervision is off");
            self.record(out, now, rule::HO_AUTO, LedgerKind::Declined, reason, None);
        }
    }
}
