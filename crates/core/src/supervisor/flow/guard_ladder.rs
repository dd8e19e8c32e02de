//! The no-progress rails and their ladder [GUARD-L1..L4, GUARD-P1, GUARD-E1..E3]: each finished tool
//! call is compared with the ones before it (inside the run, as it happens), each settle's final reply
//! with the last ones, and each poke with what came of it. A repetition that reaches its threshold
//! takes the ladder's next step: a message, a handoff to a fresh context, then stop and ask.

use serde_json::Value;

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, DeliverAs, NotifyLevel};
use crate::supervisor::arbiter::{Claim, Resume, StopCause};
use crate::supervisor::delivery::Sent;
use crate::supervisor::event::ToolOutcome;
use crate::supervisor::flow::settle::Settle;
use crate::supervisor::guard::Started;
use crate::supervisor::guard::halt::{Allowance, HaltCause};
use crate::supervisor::guard::ladder::{Repeat, Step};
use crate::supervisor::guard::repeat::{Call, Found};
use crate::supervisor::guard::texts;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::message::{Role, last_visible};
use crate::supervisor::recovery::signature::tool_signature;
use crate::supervisor::time::Now;
use crate::supervisor::wakeup::SCHEDULE_TOOL;

fn repeat_of(found: Found) -> Repeat {
    match found {
        Found::Same { call, count } => Repeat::SameCall { call, count },
        Found::Alternating { a, b, cycles } => Repeat::Alternating { a, b, cycles },
    }
}

impl Supervisor {
    /// A tool call started: kept for its end.
    pub(in crate::supervisor) fn guard_tool_started(
        &mut self,
        id: &str,
        name: &str,
        args: &Value,
        preview: &str,
        now: Now,
    ) {
        let label = if preview.is_empty() {
            name.to_string()
        } else {
            format!("{name} {preview}")
        };
        self.guard.started(Started {
            id: id.to_string(),
            name: name.to_string(),
            signature: tool_signature(name, args),
            label,
            start_mono: now.mono_ms,
        });
    }

    /// A tool call ended: compared with the ones before it (GUARD-L1, GUARD-L2, GUARD-P1).
    pub(in crate::supervisor) fn guard_tool_ended(
        &mut self,
        id: &str,
        outcome: &ToolOutcome,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let Some(started) = self.guard.ended(id) else {
            return;
        };
        let config = &self.config.guard;
        let ran_ms = outcome
            .duration_ms
            .unwrap_or_else(|| now.mono_ms.saturating_sub(started.start_mono));
        let waited = (config.poll_wait_seconds > 0 && ran_ms >= config.poll_wait_ms())
            || started.name == SCHEDULE_TOOL;
        let mut call = Call::new(
            &started.signature,
            outcome.result_digest.as_deref(),
            started.label,
            waited,
        );
        if outcome.is_error {
            call = call.failed();
        }
        let new = self.guard.calls.push(call);
        self.guard.pokes.call(new);
        let (same, alternating) = (config.same_call_repeats, config.alternating_repeats);
        if let Some(found) = self.guard.calls.found(same, alternating) {
            self.climb_in_run(repeat_of(found), now, out);
        } else if let Some(found) = self.guard.calls.poll(same, alternating) {
            let rule = rule::GUARD_POLL;
            let reason = format!(
                "{}, but a wait came between the repeats: a poll, left alone",
                repeat_of(found).evidence()
            );
            self.record(out, now, rule, LedgerKind::Declined, reason, None);
        }
    }

