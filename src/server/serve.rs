//! The server process: listens on the per-user socket, keeps the sessions (each in its own thread)
//! and the clients, and routes between them. It outlives the terminals that started it and ends
//! when its last session ends, or on SIGTERM (the sessions are saved and come back with the next
//! server).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::conn::{self, ConnCmd};
use super::observer::Report;
use super::session_thread;
use super::socket::Listening;
use super::table::Table;
use super::wire::{Down, Up};
use crate::event_loop::{Signal, WorldEvent};
use crate::session::WorkspaceRequest;

/// How long the server waits for its clients to read their last message before it exits.
const FAREWELL_GRACE: Duration = Duration::from_secs(2);
/// The size of a session started with nobody attached, until a client comes.
pub(super) const DETACHED_SIZE: (u16, u16) = (120, 40);

/// What reaches the server's state.
#[derive(Debug)]
pub enum ServerMsg {
    Connected {
        id: u64,
        ctl: UnboundedSender<ConnCmd>,
    },
    Up {
        id: u64,
        up: Up,
    },
    /// Keys typed in a client, counted against its input bound until the session's loop takes them.
    Input {
        id: u64,
        bytes: Vec<u8>,
        ticket: super::input_meter::Ticket,
    },
    /// The client sent something that is not a message: it is dropped.
    Garbage {
        id: u64,
        reason: String,
    },
    Gone {
        id: u64,
    },
    /// The user asked, from a session's keys, for something beyond it.
    Request {
        id: u64,
        req: WorkspaceRequest,
    },
    Report {
        number: u32,
        report: Report,
    },
    Ended {
        number: u32,
        code: i32,
        shutdown: bool,
        farewell: Vec<u8>,
    },
    /// A saved session's start, done in the background, came back.
    Restored {
        number: u32,
        ready: Result<session_thread::Ready, String>,
        note: Option<String>,
    },
    /// SIGTERM or SIGINT: end every session, keep them saved, exit.
    Shutdown,
    /// SIGUSR1: drop every session's bridge connection.
    DropBridges,
    /// A session nobody is attached to wants the user: to the terminals showing other sessions, or
    /// to `pokeshell.notifyCommand` when there are none.
    Notify(super::remote_screen::AwayNote),
}

pub(super) struct Client {
    pub(super) ctl: UnboundedSender<ConnCmd>,
    pub(super) session: Option<u32>,
    pub(super) cols: u16,
    pub(super) rows: u16,
    pub(super) caps: Vec<u8>,
    /// The terminal's answers are still coming ([`Up::Caps`]).
    pub(super) caps_pending: bool,
    pub(super) env: Vec<(String, String)>,
}

pub(super) struct Running {
    pub(super) tx: UnboundedSender<WorldEvent>,
    /// Input queued for the session's program and not yet written (see `input_meter`).
    pub(super) input_queued: Arc<std::sync::atomic::AtomicUsize>,
    pub(super) clients: BTreeSet<u64>,
}

pub struct Server {
    pub(super) me: UnboundedSender<ServerMsg>,
    pub(super) table: Table,
    pub(super) sessions: HashMap<u32, Running>,
    pub(super) clients: BTreeMap<u64, Client>,
    /// Sessions being ended by `pokeshell kill`: gone for good once they end.
    pub(super) killing: BTreeSet<u32>,
    /// The terminal capabilities the last client brought, for sessions started with nobody there.
    pub(super) last_caps: Vec<u8>,
    pub(super) shutting_down: bool,
    pub(super) store: Option<std::path::PathBuf>,
    /// What happened without anyone asking, for the next client.
    pub(super) news: super::news::News,
    /// Clients waiting to attach to a saved session still being brought back: (client, session).
    pub(super) awaiting: Vec<(u64, u32)>,
}

