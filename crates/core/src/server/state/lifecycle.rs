//! A session's start and end as the core hears them: the terminals waiting for a session follow it
//! once it is up, and hear of its end, whichever of the two the core hears first.

use super::{DETACHED_SIZE, Run, SHUTTING_DOWN, ServerEffect, ServerState, SessionSpec, SessionStart};
use super::{SessionMsg, Signal};
use crate::supervisor::Now;
use crate::wire::Down;

/// A new session as a client asked for it.
pub(super) struct Wanted<'a> {
    pub name: Option<&'a str>,
    pub dir: &'a str,
    /// pokeshell's command line for it.
    pub argv: Vec<String>,
    /// The commit its changes are read against, when the client knew it.
    pub base: Option<String>,
}

impl ServerState {
    /// Starts a session for client `id` (its size, environment and terminal) as `wanted`; the
    /// client follows it once it runs.
    pub(super) fn create(
        &mut self,
        id: Option<u64>,
        wanted: Wanted<'_>,
        now: Now,
        fx: &mut Vec<ServerEffect>,
    ) -> Result<u32, String> {
        self.room_for_one_more()?;
        let client = id.and_then(|id| self.clients.get(&id));
        let parent = self.admit_agent_session(client)?;
        let (cols, rows, env, waiting) = client
            .map(|c| {
                (
                    c.cols,
                    c.rows,
                    c.env.clone(),
                    c.caps_pending || !c.caps.is_empty(),
                )
            })
            .unwrap_or((DETACHED_SIZE.0, DETACHED_SIZE.1, Vec::new(), false));
        // A client without a terminal (`new -d`) brings no answers: pi's queries are answered at
        // once from the last terminal seen, rather than held until someone attaches.
        let caps_now = (!waiting).then(|| self.last_caps.clone());
        let env = if env.is_empty() { self.env.clone() } else { env };
        let Wanted {
            name,
            dir,
            argv,
            base,
        } = wanted;
        let argv = crate::spec::first_prompt_defused(argv);
        let number = self.table.add(name, dir, argv.clone(), now.wall_ms)?;
        let base = base.filter(|b| crate::diff::is_commit_id(b));
        if let Some(e) = self.table.get_mut(number) {
            e.spec.base = base.clone();
        }
        let name = self
            .table
            .get(number)
            .map(|e| e.spec.name.clone())
            .unwrap_or_default();
        self.publish(fx);
        self.runs.insert(
            number,
            Run::Starting {
                waiting: id.into_iter().collect(),
            },
        );
        let spec = SessionSpec {
            number,
            name,
            dir: dir.to_string(),
            argv,
            base,
            real_dir: None,
            env,
            resume: false,
            parent,
            prompted: false,
        };
        let spec = self.drive_created(spec, now, fx);
        fx.push(ServerEffect::Start(SessionStart {
            spec,
            cols,
            rows,
            caps_now,
        }));
        Ok(number)
    }

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
                self.drive_ended(number, None, fx);
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
        self.drive_ended(number, Some(code), fx);
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
