//! pi-poke's long-tool monitor [POKE-M1..M4]: the running tool calls, which of them passed the
//! threshold, and which may still be orphans [POKE-O1]. Tools are tracked even while supervision is
//! off, so turning it on watches them at once (fix B4).

use super::view::ToolView;

#[derive(Clone, Debug, PartialEq)]
struct RunningTool {
    id: String,
    name: String,
    args_preview: String,
    start_mono: u64,
    start_wall: u64,
    /// Past the threshold and seen by the monitor (POKE-M2 latch).
    breached: bool,
    /// An orphan poke went out for it (POKE-O1 latch).
    poke_sent: bool,
    /// The orphan poke was refused by the anti-loop maximum (recorded once).
    orphan_declined: bool,
}

impl RunningTool {
    fn overdue_at(&self, threshold_ms: u64) -> u64 {
        self.start_mono.saturating_add(threshold_ms)
    }

    fn elapsed_s(&self, now_mono: u64) -> u64 {
        (now_mono.saturating_sub(self.start_mono) + 500) / 1000
    }

    fn orphan_candidate(&self) -> bool {
        !self.poke_sent && !self.orphan_declined
    }
}

/// A tool that just passed the threshold.
pub(crate) struct Overdue {
    pub id: String,
    pub name: String,
    pub elapsed_s: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Tools {
    running: Vec<RunningTool>,
}

impl Tools {
    /// POKE-E3.
    pub(crate) fn start(
        &mut self,
        id: String,
        name: String,
        args_preview: String,
        now_mono: u64,
        now_wall: u64,
    ) {
        let tool = RunningTool {
            id,
            name,
            args_preview,
            start_mono: now_mono,
            start_wall: now_wall,
            breached: false,
            poke_sent: false,
            orphan_declined: false,
        };
        match self.running.iter_mut().find(|existing| existing.id == tool.id) {
            Some(existing) => *existing = tool,
            None => self.running.push(tool),
        }
    }

    /// POKE-E4: a tool that ends, even late, is never reported.
    pub(crate) fn end(&mut self, id: &str) {
        self.running.retain(|tool| tool.id != id);
    }

    /// Forgets every tool whose id is not in `running` (pi's own list); returns the forgotten ones
    /// as `(id, name)`.
    pub(crate) fn keep_only(&mut self, running: &[String]) -> Vec<(String, String)> {
        let (kept, gone): (Vec<RunningTool>, Vec<RunningTool>) = std::mem::take(&mut self.running)
            .into_iter()
            .partition(|tool| running.contains(&tool.id));
        self.running = kept;
        gone.into_iter().map(|tool| (tool.id, tool.name)).collect()
    }

    pub(crate) fn clear(&mut self) {
        self.running.clear();
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.running.len()
    }

    /// POKE-M2: the tools that passed the threshold since the last look, each reported once.
    pub(crate) fn breach(&mut self, now_mono: u64, threshold_ms: u64) -> Vec<Overdue> {
        let mut overdue = Vec::new();
        for tool in &mut self.running {
            if tool.breached || now_mono < tool.overdue_at(threshold_ms) {
                continue;
            }
            tool.breached = true;
            overdue.push(Overdue {
                id: tool.id.clone(),
                name: tool.name.clone(),
                elapsed_s: tool.elapsed_s(now_mono),
            });
        }
        overdue
    }

    /// When the next tool passes the threshold.
    pub(crate) fn breach_deadline(&self, threshold_ms: u64) -> Option<u64> {
        self.running
            .iter()
            .filter(|tool| !tool.breached)
            .map(|tool| tool.overdue_at(threshold_ms))
            .min()
    }

    /// An overdue tool the orphan poke has not acted on yet: its id and name.
    pub(crate) fn orphan(&self, now_mono: u64, threshold_ms: u64) -> Option<(String, String)> {
        self.running
            .iter()
            .filter(|tool| tool.orphan_candidate())
            .find(|tool| now_mono >= tool.overdue_at(threshold_ms))
            .map(|tool| (tool.id.clone(), tool.name.clone()))
    }

    /// When the first tool the orphan poke has not acted on is overdue.
    pub(crate) fn orphan_deadline(&self, threshold_ms: u64) -> Option<u64> {
        self.running
            .iter()
            .filter(|tool| tool.orphan_candidate())
            .map(|tool| tool.overdue_at(threshold_ms))
            .min()
    }

    /// The orphan poke gave up on this tool.
    pub(crate) fn decline_orphan(&mut self, id: &str) {
        if let Some(tool) = self.running.iter_mut().find(|tool| tool.id == id) {
            tool.orphan_declined = true;
        }
    }

    /// The orphan poke goes out for this tool: its name and seconds running, `None` if it ended.
    pub(crate) fn poke_orphan(&mut self, id: &str, now_mono: u64) -> Option<(String, u64)> {
        let tool = self.running.iter_mut().find(|tool| tool.id == id)?;
        tool.poke_sent = true;
        Some((tool.name.clone(), tool.elapsed_s(now_mono)))
    }

    /// POKE-O2: an overdue tool nobody poked for is still pending.
    pub(crate) fn stalled(&self, now_mono: u64, threshold_ms: u64) -> bool {
        self.running
            .iter()
            .any(|tool| !tool.poke_sent && now_mono >= tool.overdue_at(threshold_ms))
    }

    pub(crate) fn views(&self, now_mono: u64, threshold_ms: u64) -> Vec<ToolView> {
        self.running
            .iter()
            .map(|tool| {
                let elapsed_ms = now_mono.saturating_sub(tool.start_mono);
                ToolView {
                    id: tool.id.clone(),
                    name: tool.name.clone(),
                    args_preview: tool.args_preview.clone(),
                    started_wall_ms: tool.start_wall,
                    elapsed_ms,
                    overdue: elapsed_ms >= threshold_ms,
                }
            })
            .collect()
    }
}
