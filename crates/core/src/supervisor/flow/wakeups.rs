//! pi-wakeup's side of the supervisor [WAK-T1..T5]: the two tools the bridge forwards, each step
//! persisted as a session entry, re-arming when a session starts, and delivery when a wakeup is due.

use serde_json::{Value, json};

use crate::supervisor::Supervisor;
use crate::supervisor::action::{Action, NotifyLevel};
use crate::supervisor::delivery::Sent;
use crate::supervisor::event::CustomEntry;
use crate::supervisor::ledger::{LedgerKind, rule};
use crate::supervisor::texts;
use crate::supervisor::time::Now;
use crate::supervisor::wakeup::schedule::{clamp_delay, delivery_mode};
use crate::supervisor::wakeup::{CANCEL_TOOL, SCHEDULE_TOOL};

fn reply(call_id: String, text: String, is_error: bool, details: Value) -> Action {
    Action::ToolReply {
        call_id,
        text,
        is_error,
        details,
    }
}

impl Supervisor {
    pub(in crate::supervisor) fn on_tool_call(
        &mut self,
        call_id: String,
        name: &str,
        args: &Value,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        match name {
            SCHEDULE_TOOL => self.schedule_wakeup(call_id, args, now, out),
            CANCEL_TOOL => self.cancel_wakeup(call_id, args, now, out),
            other => out.push(reply(call_id, texts::unknown_tool(other), true, Value::Null)),
        }
    }

    /// WAK-T1.
    fn schedule_wakeup(&mut self, call_id: String, args: &Value, now: Now, out: &mut Vec<Action>) {
        if !self.config.poke.enabled {
            out.push(reply(call_id, texts::wakeups_switched_off(), true, Value::Null));
            return;
        }
        let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or_default();
        if prompt.trim().is_empty() {
            out.push(reply(call_id, texts::wakeup_needs_prompt(), true, Value::Null));
            return;
        }
        let (min, max) = self.config.wakeup_bounds();
        let delay = clamp_delay(args.get("delay_seconds").unwrap_or(&Value::Null), min, max);
        let reason = args.get("reason").and_then(Value::as_str).unwrap_or_default();
        let wakeup = self
            .wakeups
            .schedule(prompt, reason, delay, now.mono_ms, now.wall_ms);
        let id = wakeup.id;
        out.push(Action::AppendEntry {
            custom_type: texts::ENTRY_WAKEUP_SCHEDULED,
            data: json!({
                "id": id,
                "delaySeconds": delay,
                "reason": reason,
                "fireAtMs": wakeup.fire_at_wall,
                "prompt": wakeup.prompt,
            }),
        });
        let why = format!("the agent scheduled wakeup {id} in {delay}s");
        self.record(out, now, rule::WAK_SCHEDULE, LedgerKind::Action, why, None);
        let details = json!({ "id": id, "delaySeconds": delay });
        out.push(reply(
            call_id,
            texts::wakeup_scheduled(&id, delay, reason),
            false,
            details,
        ));
    }

    /// WAK-T2.
    fn cancel_wakeup(&mut self, call_id: String, args: &Value, now: Now, out: &mut Vec<Action>) {
        let id = args.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        let (text, details) = match id {
            Some(id) => {
                let existed = self.wakeups.cancel(id);
                if existed {
                    out.push(Action::AppendEntry {
                        custom_type: texts::ENTRY_WAKEUP_CANCELLED,
                        data: json!({ "id": id }),
                    });
                    let reason = format!("the agent cancelled wakeup {id}");
                    self.record(out, now, rule::WAK_CANCEL, LedgerKind::Action, reason, None);
                }
                (
                    texts::wakeup_cancelled(id, existed),
                    json!({ "id": id, "cancelled": existed }),
                )
            }
            None => {
                let count = self.wakeups.cancel_all();
                if count > 0 {
                    out.push(Action::AppendEntry {
                        custom_type: texts::ENTRY_WAKEUP_CANCELLED,
                        data: json!({ "all": true, "count": count }),
                    });
                    let reason = format!("the agent cancelled all {count} pending wakeups");
                    self.record(out, now, rule::WAK_CANCEL, LedgerKind::Action, reason, None);
                }
                (texts::wakeups_cancelled(count), json!({ "cancelled": count }))
            }
        };
        out.push(reply(call_id, text, false, details));
    }

