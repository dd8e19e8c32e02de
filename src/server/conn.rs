//! One client's connection to the server, and its one owner at a time, as tmux's server loop owns
//! each of its clients. After who it is (same uid, the token), a connection is one task: it reads
//! the client's socket and, when the server holds it, the client's terminal (`crate::ipc::terminal`);
//! it writes the server's messages and the screen's bytes, in the one order they were decided
//! ([`out`]). That task runs on the thread of the session the client follows, and on the server's
//! main thread while it follows none: when the core makes the client follow a session
//! ([`ConnCmd::Follow`]) the task ends where it runs and starts again on that session's runtime
//! with everything it holds (descriptors, unread bytes, what is left to write), and comes back
//! home when the client stops following ([`ConnCmd::Unfollow`]). A runtime that ends with the
//! connection on it (its session ended) sends it home too ([`Held`]).
//!
//! So a key has one way to pi: read by the session's thread, handed to the session's loop on that
//! thread. The terminal the server cannot hold is the client's (the fallback): the client reads it
//! and sends the keys on the socket, which the same task reads on the same thread. Keys typed while
//! the client follows no session go to the core, which keeps them for a session starting for the
//! client (typed ahead) or drops them. Everything else the client sends goes to the core, from
//! wherever the connection runs, and the connection reads nothing more until the core has handled
//! it ([`ConnCmd::Heard`]): no key overtakes a resize, the terminal's answers or an open. What the
//! core has for the session about the client (its answers, sizes, keys typed ahead) comes to the
//! session through the connection too ([`ConnCmd::ToSession`]), so the session hears a client's
//! coming, doings and going in the order they happened.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::BufReader;
use tokio::net::UnixStream;
use tokio::runtime::Handle as Runtime;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::perform::Handle;
use super::serve::{ServerEvent, ServerMsg};
use crate::ipc::halves::{self, WriteHalf};
use crate::ipc::socket;
use crate::server::event_loop::input_meter::{self, Ticket, Verdict};
use crate::server::event_loop::{ClientEvent, ClientOut, WorldEvent};
use out::{Mark, Outgoing, Piece, Term};
use pokeshell_core::wire::{self, Down, FrameBuf, Up};

mod out;
mod run;
#[cfg(test)]
mod tests;

/// How often a client typing into its session tells the core, which keeps the session used last.
const TYPED_EVERY: Duration = Duration::from_secs(1);
/// What a connection takes from the socket at once: many keys' frames.
const READ_BUFFER: usize = 16 * 1024;
/// The test hook under which the server never takes a terminal (read from the server's
/// environment), so that tests reach the client's own reading and writing of its terminal.
const KEEP_TERMINAL_HOOK: &str = "POKESHELL_TEST_KEEP_TERMINAL";

/// What the performer tells a connection, in the order the core decided it.
#[derive(Debug)]
pub enum ConnCmd {
    Down(Down),
    /// Follow this session from now on (and no other).
    Follow(Follow),
    /// Stop following any session.
    Unfollow,
    /// What the core sends the followed session about this client (its terminal's answers, a
    /// resize, a return from a suspension, keys typed ahead).
    ToSession(ClientEvent),
    /// The core has handled the last message the connection sent it.
    Heard,
}

/// A session, as a connection reaches it.
#[derive(Debug, Clone)]
pub struct Session {
    pub number: u32,
    /// Its loop, and the runtime its thread runs.
    pub tx: UnboundedSender<WorldEvent>,
    pub runtime: Runtime,
    /// Its program's input queue: reading the client stops while it is high (`input_meter`).
    pub input_queued: Arc<AtomicUsize>,
}

/// A session to follow, as the performer hands it over.
#[derive(Debug)]
pub struct Follow {
    pub session: Session,
    /// What the session sends this client, and its count of the bytes not written yet.
    pub out: UnboundedReceiver<ClientOut>,
    pub queued: Arc<AtomicUsize>,
    /// The client's coming, for the session's loop (its link to this connection, its size).
    pub attach: ClientEvent,
}

pub struct Conn {
    id: u64,
    socket: Arc<File>,
    term: Term,
    /// The client is stopped with pi: the shell has the terminal.
    paused: bool,
    /// The held terminal's keys are read (from its answers to the probe on).
    keys: bool,
    keys_after_caps: bool,
    /// The socket's bytes read and not handled yet.
    frames: FrameBuf,
    ctl: UnboundedReceiver<ConnCmd>,
    ctl_closed: bool,
    follow: Option<Session>,
    /// The followed session's runtime ended with the connection on it: it stays home.
    stranded: bool,
    /// The followed session's output for this client, and its count of the bytes in it.
    screen: Option<(UnboundedReceiver<ClientOut>, Arc<AtomicUsize>)>,
    out: Outgoing,
    /// A message went to the core and it has not handled it yet: nothing more is read.
    unheard: bool,
    /// The client's input is read (false after the socket's end, or once it was dropped).
    reading: bool,
    server: UnboundedSender<ServerMsg>,
    home: Runtime,
    /// The session whose runtime holds the connection; `None`: the server's own (home).
    place: Option<u32>,
    /// This client's input not yet taken by its session's loop (see `input_meter`).
    in_flight: Arc<AtomicUsize>,
    held_since: Option<Instant>,
    held_limit: Duration,
    told_typed: Option<Instant>,
    /// The connection is over: the last message is written, the socket failed or the server ends.
    done: bool,
}

