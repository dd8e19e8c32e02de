//! pi-poke's orphaned-tool poke (spec §1.5): a tool still running past the threshold after its run
//! ended in error or length and the agent settled. Tick-driven; the arbiter lets it act only when no
//! other component owned the last settle and nothing was sent since.

use super::Supervisor;
use super::action::Action;
use super::arbiter::Resume;
use super::ledger::rule;
use super::state::RunPhase;
use super::texts;
use super::time::Now;

impl Supervisor {
    /// POKE-O1 conditions 1–4 and the arbiter's, everything but the clock.
    fn orphan_watch_open(&self) -> bool {
        let poke = &self.config.poke;
        poke.enabled
            && poke.auto_poke
            && !poke.auto_abort
            && self.wake.is_none()
            && self.run.phase == RunPhase::Idle
            && self.run.failed()
            && self.arbiter.deferred.is_none()
            && !self.arbiter.injected_since_settle
            && !self.arbiter.settle_claimed
            && self.arbiter.stopped.is_none()
            && !self.compaction.active
            && self.connected
    }

    fn orphan_candidates(&self) -> impl Iterator<Item = &super::monitor::RunningTool> {
        self.tools
            .iter()
            .filter(|tool| !tool.poke_sent && !tool.orphan_declined)
    }

    pub(super) fn orphan_tick(&mut self, now: Now, out: &mut Vec<Action>) {
        if !self.orphan_watch_open() {
            return;
        }
        let Some(tool) = self
            .orphan_candidates()
            .find(|tool| now.mono_ms >= self.overdue_at(tool.start_mono))
        else {
            return;
        };
        let (id, name) = (tool.id.clone(), tool.name.clone());
        let max = self.config.max_pokes();
        if self.episode.pokes >= max {
            if let Some(tool) = self.tools.iter_mut().find(|tool| tool.id == id) {
                tool.orphan_declined = true;
            }
            let reason = format!(
                "{name} outlived its interrupted run, but {max} pokes were sent in this episode already"
            );
            self.give_up(out, now, rule::POKE_ORPHAN, reason, texts::notify_poke_limit(max));
            return;
        }
        if now.mono_ms < self.resume_ready_at(true) {
            return;
        }
        self.commit_and_send(Resume::Orphan { tool_id: id }, now, out);
    }

    pub(super) fn orphan_deadline(&self) -> Option<u64> {
        if !self.orphan_watch_open() {
            return None;
        }
        let overdue = self
            .orphan_candidates()
            .map(|tool| self.overdue_at(tool.start_mono))
            .min()?;
        if self.episode.pokes >= self.config.max_pokes() {
            Some(overdue)
        } else {
            Some(overdue.max(self.resume_ready_at(true)))
        }
    }

    /// POKE-O2: a settle without a wake closes the episode unless an overdue, un-poked tool of a failed
    /// run is pending (then the orphan poke still has to act).
    pub(super) fn close_episode_unless_orphaned(&mut self, now: Now) {
        let stalled_orphan = self
            .tools
            .iter()
            .any(|tool| !tool.poke_sent && now.mono_ms >= self.overdue_at(tool.start_mono));
        if !(self.run.failed() && stalled_orphan) {
            self.episode.pokes = 0;
        }
    }
}
