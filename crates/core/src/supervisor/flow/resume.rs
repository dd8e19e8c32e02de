//! Sending a resume message: now, or parked until the cooldown ends or the compaction is over
//! (POKE-N3, fix B7); and every message's way to pi. Automatic messages are hidden custom messages that
//! start a turn when pi is idle and queue as a follow-up when it is busy; the bridge's reply to each
//! send comes back as `SendResult`.

use serde_json::json;

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, DeliverAs, NotifyLevel};
use crate::supervisor::arbiter::Resume;
use crate::supervisor::delivery::Sent;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::texts;
use crate::supervisor::time::Now;

impl Supervisor {
    /// When a resume may go out: the shared cooldown, and for pokes pi-poke's own.
    pub(in crate::supervisor) fn resume_ready_at(&self, poke: bool) -> u64 {
        let global = self.arbiter.cooldown_ends(self.config.global_cooldown_ms());
        let own = match self.post_compact.last_poke_mono() {
            Some(at) if poke => at.saturating_add(self.config.poke_cooldown_ms()),
            _ => 0,
        };
        global.max(own)
    }

    /// Sends the winner now, or parks it until the cooldown ends or the compaction is over.
    pub(in crate::supervisor) fn dispatch(&mut self, resume: Resume, now: Now, out: &mut Vec<Action>) {
        if let Some(why) = self.guard_holds() {
            let reason = format!("{} held back: {why}", resume.describe());
            self.record(out, now, resume.rule(), LedgerKind::Declined, reason, None);
            return;
        }
        if let Some(cause) = self.arbiter.stopped() {
            if resume == Resume::WakePoke {
                self.post_compact.drop_wake();
            }
            let reason = format!(
                "{} held back: {} stopped the last run and you have not typed since",
                resume.describe(),
                cause.who()
            );
            self.record(out, now, resume.rule(), LedgerKind::Declined, reason, None);
            return;
        }
        if !self.connected {
            let reason = format!("{} not sent: the bridge is not connected", resume.describe());
            self.record(out, now, resume.rule(), LedgerKind::Declined, reason, None);
            return;
        }
        let ready_at = self.resume_ready_at(resume.is_poke());
        if self.compaction.active() || now.mono_ms < ready_at {
            let reason = if self.compaction.active() {
                format!("{} waits: a compaction is running", resume.describe())
            } else {
                format!(
                    "{} waits {}s for the cooldown between automatic messages",
                    resume.describe(),
                    (ready_at - now.mono_ms).div_ceil(1000)
                )
            };
            self.record(out, now, resume.rule(), LedgerKind::Declined, reason, None);
            self.arbiter.park(resume, ready_at.max(now.mono_ms));
            return;
        }
        self.commit_and_send(resume, now, out);
    }

