//! The server's state's hands: performs each [`ServerEffect`] on the connections, the session
//! threads and the disk, and keeps the only things the state must not hold, the channels to them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::conn::{ConnCmd, Follow, Session};
use super::kind::Kinds;
use super::saver::Saver;
use super::serve::ServerMsg;
use super::session_thread;
use crate::server::event_loop::input_meter::Ticket;
use crate::server::event_loop::{ClientEvent, ClientLink, Clock, WorldEvent};
use pokeshell_core::server::state::{ClientMsg, SessionMsg};
use pokeshell_core::server::state::{ServerEffect, ServerEvent, ServerState};
use pokeshell_core::wire::Down;

/// A channel to something the state talks to, from where it was made to the performer. Handles
/// travel apart from the events and are taken first, so a handle always arrives before anything
/// its owner sent after it.
pub enum Handle {
    /// A client passed the socket's checks: where its connection hears what the core decided.
    Conn { id: u64, ctl: UnboundedSender<ConnCmd> },
    /// A session's thread runs (its loop's events) or could not start.
    Session {
        number: u32,
        result: Result<session_thread::Ready, String>,
    },
}

pub struct Performer {
    pub state: ServerState,
    clock: Clock,
    me: UnboundedSender<ServerMsg>,
    handles: UnboundedSender<Handle>,
    /// Each client's connection, wherever it runs.
    conns: HashMap<u64, UnboundedSender<ConnCmd>>,
    /// Each running session's loop, and its program's input queue (see `input_meter`).
    sessions: HashMap<u32, session_thread::Ready>,
    saver: Saver,
    /// The kinds of session besides pokeshell's own (`kind.rs`).
    kinds: Kinds,
    /// The ticket of the keys the core is deciding about (`on_msg`).
    ticket: Option<Ticket>,
    /// Where the pushes to the person's phone go (`push.rs`).
    pusher: super::push::Pusher,
    /// The one timer the list of events that need the person asked for.
    away_timer: Option<tokio::task::JoinHandle<()>>,
}

impl Performer {
    pub fn new(
        me: UnboundedSender<ServerMsg>,
        handles: UnboundedSender<Handle>,
        saver: Saver,
        kinds: Kinds,
    ) -> Self {
        let pusher = super::push::Pusher::start();
        // Every push goes to the browsers that asked for Web Push too (`web_push.rs`).
        super::web_push::follow(&pusher);
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
            pusher,
            away_timer: None,
        }
    }

    /// Wakes the core's list of events at `at` (mono ms on the core's clock), instead of any time
    /// asked before.
    fn away_timer(&mut self, at: Option<u64>) {
        if let Some(old) = self.away_timer.take() {
            old.abort();
        }
        let Some(at) = at else {
            return;
        };
        let now = self.clock.now(tokio::time::Instant::now());
        let wait = Duration::from_millis(at.saturating_sub(now.mono_ms));
        let me = self.me.clone();
        self.away_timer = Some(tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let _ = me.send(ServerEvent::AwayTick.into());
        }));
    }

    /// A channel arrived: kept, and the state hears what it means.
    pub fn on_handle(&mut self, handle: Handle) {
        match handle {
            Handle::Conn { id, ctl } => {
                self.conns.insert(id, ctl);
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
        // After its effects: the client's connection reads on once what the core passed on for it
        // is on its way, so that its next key never overtakes it.
        if let Some(id) = from {
            self.to_conn(id, ConnCmd::Heard);
        }
    }

    fn to_session(&self, number: u32, ev: WorldEvent) {
        if let Some((tx, _, _)) = self.sessions.get(&number) {
            let _ = tx.send(ev);
        }
    }

    fn to_conn(&self, id: u64, cmd: ConnCmd) {
        if let Some(ctl) = self.conns.get(&id) {
            let _ = ctl.send(cmd);
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
                let Some((tx, input_queued, runtime)) = self.sessions.get(&number) else {
                    return;
                };
                let session = Session {
                    number,
                    tx: tx.clone(),
                    runtime: runtime.clone(),
                    input_queued: input_queued.clone(),
                };
                // A fresh channel per follow: nothing of the session left can arrive after the
                // next one's first frame.
                let (tx, out) = unbounded_channel();
                let queued = Arc::new(AtomicUsize::new(0));
                let link = ClientLink {
                    tx,
                    cols,
                    rows,
                    queued: queued.clone(),
                    watch,
                };
                let follow = Follow {
                    session,
                    out,
                    queued,
                    attach: ClientEvent::Attach { id, link, caps },
                };
                self.to_conn(id, ConnCmd::Follow(follow));
            }
            // The connection tells the session, after the client's last key.
            ServerEffect::Unfollow { id, .. } => self.to_conn(id, ConnCmd::Unfollow),
            ServerEffect::ToSession {
                ev: SessionMsg::Client(msg),
                ..
            } => {
                let (id, ev) = client_event(msg, &mut self.ticket);
                self.to_conn(id, ConnCmd::ToSession(ev));
            }
            ServerEffect::ToSession { number, ev } => self.to_session(number, world(ev)),
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
            ServerEffect::WebLogoutAll { id } => {
                let message = crate::web::logout_all().said();
                self.to_conn(id, ConnCmd::Down(Down::Done { message }));
            }
            ServerEffect::Log(line) => eprintln!("pokeshell server: {line}"),
            ServerEffect::Restoring(n) => super::restoring::set(n),
            ServerEffect::Push(push) => self.pusher.push(push),
            ServerEffect::AwayTimer(at) => self.away_timer(at),
        }
    }
}

