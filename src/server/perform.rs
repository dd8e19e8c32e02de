//! The server's state's hands: performs each [`ServerEffect`] on the connections, the session
//! threads and the disk, and keeps the only things the state must not hold, the channels to them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::conn::ConnCmd;
use super::kind::Kinds;
use super::route::{Route, Target};
use super::saver::Saver;
use super::serve::ServerMsg;
use super::session_thread;
use crate::ipc::outbox::Outbox;
use crate::server::event_loop::input_meter::Ticket;
use crate::server::event_loop::{ClientEvent, ClientLink, Clock, WorldEvent};
use pokeshell_core::server::state::{ClientMsg, SessionMsg};
use pokeshell_core::server::state::{ServerEffect, ServerEvent, ServerState};
use pokeshell_core::wire::Down;

/// A channel to something the state talks to, from where it was made to the performer. Handles
/// travel apart from the events and are taken first, so a handle always arrives before anything
/// its owner sent after it.
pub enum Handle {
    /// A client passed the socket's checks: its connection's writer, and where its keys go.
    Conn {
        id: u64,
        ctl: UnboundedSender<ConnCmd>,
        route: Arc<Route>,
        outbox: Arc<Outbox>,
    },
    /// A session's thread runs (its loop's events) or could not start.
    Session {
        number: u32,
        result: Result<session_thread::Ready, String>,
    },
}

/// A client's connection, as the performer reaches it.
struct Conn {
    ctl: UnboundedSender<ConnCmd>,
    route: Arc<Route>,
    /// Its socket, for the session it follows to write frames to itself.
    outbox: Arc<Outbox>,
}

pub struct Performer {
    pub state: ServerState,
    clock: Clock,
    me: UnboundedSender<ServerMsg>,
    handles: UnboundedSender<Handle>,
    conns: HashMap<u64, Conn>,
    /// Each running session's loop, and its program's input queue (see `input_meter`).
    sessions: HashMap<u32, session_thread::Ready>,
    saver: Saver,
    /// The kinds of session besides pokeshell's own (`kind.rs`).
    kinds: Kinds,
    /// The ticket of the keys the core is deciding about (`on_msg`).
    ticket: Option<Ticket>,
}

impl Performer {
    pub fn new(
        me: UnboundedSender<ServerMsg>,
        handles: UnboundedSender<Handle>,
        saver: Saver,
        kinds: Kinds,
    ) -> Self {
        let wall_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Self {
            state: ServerState::default(),
            clock: Clock::new(tokio::time::Instant::now(), wall_ms),
            me,
            handles,
            conns: HashMap::new(),
            sessions: HashMap::new(),
            saver,
            kinds,
            ticket: None,
        }
    }

    /// A channel arrived: kept, and the state hears what it means.
    pub fn on_handle(&mut self, handle: Handle) {
        match handle {
            Handle::Conn {
                id,
                ctl,
                route,
                outbox,
            } => {
                self.conns.insert(id, Conn { ctl, route, outbox });
                self.event(ServerEvent::Connected { id });
            }
            Handle::Session { number, result } => {
                let result = result.map(|ready| {
                    self.sessions.insert(number, ready);
                });
                self.event(ServerEvent::Started { number, result });
            }
        }
    }

    /// A message from a connection, a session's thread or the disk: keys that came the long way
    /// keep their ticket here while the core decides, and it goes with them to the session.
    pub fn on_msg(&mut self, msg: ServerMsg) {
        match msg {
            ServerMsg::Event(ev) => self.event(ev),
            ServerMsg::Input { id, bytes, ticket } => {
                self.ticket = Some(ticket);
                self.event(ServerEvent::Input { id, bytes });
                // Not passed on: the bytes are no longer counted.
                self.ticket = None;
            }
        }
    }

    /// The state hears `ev`; what it decides is done.
    pub fn event(&mut self, ev: ServerEvent) {
        if let ServerEvent::Ended { number, .. } = &ev {
            self.sessions.remove(number);
        }
        let from = match &ev {
            ServerEvent::Up { id, .. } | ServerEvent::Input { id, .. } => Some(*id),
            _ => None,
        };
        let now = self.clock.now(tokio::time::Instant::now());
        for effect in self.state.handle(ev, now) {
            self.perform(effect);
        }
        // After its effects: whatever the core passed on to a session is in that session's channel
        // before the client's next key may go there the short way.
        if let Some(conn) = from.and_then(|id| self.conns.get(&id)) {
            conn.route.arrived();
        }
    }

    fn to_session(&self, number: u32, ev: WorldEvent) {
        if let Some((tx, _, _)) = self.sessions.get(&number) {
            let _ = tx.send(ev);
        }
    }

    fn to_conn(&self, id: u64, cmd: ConnCmd) {
        if let Some(conn) = self.conns.get(&id) {
            // Counted before it is sent: the session does not write past it.
            conn.outbox.counted();
            if conn.ctl.send(cmd).is_err() {
                conn.outbox.uncounted();
            }
        }
    }

