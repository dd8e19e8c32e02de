//! Saved sessions come back a few at a time: the server answers its clients meanwhile, and a long
//! list does not start a hundred pis at once. Each saved session is in the table and `runs` (as
//! starting) from the first moment, so `ls` lists it and an attach waits for it; its start is asked
//! for when a place is free.

use crate::server::restore_plan::{MAX_SESSIONS, RESTORE_PARALLEL};

use super::{Run, ServerEffect, ServerState, SessionStart};

impl ServerState {
    /// Starts queued saved sessions while fewer than [`RESTORE_PARALLEL`] are starting.
    pub(super) fn start_restores(&mut self, fx: &mut Vec<ServerEffect>) {
        while self.restoring.len() - self.restore_queue.len() < RESTORE_PARALLEL {
            let Some(start) = self.restore_queue.pop_front() else {
                return;
            };
            fx.push(ServerEffect::Start(start));
        }
    }

    /// Queues a saved session's start (started at once if a place is free).
    pub(super) fn queue_restore(&mut self, start: SessionStart, fx: &mut Vec<ServerEffect>) {
        let n = start.spec.number;
        self.runs.insert(n, Run::Starting { waiting: Vec::new() });
        self.restoring.insert(n);
        self.restore_queue.push_back(start);
        self.start_restores(fx);
    }

    /// Takes session `n` out of the queue if it waits there (it never starts); its waiting
    /// clients are told `why`. Returns whether it was queued.
    pub(super) fn unqueue(&mut self, n: u32, why: &str, fx: &mut Vec<ServerEffect>) -> bool {
        let Some(at) = self.restore_queue.iter().position(|s| s.spec.number == n) else {
            return false;
        };
        self.restore_queue.remove(at);
        self.restoring.remove(&n);
        if let Some(Run::Starting { waiting }) = self.runs.remove(&n) {
            for id in waiting {
                self.refused(id, why.to_string(), fx);
            }
        }
        fx.push(ServerEffect::Restoring(self.restoring.len() as u32));
        true
    }

    /// The server ends before the queue did: nothing more is started (all stay in the table, so
    /// saved, for the next server).
    pub(super) fn drop_restore_queue(&mut self, why: &str, fx: &mut Vec<ServerEffect>) {
        let queued: Vec<u32> = self.restore_queue.iter().map(|s| s.spec.number).collect();
        for n in queued {
            self.unqueue(n, why, fx);
        }
    }

    /// A new session is refused past [`MAX_SESSIONS`] (those still being brought back count).
    pub(super) fn room_for_one_more(&self) -> Result<(), String> {
        if self.table.len() >= MAX_SESSIONS {
            return Err(format!(
                "this server already has {MAX_SESSIONS} sessions, the most one server runs; end one \
                 (`pokeshell kill NAME`) first"
            ));
        }
        Ok(())
    }
}