/// What the core sends a session, as its loop hears it (a client's doings go through its
/// connection: [`client_event`]).
fn world(msg: SessionMsg) -> WorldEvent {
    match msg {
        SessionMsg::Signal(signal) => WorldEvent::Signal(signal),
        SessionMsg::Notice(text) => WorldEvent::Notice(text),
        SessionMsg::Sessions(briefs) => WorldEvent::Sessions(briefs),
        SessionMsg::Request(req) => WorldEvent::Request(req),
        SessionMsg::Drive(msg) => WorldEvent::Drive(msg),
        SessionMsg::Away(answer) => WorldEvent::Away(answer),
        SessionMsg::Guard(order) => WorldEvent::Guard(order),
        SessionMsg::Client(ev) => WorldEvent::Client(client_event(ev, &mut None).1),
    }
}

/// What the core has for a session about client `id`, as the loop hears it; keys take `ticket`
/// with them.
fn client_event(msg: ClientMsg, ticket: &mut Option<Ticket>) -> (u64, ClientEvent) {
    match msg {
        ClientMsg::Caps { id, caps } => (id, ClientEvent::Caps { id, caps }),
        ClientMsg::Detach { id } => (id, ClientEvent::Detach { id }),
        ClientMsg::Input { id, bytes } => {
            let ticket = ticket.take().unwrap_or_default();
            (id, ClientEvent::Input { id, bytes, ticket })
        }
        ClientMsg::Resize { id, cols, rows } => (id, ClientEvent::Resize { id, cols, rows }),
        ClientMsg::Resumed { id, cols, rows } => (id, ClientEvent::Resumed { id, cols, rows }),
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
        let resize = ClientMsg::Resize {
            id: 1,
            cols: 80,
            rows: 24,
        };
        let (id, resize) = client_event(resize, &mut ticket);
        assert!(id == 1 && matches!(resize, ClientEvent::Resize { .. }));
        assert!(ticket.is_some(), "a resize takes no ticket");
        let keys = ClientMsg::Input {
            id: 1,
            bytes: b"xyz".to_vec(),
        };
        let (_, ev) = client_event(keys, &mut ticket);
        assert!(ticket.is_none(), "the keys took it");
        assert_eq!(gauge.load(Ordering::Acquire), 3, "counted while on their way");
        drop(ev);
        assert_eq!(gauge.load(Ordering::Acquire), 0, "the loop took them");
    }
}