    /// WAK-T2 asked by the user (`/wakeups cancel ID`): the same entry as the tool's, and a notice.
    pub(in crate::supervisor) fn user_cancel_wakeup(&mut self, id: &str, now: Now, out: &mut Vec<Action>) {
        let existed = self.wakeups.cancel(id);
        if existed {
            out.push(Action::AppendEntry {
                custom_type: texts::ENTRY_WAKEUP_CANCELLED,
                data: json!({ "id": id }),
            });
            let reason = format!("you cancelled wakeup {id}");
            self.record(out, now, rule::WAK_CANCEL, LedgerKind::Action, reason, None);
        }
        out.push(Action::Notify {
            level: if existed {
                NotifyLevel::Info
            } else {
                NotifyLevel::Warning
            },
            text: texts::wakeup_cancelled(id, existed),
            desktop: false,
        });
    }

    /// WAK-T5: rebuilds the pending wakeups from the session's entries; one already due fires at the
    /// next tick.
    pub(in crate::supervisor) fn restore_wakeups(
        &mut self,
        entries: &[CustomEntry],
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let (skipped, ids) = self.wakeups.restore(entries, now.mono_ms, now.wall_ms);
        for problem in skipped {
            self.record(out, now, rule::WAK_RESTORE, LedgerKind::Declined, problem, None);
        }
        if !ids.is_empty() {
            let reason = format!("re-armed pending wakeups from the session: {}", ids.join(", "));
            self.record(out, now, rule::WAK_RESTORE, LedgerKind::Action, reason, None);
        }
    }

    /// Why due wakeups do not fire now, if they wait.
    pub(in crate::supervisor) fn wakeups_held(&self) -> Option<&'static str> {
        // WAK-ESC: the user's Esc holds wakeups too, until they type or poke by hand.
        self.planned_message_held("the agent was stopped (Esc); it waits until you type or poke")
    }

    /// Why a message pokeshell planned for later (a wakeup, the end of a provider wait) cannot go
    /// out now, if it cannot; `stopped` is how the user's Esc is worded for it.
    pub(in crate::supervisor) fn planned_message_held(&self, stopped: &'static str) -> Option<&'static str> {
        if !self.config.poke.enabled {
            Some("supervision is off")
        } else if self.compaction.active() {
            Some("a compaction is running")
        } else if !self.connected {
            Some("the bridge is not connected")
        } else if let Some(why) = self.guard_holds() {
            Some(why)
        } else if self.arbiter.stopped().is_some() {
            Some(stopped)
        } else if self.arbiter.injected_since_settle() {
            // ARB-ONE: one message per settle; this one waits for the agent's next settle.
            Some("another message went to the agent; it waits for the next settle")
        } else {
            None
        }
    }

    /// WAK-T3: deliver the first due wakeup once, removed before it is sent. Returns whether one went
    /// out.
    pub(in crate::supervisor) fn wakeup_tick(&mut self, now: Now, out: &mut Vec<Action>) -> bool {
        if self.wakeups_held().is_some() {
            return false;
        }
        let due = self.wakeups.take_due(now.mono_ms);
        let fired = due.is_some();
        if let Some(wakeup) = due {
            let text = texts::wakeup_message(&wakeup.prompt, &wakeup.reason);
            let deliver_as = delivery_mode(self.run.idle());
            let sent = Sent::Wakeup {
                id: wakeup.id.clone(),
                reason: wakeup.reason.clone(),
            };
            self.send(out, texts::CT_WAKEUP, text.clone(), true, deliver_as, sent);
            // The agent's own wait: what it repeats across it is a poll (GUARD-P1).
            self.guard.waited();
            let late_s = now.wall_ms.saturating_sub(wakeup.fire_at_wall) / 1000;
            let when = if late_s > 1 {
                format!(" ({late_s}s late: nothing was running then)")
            } else {
                String::new()
            };
            let reason = format!("wakeup {} fired{when}", wakeup.id);
            self.record(out, now, rule::WAK_FIRE, LedgerKind::Action, reason, Some(text));
            out.push(Action::Notify {
                level: NotifyLevel::Info,
                text: texts::notify_wakeup_fired(&wakeup.id, &wakeup.reason),
                desktop: true,
            });
        }
        fired
    }

    /// The next due time; `None` while wakeups are held (the event that lifts the hold calls for a tick).
    pub(in crate::supervisor) fn wakeup_deadline(&self) -> Option<u64> {
        if self.wakeups_held().is_some() {
            return None;
        }
        self.wakeups.next_due()
    }
}
