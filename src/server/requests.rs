//! What a client asks the server for: to open or attach to a session, to type, resize, detach,
//! list or kill sessions; and what the user asks from a session's keys (detach, switch, a new
//! session).

use super::serve::{Server, wall_ms};
use super::wire::{Down, Target, Up};
use crate::event_loop::{ClientEvent, Signal, WorldEvent};
use crate::session::WorkspaceRequest;

impl Server {
    pub(super) async fn on_up(&mut self, id: u64, up: Up) {
        let news = match up {
            Up::Open { .. } | Up::List | Up::Kill { .. } => self.tell_news(id),
            _ => Vec::new(),
        };
        match up {
            Up::Hello { .. } => self.tell(
                id,
                Down::Error {
                    message: "a second hello".to_string(),
                },
            ),
            Up::Open {
                target,
                cols,
                rows,
                caps,
                caps_follow,
                env,
            } => {
                if let Some(c) = self.clients.get_mut(&id) {
                    (c.cols, c.rows, c.env) = (cols, rows, env);
                    c.caps_pending = caps_follow;
                }
                if !caps.is_empty() {
                    self.keep_caps(id, &caps);
                }
                let number = match target {
                    Target::Attach { name } => self.table.find(name.as_deref()),
                    Target::New { name, dir, args } => self.create(id, name.as_deref(), &dir, args).await,
                };
                match number {
                    Ok(n) => {
                        self.attach(id, n);
                        // A terminal shows them in the session it opened.
                        for message in news {
                            self.notice(n, message);
                        }
                    }
                    Err(message) => self.tell(id, Down::Error { message }),
                }
            }
            Up::Caps(caps) => {
                self.keep_caps(id, &caps);
                let Some(c) = self.clients.get_mut(&id) else {
                    return;
                };
                c.caps_pending = false;
                if let Some(n) = c.session {
                    self.to_session(n, WorldEvent::Client(ClientEvent::Caps { caps }));
                }
            }
            // The connection sends input with its ticket (`ServerMsg::Input`); this one is counted
            // from here.
            Up::Input(bytes) => {
                let gauge = std::sync::Arc::default();
                let ticket = super::input_meter::Ticket::new(&gauge, bytes.len());
                self.on_input(id, bytes, ticket);
            }
            Up::Resize { cols, rows } | Up::Resumed { cols, rows } => {
                let resumed = matches!(up, Up::Resumed { .. });
                let Some(c) = self.clients.get_mut(&id) else {
                    return;
                };
                (c.cols, c.rows) = (cols, rows);
                if let Some(n) = c.session {
                    let ev = if resumed {
                        ClientEvent::Resumed { id, cols, rows }
                    } else {
                        ClientEvent::Resize { id, cols, rows }
                    };
                    self.to_session(n, WorldEvent::Client(ev));
                }
            }
            Up::Detach => self.detach(id),
            Up::List => {
                let listing = self.table.listing(wall_ms(), |n| self.attached(n));
                self.tell(id, Down::Listing(listing));
            }
            Up::Kill { name } => match self.table.find(Some(&name)) {
                Ok(n) => {
                    self.killing.insert(n);
                    self.to_session(n, WorldEvent::Signal(Signal::Term));
                    let label = self.label(n);
                    self.tell(
                        id,
                        Down::Done {
                            message: format!("ending session {label}"),
                        },
                    );
                }
                Err(message) => self.tell(id, Down::Error { message }),
            },
        }
    }

    pub(super) fn on_input(&mut self, id: u64, bytes: Vec<u8>, ticket: super::input_meter::Ticket) {
        if let Some(n) = self.clients.get(&id).and_then(|c| c.session) {
            self.table.touch(n);
            self.to_session(n, WorldEvent::Client(ClientEvent::Input { id, bytes, ticket }));
        }
    }

    /// "3:api", as the user sees a session named.
    pub(super) fn label(&self, n: u32) -> String {
        self.table
            .get(n)
            .map_or_else(|| n.to_string(), |e| format!("{}:{}", e.number, e.name))
    }

    /// The client leaves the session it follows and is told so (it then ends).
    fn detach(&mut self, id: u64) {
        let name = self
            .clients
            .get(&id)
            .and_then(|c| c.session)
            .map(|n| self.label(n))
            .unwrap_or_default();
        self.leave(id);
        self.tell(
            id,
            Down::Detached {
                reason: format!("detached from {name}"),
            },
        );
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

    pub(super) async fn on_request(&mut self, id: u64, req: WorkspaceRequest) {
        let current = self.clients.get(&id).and_then(|c| c.session);
        match req {
            WorkspaceRequest::Detach => self.detach(id),
            WorkspaceRequest::SwitchTo(n) => {
                if current == Some(n) {
                    return;
                }
                if self.sessions.contains_key(&n) {
                    self.attach(id, n);
                } else if let Some(cur) = current {
                    self.notice(cur, format!("there is no session {n}"));
                }
            }
            WorkspaceRequest::NewSession { dir } => {
                // The new session gets the current one's pokeshell options, and a fresh pi.
                let argv = current
                    .and_then(|n| self.table.get(n))
                    .map(|e| options_only(&e.argv))
                    .unwrap_or_default();
                match self.create(id, None, &dir, argv).await {
                    Ok(n) => self.attach(id, n),
                    Err(e) => {
                        if let Some(cur) = current {
                            self.notice(cur, format!("cannot open a session in {dir}: {e}"));
                        }
                    }
                }
            }
        }
    }

    fn notice(&self, n: u32, text: String) {
        self.to_session(n, WorldEvent::Notice(text));
    }
}

/// A pokeshell command line without pi's arguments (those after `--`).
pub(super) fn options_only(argv: &[String]) -> Vec<String> {
    argv.iter().take_while(|a| *a != "--").cloned().collect()
}