    /// Why the ladder cannot act now, if it cannot.
    fn ladder_blocked(&self) -> Option<&'static str> {
        if !self.config.poke.enabled {
            Some("supervision is off")
        } else if !self.connected {
            Some("the bridge is not connected")
        } else if self.compaction.active() {
            Some("a compaction is running")
        } else if self.arbiter.stopped().is_some() {
            Some("the run was stopped")
        } else {
            self.guard_holds()
        }
    }

    /// A repetition found inside a run, at a tool call's end.
    fn climb_in_run(&mut self, repeat: Repeat, now: Now, out: &mut Vec<Action>) {
        if let Some(why) = self.ladder_blocked() {
            let reason = format!("{}, but {why}", repeat.evidence());
            self.record(out, now, repeat.rule(), LedgerKind::Declined, reason, None);
            self.guard.restart_counts();
            return;
        }
        let cooldown_ends = self.arbiter.cooldown_ends(self.config.global_cooldown_ms());
        if self.guard.ladder.taken() == 0 && now.mono_ms < cooldown_ends {
            // The message waits: the repetition is found again at the next call's end.
            let wait_s = (cooldown_ends - now.mono_ms).div_ceil(1000);
            let reason = format!(
                "{}: the message waits {wait_s}s for the cooldown between automatic messages",
                repeat.evidence()
            );
            self.record(out, now, repeat.rule(), LedgerKind::Declined, reason, None);
            return;
        }
        match self.guard.ladder.climb() {
            Step::Message => {
                self.guard.restart_counts();
                self.arbiter.injected(now.mono_ms, false);
                self.send_ladder_message(repeat, false, DeliverAs::Steer, now, out);
            }
            Step::Handoff => self.ladder_handoff(repeat, now, out),
            Step::Stop => self.ladder_stop(repeat, now, out),
        }
    }

    /// GUARD-E1 (or the message after GUARD-E2's handoff): sends it and says so.
    pub(in crate::supervisor) fn send_ladder_message(
        &mut self,
        repeat: Repeat,
        after_handoff: bool,
        deliver_as: DeliverAs,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let failed = after_handoff && std::mem::take(&mut self.guard.handoff_failed);
        let (rule, text) = if failed {
            (rule::GUARD_STEP_HANDOFF, texts::after_failed_handoff(&repeat))
        } else if after_handoff {
            (rule::GUARD_STEP_HANDOFF, texts::after_handoff(&repeat))
        } else {
            (rule::GUARD_STEP_MESSAGE, texts::ladder_message(&repeat))
        };
        self.guard.pokes.poked();
        let send_id = self.send(
            out,
            texts::CT_GUARD,
            text.clone(),
            false,
            deliver_as,
            Sent::Resume { rule },
        );
        self.outcomes
            .expect(rule, send_id, self.run.awaiting_start(), now.mono_ms);
        let reason = if failed {
            format!(
                "{} (rung 2 of 3): the handoff failed, so the same context is asked to take another way",
                repeat.evidence()
            )
        } else if after_handoff {
            format!(
                "{} (rung 2 of 3): the fresh context is asked to take another way",
                repeat.evidence()
            )
        } else {
            format!(
                "no progress, {} (rung 1 of 3, {}): asked the agent for another approach or a short report",
                repeat.evidence(),
                repeat.rule()
            )
        };
        self.guard.last = Some((rule, repeat.evidence()));
        self.record(out, now, rule, LedgerKind::Action, reason, Some(text));
        if !after_handoff {
            out.push(Action::Notify {
                level: NotifyLevel::Warning,
                text: texts::notify_ladder_message(&repeat),
                desktop: true,
            });
        }
    }

    /// GUARD-E2: a handoff to a fresh context; its end sends the message that restarts the agent.
    fn ladder_handoff(&mut self, repeat: Repeat, now: Now, out: &mut Vec<Action>) {
        self.guard.restart_counts();
        if self.compaction.busy() {
            let reason = format!(
                "{}: the handoff waits, a compaction is already running",
                repeat.evidence()
            );
            self.record(
                out,
                now,
                rule::GUARD_STEP_HANDOFF,
                LedgerKind::Declined,
                reason,
                None,
            );
            return;
        }
        if !self.run.idle() {
            // ctx.compact() aborts a busy agent first; that aborted settle is the handoff's doing.
            self.arbiter.self_aborted(StopCause::Handoff);
        }
        let focus = texts::handoff_focus(&repeat);
        let reason = format!(
            "still no progress, {} (rung 2 of 3, {}): handing off to a fresh context",
            repeat.evidence(),
            repeat.rule()
        );
        self.guard.last = Some((rule::GUARD_STEP_HANDOFF, repeat.evidence()));
        out.push(Action::Notify {
            level: NotifyLevel::Warning,
            text: texts::notify_ladder_handoff(&repeat),
            desktop: true,
        });
        self.guard.handoff = Some(repeat);
        self.start_handoff(Some(focus), now, out);
        self.record(
            out,
            now,
            rule::GUARD_STEP_HANDOFF,
            LedgerKind::Action,
            reason,
            None,
        );
    }

    /// GUARD-E3: stop and ask the person.
    fn ladder_stop(&mut self, repeat: Repeat, now: Now, out: &mut Vec<Action>) {
        self.guard.restart_counts();
        self.halt(HaltCause::Runaway(repeat), Allowance::GoOn, now, out);
    }

    /// GUARD-E2: the handoff's compaction ended; the fresh context is asked to take another way.
    pub(in crate::supervisor) fn guard_handoff_done(
        &mut self,
        failed: bool,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let Some(repeat) = self.guard.handoff.take() else {
            return;
        };
        self.guard.handoff_failed = failed;
        if self.arbiter.stopped() == Some(StopCause::Handoff) {
            // The handoff stopped the run; the ladder resumes it.
            self.arbiter.lift_stop();
        }
        self.dispatch(
            Resume::Guard {
                repeat,
                after_handoff: true,
            },
            now,
            out,
        );
    }

    /// At a settle: the same reply (GUARD-L3) and pokes that brought nothing (GUARD-L4). A repetition
    /// that reached its threshold claims the settle with the ladder's next step.
    pub(in crate::supervisor) fn evaluate_guard(
        &mut self,
        settle: &Settle,
        now: Now,
        out: &mut Vec<Action>,
    ) -> Option<Claim> {
        let config = &self.config.guard;
        let (reply_threshold, poke_threshold) = (config.same_reply_repeats, config.idle_pokes);
        let idle_pokes = self.guard.pokes.settled();
        let final_reply = last_visible(&settle.tail)
            .filter(|m| m.role == Role::Assistant && m.has_text() && !m.has_tool_call())
            .and(settle.final_text.as_deref());
        let replies = final_reply.and_then(|text| self.guard.replies.reply(text));
        let repeat = match (replies, idle_pokes) {
            (Some((quote, count)), _) if reply_threshold > 0 && count >= reply_threshold => {
                Repeat::SameReply { quote, count }
            }
            (_, Some(count)) if poke_threshold > 0 && count >= poke_threshold => Repeat::IdlePokes { count },
            _ => return None,
        };
        if let Some(why) = self.ladder_blocked() {
            let reason = format!("{}, but {why}", repeat.evidence());
            self.record(out, now, repeat.rule(), LedgerKind::Declined, reason, None);
            self.guard.restart_counts();
            return None;
        }
        match self.guard.ladder.climb() {
            Step::Message => {
                self.guard.restart_counts();
                Some(Claim::Inject(Resume::Guard {
                    repeat,
                    after_handoff: false,
                }))
            }
            Step::Handoff => {
                self.ladder_handoff(repeat, now, out);
                Some(Claim::Quiet {
                    rule: rule::GUARD_STEP_HANDOFF,
                })
            }
            Step::Stop => {
                self.ladder_stop(repeat, now, out);
                Some(Claim::Quiet {
                    rule: rule::GUARD_STEP_STOP,
                })
            }
        }
    }
}
