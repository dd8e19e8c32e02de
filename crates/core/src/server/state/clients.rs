//! What clients ask of the server's state (to open or attach to a session, to type, resize, detach,
//! list or kill sessions), what the user asks from a session's keys (detach, switch, a new session),
//! and who follows which session.

use super::{ClientMsg, SessionMsg, Signal};
use super::{
    DETACHED_SIZE, Run, ServerEffect, ServerState, SessionSpec, SessionStart, TYPE_AHEAD_MAX, client_ev,
    options_only,
};
use crate::bridge::UserRequest;
use crate::session::WorkspaceRequest;
use crate::supervisor::Now;
use crate::wire::{Down, SessionCommand, Target, Up};

impl ServerState {
    pub(super) fn on_up(&mut self, id: u64, up: Up, now: Now, fx: &mut Vec<ServerEffect>) {
        let news = match up {
            Up::Open { .. } | Up::List | Up::Kill { .. } => self.tell_news(id, fx),
            _ => Vec::new(),
        };
        match up {
            Up::Hello { .. } => fx.push(ServerEffect::Tell {
                id,
                down: Down::Error {
                    message: "a second hello".to_string(),
                },
            }),
            Up::Open {
                target,
                cols,
                rows,
                caps,
                caps_follow,
                env,
                watch,
                terminal: _,
            } => {
                if let Some(c) = self.clients.get_mut(&id) {
                    (c.cols, c.rows, c.env) = (cols, rows, env);
                    c.caps_pending = caps_follow;
                    c.watch = watch;
                }
                if !caps.is_empty() {
                    self.keep_caps(id, &caps);
                }
                match target {
                    Target::Attach { name } => match self.table.find(name.as_deref()) {
                        Ok(n) => {
                            self.attach(id, n, fx);
                            // A terminal shows them in the session it opened, too.
                            for message in news {
                                notice(n, message, fx);
                            }
                        }
                        Err(message) => self.refused(id, message, fx),
                    },
                    Target::New { name, dir, args } => {
                        if let Err(message) = self.create(Some(id), name.as_deref(), &dir, args, now, fx) {
                            self.refused(id, message, fx);
                        }
                    }
                }
            }
            Up::Caps(caps) => {
                self.keep_caps(id, &caps);
                let Some(c) = self.clients.get_mut(&id) else {
                    return;
                };
                c.caps_pending = false;
                if let Some(n) = c.session {
                    fx.push(client_ev(n, ClientMsg::Caps { id, caps }));
                }
            }
            Up::Input(bytes) => self.input(id, bytes, fx),
            Up::Resize { cols, rows } | Up::Resumed { cols, rows } => {
                let resumed = matches!(up, Up::Resumed { .. });
                let Some(c) = self.clients.get_mut(&id) else {
                    return;
                };
                (c.cols, c.rows) = (cols, rows);
                if let Some(n) = c.session {
                    let ev = if resumed {
                        ClientMsg::Resumed { id, cols, rows }
                    } else {
                        ClientMsg::Resize { id, cols, rows }
                    };
                    fx.push(client_ev(n, ev));
                }
            }
            Up::Detach => self.detach(id, fx),
            Up::List => {
                let listing = self.table.listing(now.wall_ms, |n| self.attached(n));
                fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Listing { sessions: listing },
                });
            }
            Up::Subscribe => {
                self.subscribers.insert(id);
                let listing = self.table.listing(now.wall_ms, |n| self.attached(n));
                fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Listing { sessions: listing },
                });
            }
            Up::Command(command) => self.on_command(id, command, fx),
            Up::Guard { session, answer } => self.on_guard_answer(id, &session, answer, fx),
            Up::Web { listen } => fx.push(ServerEffect::StartWeb { id, listen }),
            Up::Visible { visible } => self.page_visible(id, visible),
            Up::Act { session, event, act } => self.on_act(id, session, event, act, now, fx),
            Up::WebLogoutAll => fx.push(ServerEffect::WebLogoutAll { id }),
            Up::Talk {
                session,
                epoch,
                since,
            } => self.ask_talk(id, &session, epoch, since, fx),
            Up::Away { seen } => self.ask_away(id, &seen, fx),
            Up::Kill { name } => match self.table.find(Some(&name)) {
                Ok(n) => self.kill(id, n, fx),
                Err(message) => fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Error { message },
                }),
            },
        }
    }

    /// Client `id` waits for a session that is starting.
    fn starting_for(&self, id: u64) -> bool {
        self.runs
            .values()
            .any(|r| matches!(r, Run::Starting { waiting } if waiting.contains(&id)))
    }

    /// Keeps keys typed before the client's session runs (a terminal types ahead of a slow start as
    /// it would in a shell), up to a bound.
    fn type_ahead(&mut self, id: u64, bytes: Vec<u8>, fx: &mut Vec<ServerEffect>) {
        let Some(c) = self.clients.get_mut(&id) else {
            return;
        };
        let room = TYPE_AHEAD_MAX.saturating_sub(c.typed_ahead.len());
        if bytes.len() > room {
            fx.push(ServerEffect::Log(format!(
                "client {id} typed more than {} KiB before its session ran: the rest is dropped",
                TYPE_AHEAD_MAX >> 10
            )));
        }
        c.typed_ahead.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// What a prefix key does, asked by a client without prefix keys (the web view's buttons), for
    /// the session it follows.
    /// Keys typed in client `id`, for the session it follows (the binary's input meter counts them
    /// until the session's loop has them: it goes with the effect, never into this state).
    pub(super) fn input(&mut self, id: u64, bytes: Vec<u8>, fx: &mut Vec<ServerEffect>) {
        if let Some(n) = self.clients.get(&id).and_then(|c| c.session) {
            self.table.touch(n);
            fx.push(client_ev(n, ClientMsg::Input { id, bytes }));
        } else if self.starting_for(id) {
            self.type_ahead(id, bytes, fx);
        }
    }

    fn on_command(&mut self, id: u64, command: SessionCommand, fx: &mut Vec<ServerEffect>) {
        let Some(number) = self.clients.get(&id).and_then(|c| c.session) else {
            let message = "a command needs a session: open one first".to_string();
            fx.push(ServerEffect::Tell {
                id,
                down: Down::Error { message },
            });
            return;
        };
        let request = match command {
            SessionCommand::Poke => UserRequest::Poke,
            SessionCommand::Handoff { focus } => UserRequest::Handoff { focus },
            SessionCommand::Supervision { on: true } => UserRequest::PokeOn,
            SessionCommand::Supervision { on: false } => UserRequest::PokeOff,
        };
        self.table.touch(number);
        let ev = SessionMsg::Request(request);
        fx.push(ServerEffect::ToSession { number, ev });
    }

    /// `pokeshell kill`: the session leaves the saved list at once, and the answer waits until that
    /// is on disk (a server that dies meanwhile does not bring the session back).
    fn kill(&mut self, id: u64, n: u32, fx: &mut Vec<ServerEffect>) {
        let label = self.label(n);
        self.table.remove(n);
        let why = format!("session {label} was ended before it came back");
        if self.unqueue(n, &why, fx) {
            // Never started: nothing to end.
        } else if self.runs.contains_key(&n) {
            self.killing.insert(n);
            let ev = SessionMsg::Signal(Signal::Term);
            fx.push(ServerEffect::ToSession { number: n, ev });
        }
        self.share_briefs(fx);
        let seq = self.save(fx);
        let down = Down::Done {
            message: format!("ending session {label}"),
        };
        self.tell_after_save(seq, id, down, fx);
    }

    pub(super) fn on_request(
        &mut self,
        id: u64,
        req: WorkspaceRequest,
        now: Now,
        fx: &mut Vec<ServerEffect>,
    ) {
        let current = self.clients.get(&id).and_then(|c| c.session);
        match req {
            WorkspaceRequest::Detach => self.detach(id, fx),
            WorkspaceRequest::SwitchTo(n) => {
                if current == Some(n) {
                    return;
                }
                if self.runs.get(&n) == Some(&Run::Running) {
                    self.attach(id, n, fx);
                } else if let Some((dest, name)) = self
                    .remote
                    .iter()
                    .find(|b| b.number == n)
                    .and_then(|b| Some((b.machine.clone()?, b.name.clone())))
                {
                    // The terminal goes to the other machine: it leaves this server first.
                    self.leave(id, fx);
                    fx.push(ServerEffect::Tell {
                        id,
                        down: Down::Hop { dest, name },
                    });
                } else if let Some(cur) = current {
                    notice(cur, format!("there is no session {n}"), fx);
                }
            }
            WorkspaceRequest::NewSession { dir } => {
                // The new session gets the current one's pokeshell options, and a fresh pi.
                let argv = current
                    .and_then(|n| self.table.get(n))
                    .map(|e| options_only(&e.spec.argv))
                    .unwrap_or_default();
                if let Err(e) = self.create(Some(id), None, &dir, argv, now, fx)
                    && let Some(cur) = current
                {
                    notice(cur, format!("cannot open a session in {dir}: {e}"), fx);
                }
            }
        }
    }

    /// Starts a session for client `id` (its size, environment and terminal) in `dir`; the client
    /// follows it once it runs.
    pub(super) fn create(
        &mut self,
        id: Option<u64>,
        name: Option<&str>,
        dir: &str,
        argv: Vec<String>,
        now: Now,
        fx: &mut Vec<ServerEffect>,
    ) -> Result<u32, String> {
        self.room_for_one_more()?;
        let client = id.and_then(|id| self.clients.get(&id));
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
        let number = self.table.add(name, dir, argv.clone(), now.wall_ms)?;
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
        fx.push(ServerEffect::Start(SessionStart {
            spec: SessionSpec {
                number,
                name,
                dir: dir.to_string(),
                argv,
                env,
                resume: false,
            },
            cols,
            rows,
            caps_now,
        }));
        Ok(number)
    }

    /// Client `id` follows session `n` from now on (and leaves the one it followed).
    pub(super) fn attach(&mut self, id: u64, n: u32, fx: &mut Vec<ServerEffect>) {
        match self.runs.get_mut(&n) {
            Some(Run::Running) => {}
            Some(Run::Starting { waiting }) => {
                waiting.push(id);
                return;
            }
            None => {
                let message = format!("session {} is not running", self.label(n));
                self.refused(id, message, fx);
                return;
            }
        }
        self.leave(id, fx);
        let last_caps = self.last_caps.clone();
        let Some(c) = self.clients.get_mut(&id) else {
            return;
        };
        c.session = Some(n);
        let caps = if c.caps_pending {
            None
        } else if c.caps.is_empty() {
            Some(last_caps)
        } else {
            Some(c.caps.clone())
        };
        fx.push(ServerEffect::Follow {
            id,
            number: n,
            cols: c.cols,
            rows: c.rows,
            caps,
            watch: c.watch,
        });
        let typed = std::mem::take(&mut c.typed_ahead);
        if !typed.is_empty() {
            fx.push(client_ev(n, ClientMsg::Input { id, bytes: typed }));
        }
        self.table.touch(n);
        self.share_briefs(fx);
        let name = self.label(n);
        fx.push(ServerEffect::Tell {
            id,
            down: Down::Attached { name },
        });
    }

    /// Client `id` stops following its session, if it follows one.
    pub(super) fn leave(&mut self, id: u64, fx: &mut Vec<ServerEffect>) {
        let Some(n) = self.clients.get_mut(&id).and_then(|c| c.session.take()) else {
            return;
        };
        self.away.left(id);
        fx.push(ServerEffect::Unfollow { id, number: n });
        self.share_briefs(fx);
    }

    /// The client leaves the session it follows and is told so (it then ends).
    fn detach(&mut self, id: u64, fx: &mut Vec<ServerEffect>) {
        let name = self
            .clients
            .get(&id)
            .and_then(|c| c.session)
            .map(|n| self.label(n))
            .unwrap_or_default();
        self.leave(id, fx);
        let reason = format!("detached from {name}");
        fx.push(ServerEffect::Tell {
            id,
            down: Down::Detached { reason },
        });
    }

    /// A session's screen gave up on client `id`, which did not read while `bound` bytes waited
    /// for it: it no longer follows the session (so `ls` does not count it), its backlog is
    /// dropped, and once it reads again it learns why and ends (saying how to come back).
    pub(super) fn lagged(&mut self, id: u64, bound: usize, fx: &mut Vec<ServerEffect>) {
        let Some(n) = self.clients.get(&id).and_then(|c| c.session) else {
            return;
        };
        let name = self.label(n);
        self.leave(id, fx);
        let behind = if bound >= 1 << 20 {
            format!("{} MiB", bound >> 20)
        } else {
            format!("{} KiB", bound >> 10)
        };
        let reason =
            format!("this terminal was detached from {name}: it stopped reading and fell {behind} behind");
        fx.push(ServerEffect::Tell {
            id,
            down: Down::Detached { reason },
        });
    }

    /// The client's connection is gone (or dropped): it follows nothing any more.
    pub(super) fn forget(&mut self, id: u64, fx: &mut Vec<ServerEffect>) {
        self.subscribers.remove(&id);
        self.away.forget(id);
        self.leave(id, fx);
        for run in self.runs.values_mut() {
            if let Run::Starting { waiting } = run {
                waiting.retain(|w| *w != id);
            }
        }
        if self.clients.remove(&id).is_some() {
            fx.push(ServerEffect::Forget { id });
        }
    }

    /// The client's request failed: it is told why (and ends).
    pub(super) fn refused(&self, id: u64, message: String, fx: &mut Vec<ServerEffect>) {
        fx.push(ServerEffect::Tell {
            id,
            down: Down::Error { message },
        });
    }

    /// Keeps a client's terminal answers, and the last non-empty ones for sessions started with
    /// nobody attached.
    fn keep_caps(&mut self, id: u64, caps: &[u8]) {
        if let Some(c) = self.clients.get_mut(&id) {
            c.caps = caps.to_vec();
        }
        if !caps.is_empty() {
            self.last_caps = caps.to_vec();
        }
    }

    /// The session client `id` follows.
    #[cfg(test)]
    pub(super) fn following(&self, id: u64) -> Option<u32> {
        self.clients.get(&id).and_then(|c| c.session)
    }
}

fn notice(n: u32, text: String, fx: &mut Vec<ServerEffect>) {
    fx.push(ServerEffect::ToSession {
        number: n,
        ev: SessionMsg::Notice(text),
    });
}