pub(super) fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Leaves the process that started the server: forks, the parent exits at once and the child goes
/// on in a session of its own. The server is then nobody's child but init's (or a subreaper's), so a
/// client that ends its own children on the way out cannot end it, and no terminal's hangup reaches
/// it. Must be called before any thread starts.
pub fn detach_from_parent() -> Result<()> {
    // SAFETY: fork before any other thread exists; the child only goes on with plain Rust code.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()).context("cannot fork the server"),
        0 => {
            // SAFETY: setsid in the new child, which leads no process group. It fails only for a
            // group leader, which the child of a fork never is.
            unsafe { libc::setsid() };
            Ok(())
        }
        // SAFETY: _exit ends the first process at once, as intended.
        _ => unsafe { libc::_exit(0) },
    }
}

/// Runs the server until it has no session left, or is told to end.
pub fn run() -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(serve())
}

async fn serve() -> Result<()> {
    let listening = Listening::bind().context("cannot listen")?;
    // The panes show the children's own colours, which NO_COLOR does not govern (see
    // `TerminalGuard::enter`); the server draws them for its clients.
    crossterm::style::Colored::set_ansi_color_disabled(false);
    crate::host::install_panic_hook();
    crate::reaper::adopt_orphans(crate::pty::live_children);
    let (tx, mut rx) = unbounded_channel::<ServerMsg>();
    for kind in [SignalKind::terminate(), SignalKind::interrupt()] {
        let mut stream = signal(kind).context("cannot watch SIGTERM")?;
        let tx = tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                let _ = tx.send(ServerMsg::Shutdown);
            }
        });
    }
    // A debugging aid, as for pokeshell in a terminal: every session's bridge connection is dropped
    // (the bridge inside pi connects again).
    let mut usr1 = signal(SignalKind::user_defined1()).context("cannot watch SIGUSR1")?;
    let usr1_tx = tx.clone();
    tokio::spawn(async move {
        while usr1.recv().await.is_some() {
            let _ = usr1_tx.send(ServerMsg::DropBridges);
        }
    });
    // The server has no terminal to hang up; a stray SIGHUP must not end it.
    let mut hup = signal(SignalKind::hangup()).context("cannot watch SIGHUP")?;
    tokio::spawn(async move { while hup.recv().await.is_some() {} });
    let token: Arc<str> = Arc::from(listening.token.as_str());
    let accept_tx = tx.clone();
    let listening = Arc::new(listening);
    let accepting = listening.clone();
    tokio::spawn(async move {
        let mut next = 1u64;
        loop {
            match accepting.listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(conn::serve(next, stream, token.clone(), accept_tx.clone()));
                    next += 1;
                }
                Err(e) => {
                    eprintln!("pokeshell server: cannot accept a client: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    let mut server = Server {
        me: tx,
        table: Table::default(),
        sessions: HashMap::new(),
        clients: BTreeMap::new(),
        killing: BTreeSet::new(),
        last_caps: Vec::new(),
        shutting_down: false,
        store: crate::server_store::default_path(),
        news: Default::default(),
        awaiting: Vec::new(),
    };
    server.restore_saved();
    while let Some(msg) = rx.recv().await {
        server.handle(msg).await;
        if server.done() {
            break;
        }
    }
    // Let the clients read their last message (an exit, a detach) before the runtime ends.
    let deadline = tokio::time::Instant::now() + FAREWELL_GRACE;
    while !server.clients.is_empty() {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(ServerMsg::Gone { id })) => {
                server.clients.remove(&id);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    // Dropping the listener removes the socket, token and pid files.
    drop(listening);
    Ok(())
}

impl Server {
    /// Nothing left to serve: no session, and nobody connected who may ask for one.
    fn done(&self) -> bool {
        self.sessions.is_empty() && (self.shutting_down || (self.table.is_empty() && self.clients.is_empty()))
    }

    async fn handle(&mut self, msg: ServerMsg) {
        match msg {
            ServerMsg::Connected { id, ctl } => {
                self.clients.insert(
                    id,
                    Client {
                        ctl,
                        session: None,
                        cols: 80,
                        rows: 24,
                        caps: Vec::new(),
                        caps_pending: false,
                        env: Vec::new(),
                    },
                );
            }
            ServerMsg::Up { id, up } => self.on_up(id, up).await,
            ServerMsg::Input { id, bytes, ticket } => self.on_input(id, bytes, ticket),
            ServerMsg::Garbage { id, reason } => {
                self.tell(
                    id,
                    Down::Error {
                        message: format!("the server dropped this client: {reason}"),
                    },
                );
                self.leave(id);
                self.clients.remove(&id);
            }
            ServerMsg::Gone { id } => {
                self.leave(id);
                self.clients.remove(&id);
            }
            ServerMsg::Request { id, req } => self.on_request(id, req).await,
            ServerMsg::Restored { number, ready, note } => self.on_restored(number, ready, note),
            ServerMsg::Report { number, report } => self.on_report(number, report),
            ServerMsg::Ended {
                number,
                code,
                shutdown,
                farewell,
            } => {
                let kill = self.killing.remove(&number);
                if let Some(run) = self.sessions.remove(&number) {
                    for id in run.clients {
                        // The connection writes what the session drew before this last word.
                        self.tell(
                            id,
                            if shutdown && !kill {
                                Down::Detached {
                                    reason: session_thread::SHUTTING_DOWN.to_string(),
                                }
                            } else {
                                Down::Exited {
                                    code,
                                    farewell: farewell.clone(),
                                }
                            },
                        );
                        if let Some(c) = self.clients.get_mut(&id) {
                            c.session = None;
                        }
                    }
                }
                if kill || !shutdown {
                    self.table.remove(number);
                    self.share_briefs();
                }
                if !self.shutting_down {
                    self.save();
                }
            }
            ServerMsg::Notify(note) => {
                let watching: Vec<u64> = self
                    .clients
                    .iter()
                    .filter(|(_, c)| c.session.is_some())
                    .map(|(id, _)| *id)
                    .collect();
                if watching.is_empty() {
                    note.run_command();
                }
                for id in watching {
                    self.tell(id, Down::Output(note.bytes()));
                }
            }
            ServerMsg::DropBridges => {
                for run in self.sessions.values() {
                    let _ = run.tx.send(WorldEvent::Signal(Signal::Usr1));
                }
            }
            ServerMsg::Shutdown => {
                if !self.shutting_down {
                    self.shutting_down = true;
                    self.save();
                    for run in self.sessions.values() {
                        let _ = run.tx.send(WorldEvent::Signal(Signal::Term));
                    }
                }
            }
        }
    }

    /// How many clients follow session `n`.
    pub(super) fn attached(&self, n: u32) -> usize {
        self.sessions.get(&n).map_or(0, |run| run.clients.len())
    }

    pub(super) fn tell(&self, id: u64, down: Down) {
        if let Some(c) = self.clients.get(&id) {
            let _ = c.ctl.send(ConnCmd::Down(down));
        }
    }

    pub(super) fn to_session(&self, n: u32, ev: WorldEvent) {
        if let Some(run) = self.sessions.get(&n) {
            let _ = run.tx.send(ev);
        }
    }

    fn on_report(&mut self, number: u32, report: Report) {
        let Some(e) = self.table.get_mut(number) else {
            return;
        };
        // A relaunched pi says which file it runs on only once its bridge is up: the file known
        // from before stays until then.
        let session_file = report.session_file.clone().or_else(|| e.session_file.clone());
        let saved_changed = e.session_file != session_file || e.mid_run != report.mid_run;
        e.session_file = session_file;
        e.mid_run = report.mid_run;
        let brief_changed = report.brief.is_some() && e.brief != report.brief;
        if report.brief.is_some() {
            e.brief = report.brief;
        }
        // While shutting down, the list saved at the signal stands: a run pi gives up as it is ended
        // is still the run the next server must resume.
        if saved_changed && !self.shutting_down {
            self.save();
        }
        if brief_changed {
            self.share_briefs();
        }
    }

    /// Every session hears of every other (its side pane lists them, its switcher offers them).
    pub(super) fn share_briefs(&self) {
        let briefs = self.table.briefs(|n| self.attached(n));
        for run in self.sessions.values() {
            let _ = run.tx.send(WorldEvent::Sessions(briefs.clone()));
        }
    }
}