fn refusal(reason: &str) -> Vec<u8> {
    wire::encode_down(&Down::Error {
        message: format!("refused: {reason}"),
    })
}

/// Serves one accepted connection until either side ends it.
pub async fn serve(
    id: u64,
    stream: UnixStream,
    token: Arc<str>,
    server: UnboundedSender<ServerMsg>,
    handles: UnboundedSender<Handle>,
) {
    // (A refusal is one small frame, which a fresh socket always has room for.)
    if let Err(reason) = socket::admit(&stream).await {
        let _ = stream.try_write(&refusal(&reason));
        return;
    }
    let socket: Arc<File> = match stream.into_std() {
        Ok(s) => Arc::new(OwnedFd::from(s).into()),
        Err(e) => return eprintln!("pokeshell server: cannot take a connection: {e}"),
    };
    let (rd, mut wr): (_, WriteHalf) = match halves::split(&socket) {
        Ok(halves) => halves,
        Err(e) => return eprintln!("pokeshell server: cannot take a connection: {e}"),
    };
    // A frame is read whole in one call where the socket has it whole.
    let mut rd = BufReader::with_capacity(READ_BUFFER, rd);
    if let Err(reason) = socket::read_hello(&mut rd, &token, socket::HELLO_TIMEOUT).await {
        // In the log too: a pokeshell of another version is told, and so is whoever reads the log.
        eprintln!("pokeshell server: a client's hello was refused: {reason}");
        let _ = wr.try_write(&refusal(&reason));
        return;
    }
    let mut frames = FrameBuf::new();
    frames.push(rd.buffer());
    drop((rd, wr));
    let (ctl_tx, ctl) = unbounded_channel();
    if handles.send(Handle::Conn { id, ctl: ctl_tx }).is_err() {
        return;
    }
    let mut conn = Conn::new(id, socket, ctl, server, Runtime::current());
    conn.frames = frames;
    conn.tell(Down::Welcome {
        server_pid: std::process::id(),
        restoring: super::restoring::pending(),
    });
    run(Held(Some(conn))).await;
}

/// A connection as a runtime holds it: dropped unfinished (its runtime ended with it), it goes
/// home, and does not go back to a session whose runtime ended.
struct Held(Option<Conn>);

impl Drop for Held {
    fn drop(&mut self) {
        let Some(mut conn) = self.0.take() else { return };
        // At home (or on its way there) when the server's own runtime ends: the server ends.
        if conn.place.is_none() {
            return;
        }
        conn.stranded = conn.follow.is_some();
        conn.place = None;
        let home = conn.home.clone();
        go(&home, conn);
    }
}

/// Starts the connection on `runtime`.
fn go(runtime: &Runtime, conn: Conn) {
    runtime.spawn(run(Held(Some(conn))));
}

/// Serves the connection on this runtime until it ends or goes elsewhere.
async fn run(mut held: Held) {
    let next = match held.0.as_mut() {
        Some(conn) => conn.serve_here().await,
        None => return,
    };
    let Some(mut conn) = held.0.take() else { return };
    match next {
        Some((runtime, place)) => {
            conn.place = place;
            go(&runtime, conn);
        }
        None => conn.end(),
    }
}

impl Conn {
    fn new(
        id: u64,
        socket: Arc<File>,
        ctl: UnboundedReceiver<ConnCmd>,
        server: UnboundedSender<ServerMsg>,
        home: Runtime,
    ) -> Conn {
        Conn {
            id,
            socket,
            term: Term::Client,
            paused: false,
            keys: false,
            keys_after_caps: false,
            frames: FrameBuf::new(),
            ctl,
            ctl_closed: false,
            follow: None,
            stranded: false,
            screen: None,
            out: Outgoing::default(),
            unheard: false,
            reading: true,
            server,
            home,
            place: None,
            in_flight: Arc::default(),
            held_since: None,
            held_limit: input_meter::held_limit(),
            told_typed: None,
            done: false,
        }
    }

    /// The session the connection follows, unless its runtime ended.
    fn session(&self) -> Option<&Session> {
        self.follow.as_ref().filter(|_| !self.stranded)
    }

    /// Where the connection belongs now, when it is not there.
    fn elsewhere(&self) -> Option<(Runtime, Option<u32>)> {
        let (place, runtime) = match self.session() {
            Some(s) => (Some(s.number), &s.runtime),
            None => (None, &self.home),
        };
        (place != self.place).then(|| (runtime.clone(), place))
    }

    /// A message for the client; the last one (detached, exited, an error) comes after what the
    /// session drew before it, and the client follows nothing from then on (as the core has it).
    fn tell(&mut self, down: Down) {
        let piece = Piece::message(&down);
        if matches!(piece, Piece::Message(_, Mark::Last)) {
            while let Some(Ok(o)) = self.screen.as_mut().map(|(rx, _)| rx.try_recv()) {
                self.drawn(Some(o));
            }
            self.unfollow();
        }
        self.out.push(piece);
    }