    /// Tick: a parked resume goes out when its time has come (POKE-N4), unless something superseded it.
    pub(in crate::supervisor) fn deferred_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if self.deferred_deadline().is_none_or(|due| now.mono_ms < due) {
            return;
        }
        // ARB-ONE: another message went out since the settle that chose this one.
        if self.arbiter.injected_since_settle() {
            self.cancel_deferred("another message went to the agent since it settled", now, out);
            return;
        }
        // Switching supervision off and losing the bridge both cancel a parked resume.
        if let Some(deferred) = self.arbiter.unpark() {
            self.commit_and_send(deferred.resume, now, out);
        }
    }

    pub(in crate::supervisor) fn deferred_deadline(&self) -> Option<u64> {
        let deferred = self.arbiter.parked()?;
        if self.compaction.active() {
            None
        } else {
            Some(deferred.due_mono)
        }
    }

    /// A resume that came due while a guard rail holds everything: recorded, not sent.
    fn cancel_deferred_resume(&mut self, resume: Resume, now: Now, out: &mut Vec<Action>) {
        let why = self.guard_holds().unwrap_or("a guard rail holds it");
        let reason = format!("{} cancelled: {why}", resume.describe());
        self.record(out, now, resume.rule(), LedgerKind::Declined, reason, None);
    }

    /// Drops a parked resume because something else took over (user input, a new run, a session change).
    pub(in crate::supervisor) fn cancel_deferred(&mut self, why: &str, now: Now, out: &mut Vec<Action>) {
        if let Some(deferred) = self.arbiter.unpark() {
            let reason = format!("{} cancelled: {why}", deferred.resume.describe());
            self.record(
                out,
                now,
                deferred.resume.rule(),
                LedgerKind::Declined,
                reason,
                None,
            );
        }
    }

    /// Applies the winner's bookkeeping and sends it. Re-checks what may have changed while it waited.
    pub(in crate::supervisor) fn commit_and_send(&mut self, resume: Resume, now: Now, out: &mut Vec<Action>) {
        if self.guard_holds().is_some() {
            self.cancel_deferred_resume(resume, now, out);
            return;
        }
        if let Resume::Guard {
            repeat,
            after_handoff,
        } = resume
        {
            self.arbiter.injected(now.mono_ms, false);
            let deliver_as = self.auto_deliver_as();
            self.send_ladder_message(repeat, after_handoff, deliver_as, now, out);
            return;
        }
        let rule = resume.rule();
        let (custom_type, text, notify) = match &resume {
            Resume::WakePoke => {
                if !self.post_compact.armed() {
                    return;
                }
                if self.post_compact.pokes() >= self.config.max_pokes() {
                    self.post_compact.drop_wake();
                    self.announce_wake_give_up(now, out);
                    return;
                }
                let Some((text, failed)) = self.post_compact.poke_text(self.run.last_error()) else {
                    return;
                };
                self.post_compact.count_poke(now.mono_ms);
                let notify = (NotifyLevel::Info, texts::notify_wake_poke(failed));
                (texts::CT_POKE, text, Some(notify))
            }
            Resume::Orphan { tool_id } => {
                let Some((name, elapsed_s)) = self.tools.poke_orphan(tool_id, now.mono_ms) else {
                    return;
                };
                let text = texts::orphan_poke(&name, elapsed_s);
                let notify = (NotifyLevel::Info, texts::notify_orphan_poke(&name));
                self.post_compact.count_poke(now.mono_ms);
                (texts::CT_POKE, text, Some(notify))
            }
            Resume::Retry { reason } => {
                let max = self.config.recovery.max_retries;
                let Some((attempt, max)) = self.recovery.take_retry(self.session_id.as_deref(), max) else {
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
                if let Some(number) = nudge {
                    self.recovery
                        .store_nudge(self.session_id.as_deref(), signature, *number);
                }
                let text = texts::loop_message(tool, *count, nudge.is_some(), *last);
                let notify = nudge.map(|_| {
                    (
                        NotifyLevel::Warning,
                        texts::notify_loop_nudge(tool, *count, *last),
                    )
                });
                (texts::CT_LOOP, text, notify)
            }
            Resume::Restart { reason } => {
                let notify = (NotifyLevel::Info, texts::notify_restart_resume());
                (texts::CT_POKE, texts::restart_poke(reason), Some(notify))
            }
            Resume::Stall { kind, seconds } => {
                self.stall.count_resume();
                let stream = *kind == crate::supervisor::stall::StallKind::Stream;
                let notify = (NotifyLevel::Info, texts::notify_stall_resume());
                (
                    texts::CT_POKE,
                    texts::stall_resume(stream, *seconds),
                    Some(notify),
                )
            }
            Resume::Guard { .. } => return,
            Resume::Promise { step, .. } => {
                let max = self.config.recovery.max_promise_pokes;
                if !self.config.recovery.promise_poke || self.promise.pokes() >= max {
                    return;
                }
                self.promise.count_poke();
                let notify = (NotifyLevel::Info, texts::notify_promise_poke());
                (texts::CT_PROMISE, texts::promise_poke(step), Some(notify))
            }
        };
        let shown = resume.is_poke() || matches!(resume, Resume::Stall { .. } | Resume::Promise { .. });
        self.arbiter.injected(now.mono_ms, shown);
        let deliver_as = self.auto_deliver_as();
        let send_id = self.send(
            out,
            custom_type,
            text.clone(),
            false,
            deliver_as,
            Sent::Resume { rule },
        );
        self.outcomes
            .expect(rule, send_id, self.run.awaiting_start(), now.mono_ms);
        // GUARD-L4 judges what comes of pokeshell's own pokes; the retry and the loop guard are
        // bounded on their own and left out.
        if !matches!(resume, Resume::Retry { .. } | Resume::Loop { .. }) {
            self.guard.pokes.poked();
        }
        let reason = format!("sent {}", resume.describe());
        self.record(out, now, rule, LedgerKind::Action, reason, Some(text));
        if let Some((level, text)) = notify {
            out.push(Action::Notify {
                level,
                text,
                desktop: true,
            });
        }
    }

    /// WAK-P3 for every automatic message: steer when idle (it starts a turn), follow-up when busy or
    /// unsure (safe either way).
    pub(in crate::supervisor) fn auto_deliver_as(&self) -> DeliverAs {
        if self.run.idle() {
            DeliverAs::Steer
        } else {
            DeliverAs::FollowUp
        }
    }

    /// Emits a `SendMessage` that starts a turn; returns its id.
    pub(in crate::supervisor) fn send(
        &mut self,
        out: &mut Vec<Action>,
        custom_type: &'static str,
        text: String,
        display: bool,
        deliver_as: DeliverAs,
        sent: Sent,
    ) -> u64 {
        self.run.message_sent();
        self.arbiter.sent();
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

    pub(in crate::supervisor) fn on_send_result(
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
        self.run.message_refused();
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
                self.outcomes.forget(send_id);
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
