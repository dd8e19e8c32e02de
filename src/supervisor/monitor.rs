//! pi-poke's long-tool monitor (spec §1.4): a silent watch past the threshold, and the optional
//! auto-abort. Tools are tracked even while supervision is off, so turning it on watches them at once
//! (fix B4).

use super::Supervisor;
use super::action::{Action, NotifyLevel};
use super::ledger::{LedgerKind, rule};
use super::state::StopCause;
use super::texts;
use super::time::Now;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunningTool {
    pub id: String,
    pub name: String,
    pub args_preview: String,
    pub start_mono: u64,
    pub start_wall: u64,
    /// Past the threshold and seen by the monitor (POKE-M2 latch).
    pub breached: bool,
    /// An orphan poke went out for it (POKE-O1 latch).
    pub poke_sent: bool,
    /// The orphan poke was refused by the anti-loop maximum (recorded once).
    pub orphan_declined: bool,
}

impl Supervisor {
    /// POKE-E3.
    pub(super) fn on_tool_start(&mut self, id: String, name: String, args_preview: String, now: Now) {
        let tool = RunningTool {
            id,
            name,
            args_preview,
            start_mono: now.mono_ms,
            start_wall: now.wall_ms,
            breached: false,
            poke_sent: false,
            orphan_declined: false,
        };
        match self.tools.iter_mut().find(|existing| existing.id == tool.id) {
            Some(existing) => *existing = tool,
            None => self.tools.push(tool),
        }
        self.outcome_saw_tool();
    }

    /// POKE-E4: a tool that ends, even late, is never reported.
    pub(super) fn on_tool_end(&mut self, id: &str) {
        self.tools.retain(|tool| tool.id != id);
    }

    pub(super) fn overdue_at(&self, start_mono: u64) -> u64 {
        start_mono.saturating_add(self.config.threshold_ms())
    }

    /// POKE-M2, POKE-M3.
    pub(super) fn monitor_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if !self.config.poke.enabled {
            return;
        }
        let threshold_ms = self.config.threshold_ms();
        let threshold_s = self.config.poke.threshold_seconds;
        let abort = self.config.poke.auto_abort && self.connected;
        let mut overdue = Vec::new();
        for tool in &mut self.tools {
            if tool.breached || now.mono_ms.saturating_sub(tool.start_mono) < threshold_ms {
                continue;
            }
            tool.breached = true;
            let elapsed_s = (now.mono_ms - tool.start_mono + 500) / 1000;
            overdue.push((tool.id.clone(), tool.name.clone(), elapsed_s));
        }
        let abort_now = abort && !overdue.is_empty();
        for (id, name, elapsed_s) in overdue {
            if abort {
                self.tools.retain(|tool| tool.id != id);
                self.record(
                    out,
                    now,
                    rule::POKE_AUTO_ABORT,
                    LedgerKind::Action,
                    format!("aborted the agent: {name} ran {elapsed_s}s, past the {threshold_s}s threshold"),
                    None,
                );
                out.push(Action::Notify {
                    level: NotifyLevel::Error,
                    text: texts::notify_auto_abort(&name, threshold_s),
                    desktop: true,
                });
            } else {
                let why = if self.config.poke.auto_abort {
                    "the bridge is not connected"
                } else {
                    "auto-abort is off"
                };
                let reason =
                    format!("{name} passed the {threshold_s}s threshold; watching without acting ({why})");
                self.record(out, now, rule::POKE_BREACH, LedgerKind::Declined, reason, None);
            }
        }
        // ctx.abort() stops the whole agent: one abort covers every overdue tool of this tick.
        if abort_now {
            out.push(Action::Abort);
            self.arbiter.self_abort = Some(StopCause::AutoAbort);
        }
    }

    pub(super) fn monitor_deadline(&self) -> Option<u64> {
        if !self.config.poke.enabled {
            return None;
        }
        self.tools
            .iter()
            .filter(|tool| !tool.breached)
            .map(|tool| self.overdue_at(tool.start_mono))
            .min()
    }
}
