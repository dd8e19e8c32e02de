//! The live lines of the status overlay (prefix+i): what the session and the supervisor know now.

use super::Session;
use super::view::BridgeStatus;
use crate::format::duration;
use crate::supervisor::{AgentState, Now};
use crate::ui::status_overlay::LiveLine;

impl Session {
    /// The live state for the status overlay (prefix+i).
    pub fn live_lines(&self, now: Now) -> Vec<LiveLine> {
        let view = self.supervisor_view(now);
        let bridge = match &self.pi.status {
            BridgeStatus::NotUsed => "not used (the hosted program is not pi)".to_string(),
            BridgeStatus::Waiting => "waiting for pi".to_string(),
            BridgeStatus::Connected => match self.pi.last_heard_ms {
                Some(at) => format!(
                    "connected, last heard {} ago",
                    duration(now.mono_ms.saturating_sub(at))
                ),
                None => "connected".to_string(),
            },
            BridgeStatus::Disconnected(why) => format!("not connected: {why}"),
        };
        let agent = match view.agent {
            AgentState::Idle => "idle",
            AgentState::Running => "running",
            AgentState::Compacting => "compacting",
            AgentState::Unknown => "unknown",
        };
        let tools = if view.tools.is_empty() {
            "none".to_string()
        } else {
            view.tools
                .iter()
                .map(|t| format!("{} {}", t.name, duration(t.elapsed_ms)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let wake = match &view.wake {
            None => "none".to_string(),
            Some(w) => format!(
                "{:?}{}",
                w.phase,
                if w.failed { " (compaction failed)" } else { "" }
            )
            .to_lowercase(),
        };
        let c = &view.counters;
        let lost = self.pi.lost_lines;
        let mut lines = vec![
            LiveLine::new("Bridge", bridge),
            LiveLine::new("Agent", agent),
            LiveLine::new("State from", self.state_source()),
            LiveLine::new("Tools running", tools),
            LiveLine::new("Post-compaction wake", wake),
            LiveLine::new("Pokes this episode", format!("{} of {}", c.pokes, c.max_pokes)),
            LiveLine::new(
                "Empty-reply retries",
                format!("{} of {}", c.retries, c.max_retries),
            ),
            LiveLine::new(
                "Loop nudges",
                format!("{} of {}", c.loop_nudges, c.max_loop_nudges),
            ),
            LiveLine::new("Pending wakeups", view.wakeups.len().to_string()),
        ];
        let (run, total) = self.spend();
        if total.replies > 0 {
            let cache = |s: &super::usage::Spend| {
                format!(
                    "{} ({} cache reads, {} cache writes, {} replies)",
                    s.line(),
                    s.cache_read,
                    s.cache_write,
                    s.replies
                )
            };
            lines.push(LiveLine::new("Spent this run", cache(&run)));
            lines.push(LiveLine::new("Spent this session", cache(&total)));
        }
        if let Some(status) = &self.pi.program_status {
            lines.push(LiveLine::new(
                "pi's own report",
                super::reported::state_words(status),
            ));
        }
        if self.watch.total() > 0 || self.watch.last.is_some() {
            let last = self
                .watch
                .last
                .as_ref()
                .map_or(String::new(), |(t, _)| format!(": {t}"));
            lines.push(LiveLine::new(
                "Restarts of pi",
                format!("{}{last}", self.watch.total()),
            ));
        }
        if lost > 0 {
            lines.push(LiveLine::new("Bridge lines lost", lost.to_string()));
        }
        let g = &view.guard;
        let guard = match &g.halt {
            Some(halt) => halt.cause.state(),
            None => {
                let budget = g.budget_usd.map_or("no budget".to_string(), |limit| {
                    format!(
                        "{} of {}",
                        crate::brief::dollars(g.spent_usd),
                        crate::brief::dollars(limit)
                    )
                });
                format!(
                    "{budget}; {} of {} calls; ladder {} of 3",
                    g.calls, g.max_calls, g.ladder
                )
            }
        };
        lines.push(LiveLine::new("Guard rails", guard));
        if let Some(who) = view.stopped_by {
            lines.push(LiveLine::new(
                "Stopped",
                format!("by {}: no automatic poke until you type", who.who()),
            ));
        }
        if let Some(path) = &self.opts.ledger_path {
            lines.push(LiveLine::new("Intervention log", path.display().to_string()));
        }
        if let Some(status) = &self.ledger_status {
            lines.push(LiveLine::new("Log problem", status.clone()));
        }
        lines
    }
}
