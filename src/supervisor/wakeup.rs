//! pi-wakeup (spec §3): the model schedules its own wakeups through two tools the bridge forwards.
//! pokeshell keeps the timers, persists each step as a session entry, re-arms pending wakeups when a
//! session starts, and delivers busy-gated, holding them while a compaction runs.

pub mod restore;
pub mod schedule;

use serde_json::{Value, json};

use self::schedule::{clamp_delay, delivery_mode};
use super::Supervisor;
use super::action::{Action, NotifyLevel};
use super::delivery::Sent;
use super::event::CustomEntry;
use super::ledger::{LedgerKind, rule};
use super::texts;
use super::time::Now;

pub const SCHEDULE_TOOL: &str = "schedule_wakeup";
pub const CANCEL_TOOL: &str = "cancel_wakeup";

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PendingWakeup {
    pub id: String,
    pub prompt: String,
    pub reason: String,
    pub fire_at_wall: u64,
    pub due_mono: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Wakeups {
    pub pending: Vec<PendingWakeup>,
    /// The last `wake-N` number handed out.
    pub counter: u64,
}

fn reply(call_id: String, text: String, is_error: bool, details: Value) -> Action {
    Action::ToolReply {
        call_id,
        text,
        is_error,
        details,
    }
}

impl Supervisor {
    pub(super) fn on_tool_call(
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
        let reason = args
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.wakeups.counter += 1;
        let id = format!("wake-{}", self.wakeups.counter);
        let delay_ms = delay * 1000;
        let wakeup = PendingWakeup {
            id: id.clone(),
            prompt: prompt.to_string(),
            reason: reason.clone(),
            fire_at_wall: now.wall_ms + delay_ms,
            due_mono: now.mono_ms + delay_ms,
        };
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
        self.wakeups.pending.push(wakeup);
        self.record(
            out,
            now,
            rule::WAK_SCHEDULE,
            LedgerKind::Action,
            format!("the agent scheduled wakeup {id} in {delay}s"),
            None,
        );
        let details = json!({ "id": id, "delaySeconds": delay });
        out.push(reply(
            call_id,
            texts::wakeup_scheduled(&id, delay, &reason),
            false,
            details,
        ));
    }

    /// WAK-T2.
    fn cancel_wakeup(&mut self, call_id: String, args: &Value, now: Now, out: &mut Vec<Action>) {
        let id = args.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        let (text, details) = match id {
            Some(id) => {
                let existed = self.wakeups.pending.iter().any(|wakeup| wakeup.id == id);
                self.wakeups.pending.retain(|wakeup| wakeup.id != id);
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
                let count = self.wakeups.pending.len();
                self.wakeups.pending.clear();
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

    /// Rebuilds the pending wakeups from the session's entries; one already due fires at the next tick.
    pub(super) fn restore_wakeups(&mut self, entries: &[CustomEntry], now: Now, out: &mut Vec<Action>) {
        let restored = restore::restore(entries);
        self.wakeups.counter = restored.highest_number;
        self.wakeups.pending = restored
            .pending
            .into_iter()
            .map(|wakeup| PendingWakeup {
                due_mono: now.mono_ms + wakeup.fire_at_wall.saturating_sub(now.wall_ms),
                id: wakeup.id,
                prompt: wakeup.prompt,
                reason: wakeup.reason,
                fire_at_wall: wakeup.fire_at_wall,
            })
            .collect();
        for problem in restored.skipped {
            self.record(out, now, rule::WAK_RESTORE, LedgerKind::Declined, problem, None);
        }
        let ids: Vec<String> = self
            .wakeups
            .pending
            .iter()
            .map(|wakeup| wakeup.id.clone())
            .collect();
        if !ids.is_empty() {
            let reason = format!("re-armed pending wakeups from the session: {}", ids.join(", "));
            self.record(out, now, rule::WAK_RESTORE, LedgerKind::Action, reason, None);
        }
    }

    /// Wakeups wait while supervision is off, while a compaction runs and while the bridge is away.
    pub(super) fn wakeups_may_fire(&self) -> bool {
        self.config.poke.enabled && !self.compaction.active && self.connected
    }

    /// WAK-T3: deliver every due wakeup once, removed before it is sent. Returns whether any went out.
    pub(super) fn wakeup_tick(&mut self, now: Now, out: &mut Vec<Action>) -> bool {
        if !self.wakeups_may_fire() {
            return false;
        }
        let (due, later): (Vec<_>, Vec<_>) = self
            .wakeups
            .pending
            .drain(..)
            .partition(|wakeup| wakeup.due_mono <= now.mono_ms);
        self.wakeups.pending = later;
        let fired = !due.is_empty();
        for wakeup in due {
            let text = texts::wakeup_message(&wakeup.prompt, &wakeup.reason);
            let deliver_as = delivery_mode(self.run.idle());
            let sent = Sent::Wakeup {
                id: wakeup.id.clone(),
                reason: wakeup.reason.clone(),
            };
            self.send(out, texts::CT_WAKEUP, text.clone(), true, deliver_as, sent);
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

    pub(super) fn wakeup_deadline(&self) -> Option<u64> {
        if !self.wakeups_may_fire() {
            return None;
        }
        self.wakeups.pending.iter().map(|wakeup| wakeup.due_mono).min()
    }

    /// A wakeup due within `margin_ms`: an automatic handoff would abort its run, so it waits.
    pub(super) fn wakeup_due_within(&self, now: Now, margin_ms: u64) -> bool {
        self.wakeups
            .pending
            .iter()
            .any(|wakeup| wakeup.due_mono <= now.mono_ms + margin_ms)
    }
}