    fn perform(&mut self, effect: ServerEffect) {
        match effect {
            ServerEffect::Tell { id, down } => self.to_conn(id, ConnCmd::Down(down)),
            ServerEffect::Follow {
                id,
                number,
                cols,
                rows,
                caps,
                watch,
            } => {
                // A fresh channel per follow: nothing of the session left can arrive after the
                // next one's first frame.
                let (tx, out) = unbounded_channel();
                let queued = Arc::new(AtomicUsize::new(0));
                let input_queued = self
                    .sessions
                    .get(&number)
                    .map(|(_, q, _)| q.clone())
                    .unwrap_or_default();
                self.to_conn(
                    id,
                    ConnCmd::Follow {
                        out,
                        queued: queued.clone(),
                        input_queued,
                    },
                );
                // A new follow's number: the session followed before may not write any more.
                let direct = self
                    .conns
                    .get(&id)
                    .map(|c| (c.outbox.clone(), c.outbox.next_follow()));
                let link = ClientLink {
                    tx,
                    cols,
                    rows,
                    queued,
                    watch,
                    direct,
                };
                let ev = WorldEvent::Client(ClientEvent::Attach { id, link, caps });
                self.to_session(number, ev);
                // The route the core chose, kept by the connection until the core changes it.
                if let Some(conn) = self.conns.get(&id) {
                    conn.route
                        .set(self.sessions.get(&number).map(|(tx, _, runtime)| Target {
                            tx: tx.clone(),
                            runtime: runtime.clone(),
                        }));
                }
            }
            ServerEffect::Unfollow { id, number } => {
                if let Some(conn) = self.conns.get(&id) {
                    conn.route.set(None);
                    conn.outbox.next_follow();
                }
                self.to_conn(id, ConnCmd::Unfollow);
                self.to_session(number, WorldEvent::Client(ClientEvent::Detach { id }));
            }
            ServerEffect::ToSession { number, ev } => {
                let ev = world(ev, &mut self.ticket);
                self.to_session(number, ev);
            }
            ServerEffect::Start(start) => {
                let (me, handles, kinds) = (self.me.clone(), self.handles.clone(), self.kinds.clone());
                tokio::spawn(async move {
                    let number = start.spec.number;
                    let result = session_thread::spawn(start, me, kinds).await;
                    let _ = handles.send(Handle::Session { number, result });
                });
            }
            ServerEffect::SaveList { seq, list } => self.saver.save(seq, list),
            ServerEffect::RunNotifyCommand(note) => {
                // Every browser that asked for pushes hears it too.
                super::web_push::push_note(&note);
                // The command may take its time: not on the server's thread.
                tokio::task::spawn_blocking(move || super::away_note::run_command(&note));
            }
            ServerEffect::Forget { id } => {
                self.conns.remove(&id);
            }
            ServerEffect::StartWeb { id, listen } => {
                let down = match crate::web::serve_here(listen.as_deref()) {
                    Ok(login) => {
                        let _ = self.me.send(ServerEvent::WebListening.into());
                        Down::WebLogin {
                            url: login.url,
                            login: login.token,
                            exposed: login.exposed,
                        }
                    }
                    Err(message) => Down::Error { message },
                };
                self.to_conn(id, ConnCmd::Down(down));
            }
            ServerEffect::Log(line) => eprintln!("pokeshell server: {line}"),
            ServerEffect::Restoring(n) => super::restoring::set(n),
        }
    }
}

/// What the core sends a session, as its loop hears it; keys take `ticket` with them.
fn world(msg: SessionMsg, ticket: &mut Option<Ticket>) -> WorldEvent {
    match msg {
        SessionMsg::Signal(signal) => WorldEvent::Signal(signal),
        SessionMsg::Notice(text) => WorldEvent::Notice(text),
        SessionMsg::Sessions(briefs) => WorldEvent::Sessions(briefs),
        SessionMsg::Request(req) => WorldEvent::Request(req),
        SessionMsg::Client(ev) => WorldEvent::Client(match ev {
            ClientMsg::Caps { id, caps } => ClientEvent::Caps { id, caps },
            ClientMsg::Detach { id } => ClientEvent::Detach { id },
            ClientMsg::Input { id, bytes } => ClientEvent::Input {
                id,
                bytes,
                ticket: ticket.take().unwrap_or_default(),
            },
            ClientMsg::Resize { id, cols, rows } => ClientEvent::Resize { id, cols, rows },
            ClientMsg::Resumed { id, cols, rows } => ClientEvent::Resumed { id, cols, rows },
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Issue 21, item 2: keys that came the long way carry their ticket to the session's loop, so
    /// they count against the client's bound until the loop has them; the core never holds it.
    #[test]
    fn keys_take_their_ticket_to_the_session_and_nothing_else_does() {
        let gauge = Arc::new(AtomicUsize::new(0));
        let mut ticket = Some(Ticket::new(&gauge, 3));
        let notice = world(SessionMsg::Notice("hi".into()), &mut ticket);
        assert!(matches!(notice, WorldEvent::Notice(_)));
        assert!(ticket.is_some(), "a notice takes no ticket");
        let keys = SessionMsg::Client(ClientMsg::Input {
            id: 1,
            bytes: b"xyz".to_vec(),
        });
        let ev = world(keys, &mut ticket);
        assert!(ticket.is_none(), "the keys took it");
        assert_eq!(gauge.load(Ordering::Acquire), 3, "counted while on their way");
        drop(ev);
        assert_eq!(gauge.load(Ordering::Acquire), 0, "the loop took them");
    }
}