    /// One thing the followed session sent this client.
    fn drawn(&mut self, out: Option<ClientOut>) {
        match out {
            // The session's loop let go of this client.
            None => self.screen = None,
            Some(ClientOut::Bytes(bytes)) => {
                if let Some((_, queued)) = &self.screen {
                    queued.fetch_sub(bytes.len(), Ordering::AcqRel);
                }
                self.out.push(Piece::Screen(bytes));
            }
            // The shell has the terminal until the client is back (`Up::Resumed`).
            Some(ClientOut::Suspend) => self.tell(Down::Suspend),
            Some(ClientOut::Size { cols, rows }) => self.tell(Down::Size { cols, rows }),
        }
    }

    fn command(&mut self, cmd: ConnCmd) {
        match cmd {
            ConnCmd::Down(down) => self.tell(down),
            ConnCmd::Follow(f) => {
                self.unfollow();
                let _ = f.session.tx.send(WorldEvent::Client(f.attach));
                self.screen = Some((f.out, f.queued));
                self.follow = Some(f.session);
                self.stranded = false;
            }
            ConnCmd::Unfollow => self.unfollow(),
            ConnCmd::ToSession(ev) => self.to_session(ev),
            ConnCmd::Heard => self.unheard = false,
        }
    }

    fn to_session(&self, ev: ClientEvent) {
        if let Some(s) = self.session() {
            let _ = s.tx.send(WorldEvent::Client(ev));
        }
    }

    /// The client leaves the session it follows; the session hears it after the client's last key.
    fn unfollow(&mut self) {
        self.to_session(ClientEvent::Detach { id: self.id });
        self.follow = None;
        self.screen = None;
    }

    /// Keys typed in the client: to the session it follows, from its own thread; else to the core.
    fn key(&mut self, bytes: Vec<u8>) {
        let ticket = Ticket::new(&self.in_flight, bytes.len());
        let id = self.id;
        match self.session() {
            Some(s) => {
                let _ =
                    s.tx.send(WorldEvent::Client(ClientEvent::Input { id, bytes, ticket }));
                if self.told_typed.is_none_or(|t| t.elapsed() >= TYPED_EVERY) {
                    self.told_typed = Some(Instant::now());
                    let _ = self.server.send(ServerEvent::Typed { id }.into());
                }
            }
            None => self.send_core(ServerMsg::Input { id, bytes, ticket }),
        }
    }

    /// Anything but keys: to the core, which decides.
    fn message(&mut self, up: Up) {
        match &up {
            Up::Open {
                terminal: Some(path),
                caps_follow,
                ..
            } if matches!(self.term, Term::Client) => {
                let opened = std::env::var_os(KEEP_TERMINAL_HOOK)
                    .is_none()
                    .then(|| crate::ipc::terminal::open(path).ok())
                    .flatten();
                let taken = opened.is_some();
                if let Some(fd) = opened {
                    self.term = Term::Held(Arc::new(fd));
                }
                // Until the probe's answers are in, the client reads them there itself.
                (self.keys, self.keys_after_caps) = (taken && !*caps_follow, taken && *caps_follow);
                self.tell(Down::Terminal { taken });
            }
            Up::Caps(_) if self.keys_after_caps => (self.keys, self.keys_after_caps) = (true, false),
            // The client has its terminal back from the shell.
            Up::Resumed { .. } => self.paused = false,
            _ => {}
        }
        self.send_core(ServerEvent::Up { id: self.id, up }.into());
    }

    fn send_core(&mut self, msg: ServerMsg) {
        self.unheard = true;
        if self.server.send(msg).is_err() {
            self.done = true;
        }
    }

    /// Whether the client's input may be read now ([`input_meter::verdict`]); a client held back
    /// too long is dropped (the core tells it why).
    fn input_room(&mut self) -> bool {
        let queued = self
            .follow
            .as_ref()
            .map_or(0, |s| s.input_queued.load(Ordering::Acquire));
        let held = self.held_since.map_or(Duration::ZERO, |t| t.elapsed());
        match input_meter::verdict(
            self.in_flight.load(Ordering::Acquire),
            queued,
            held,
            self.held_limit,
        ) {
            Verdict::Read => {
                self.held_since = None;
                true
            }
            Verdict::Wait => {
                self.held_since.get_or_insert_with(Instant::now);
                false
            }
            Verdict::Drop(reason) => {
                self.garbage(reason);
                false
            }
        }
    }

    /// The client is dropped: it is read no more, and the core tells it why.
    fn garbage(&mut self, reason: String) {
        (self.reading, self.keys) = (false, false);
        let _ = self
            .server
            .send(ServerEvent::Garbage { id: self.id, reason }.into());
    }

    /// The connection is over: the session and the core hear it, the descriptors close.
    fn end(mut self) {
        self.unfollow();
        let _ = self.server.send(ServerEvent::Gone { id: self.id }.into());
    }
}
