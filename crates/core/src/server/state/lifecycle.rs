//! A session's start and end as the core hears them: the terminals waiting for a session follow it
//! once it is up, and hear of its end, whichever of the two the core hears first.

use super::{Run, SHUTTING_DOWN, ServerEffect, ServerState};
use super::{SessionMsg, Signal};
use crate::wire::Down;

impl ServerState {
    pub(super) fn started(&mut self, number: u32, result: Result<(), String>, fx: &mut Vec<ServerEffect>) {
        let Some(Run::Starting { waiting }) = self.runs.remove(&number) else {
            return;
        };
        if self.restoring.remove(&number) {
            self.start_restores(fx);
            fx.push(ServerEffect::Restoring(self.restoring.len() as u32));
        }
        match result {
            Ok(()) => {
                self.served = true;
                self.runs.insert(number, Run::Running);
                if let Some(note) = self.footer_notes.remove(&number) {
                    let ev = SessionMsg::Notice(note);
                    fx.push(ServerEffect::ToSession { number, ev });
                }
                self.save(fx);
                // Ended while it started: by a signal to the server, or `pokeshell kill`.
                if self.shutting_down || self.killing.contains(&number) {
                    let ev = SessionMsg::Signal(Signal::Term);
                    fx.push(ServerEffect::ToSession { number, ev });
                    return;
                }
                for id in waiting {
                    self.attach(id, number, fx);
                }
                self.guard_session_up(number, fx);
                self.share_briefs(fx);
            }
            Err(message) => {
                let label = self.label(number);
                self.footer_notes.remove(&number);
                self.table.remove(number);
                self.publish(fx);
                if waiting.is_empty() {
                    fx.push(ServerEffect::Log(format!(
                        "cannot start session {label}: {message}"
                    )));
                }
                for id in waiting {
                    // A terminal showing a session asked from its keys: it stays, and is told there.
                    match self.clients.get(&id).and_then(|c| c.session) {
                        Some(cur) => {
                            let ev = SessionMsg::Notice(format!("cannot open a session: {message}"));
                            fx.push(ServerEffect::ToSession { number: cur, ev });
                        }
                        None => self.refused(id, message.clone(), fx),
                    }
                }
                self.save(fx);
            }
        }
    }

    pub(super) fn ended(
        &mut self,
        number: u32,
        code: i32,
        shutdown: bool,
        farewell: Vec<u8>,
        fx: &mut Vec<ServerEffect>,
    ) {
        let kill = self.killing.remove(&number);
        self.guard_session_ended(number, fx);
        // A session can end before the server hears that it started (the two come by different
        // ways): the terminals waiting for it are told as its followers are.
        let waiting = match self.runs.remove(&number) {
            Some(Run::Starting { waiting }) => {
                if self.restoring.remove(&number) {
                    self.start_restores(fx);
                    fx.push(ServerEffect::Restoring(self.restoring.len() as u32));
                }
                waiting
            }
            _ => Vec::new(),
        };
        let mut followers: Vec<u64> = self
            .clients
            .iter()
            .filter(|(_, c)| c.session == Some(number))
            .map(|(id, _)| *id)
            .collect();
        followers.extend(waiting.into_iter().filter(|id| self.clients.contains_key(id)));
        followers.sort_unstable();
        followers.dedup();
        for id in followers {
            // The connection writes what the session drew before this last word.
            let down = if shutdown && !kill {
                Down::Detached {
                    reason: SHUTTING_DOWN.to_string(),
                }
            } else {
                Down::Exited {
                    code,
                    farewell: farewell.clone(),
                }
            };
            fx.push(ServerEffect::Tell { id, down });
            if let Some(c) = self.clients.get_mut(&id) {
                c.session = None;
            }
        }
        if kill || !shutdown {
            self.table.remove(number);
            self.share_briefs(fx);
        }
        self.save(fx);
    }
}
