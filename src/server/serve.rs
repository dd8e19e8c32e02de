//! The server process: listens on the per-user socket, keeps the sessions (each in its own thread)
//! and the clients, and routes between them. It outlives the terminals that started it and ends
//! when its last session ends, or on SIGTERM (the sessions are saved and come back with the next
//! server).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::conn::{self, ConnCmd};
use super::observer::Report;
use super::session_thread::{self, SessionStart};
use super::socket::Listening;
use super::table::Table;
use super::wire::{Down, Target, Up};
use crate::event_loop::{ClientEvent, ClientLink, Signal, WorldEvent};
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
    /// SIGTERM or SIGINT: end every session, keep them saved, exit.
    Shutdown,
    /// SIGUSR1: drop every session's bridge connection.
    DropBridges,
}

struct Client {
    ctl: UnboundedSender<ConnCmd>,
    session: Option<u32>,
    cols: u16,
    rows: u16,
    caps: Vec<u8>,
    /// The terminal's answers are still coming ([`Up::Caps`]).
    caps_pending: bool,
    env: Vec<(String, String)>,
}

struct Running {
    tx: UnboundedSender<WorldEvent>,
    clients: BTreeSet<u64>,
}

pub struct Server {
    me: UnboundedSender<ServerMsg>,
    pub(super) table: Table,
    sessions: HashMap<u32, Running>,
    clients: BTreeMap<u64, Client>,
    /// Sessions being ended by `pokeshell kill`: gone for good once they end.
    killing: BTreeSet<u32>,
    /// The terminal capabilities the last client brought, for sessions started with nobody there.
    last_caps: Vec<u8>,
    shutting_down: bool,
    pub(super) store: Option<std::path::PathBuf>,
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
    };
    server.restore_saved().await;
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
                        // Most heard it from the session's loop already; one that attached as the
                        // program ended did not.
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

    fn tell(&self, id: u64, down: Down) {
        if let Some(c) = self.clients.get(&id) {
            let _ = c.ctl.send(ConnCmd::Down(down));
        }
    }

    async fn on_up(&mut self, id: u64, up: Up) {
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
                cwd: _,
            } => {
                if let Some(c) = self.clients.get_mut(&id) {
                    (c.cols, c.rows, c.env) = (cols, rows, env);
                    c.caps_pending = caps_follow;
                    if !caps.is_empty() {
                        c.caps = caps.clone();
                        self.last_caps = caps;
                    }
                }
                let number = match target {
                    Target::Attach { name } => self.table.find(name.as_deref()),
                    Target::New {
                        name,
                        dir,
                        args,
                        command: _,
                    } => self.create(id, name.as_deref(), &dir, args).await,
                };
                match number {
                    Ok(n) => self.attach(id, n),
                    Err(message) => self.tell(id, Down::Error { message }),
                }
            }
            Up::Caps(caps) => {
                let Some(c) = self.clients.get_mut(&id) else {
                    return;
                };
                c.caps_pending = false;
                c.caps = caps.clone();
                if !caps.is_empty() {
                    self.last_caps = caps.clone();
                }
                if let Some(n) = c.session {
                    self.to_session(n, WorldEvent::Client(ClientEvent::Caps { caps }));
                }
            }
            Up::Input(bytes) => {
                if let Some(n) = self.clients.get(&id).and_then(|c| c.session) {
                    self.table.touch(n);
                    self.to_session(n, WorldEvent::Client(ClientEvent::Input { id, bytes }));
                }
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
            Up::Detach => {
                let name = self.following(id).map(|n| n.to_string()).unwrap_or_default();
                self.leave(id);
                self.tell(
                    id,
                    Down::Detached {
                        reason: format!("detached from {name}"),
                    },
                );
            }
            Up::List => {
                let listing = self.table.listing(wall_ms());
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

    /// "3:api", as the user sees a session named.
    fn label(&self, n: u32) -> String {
        self.table
            .get(n)
            .map_or_else(|| n.to_string(), |e| format!("{}:{}", e.number, e.name))
    }

    fn following(&self, id: u64) -> Option<String> {
        let n = self.clients.get(&id)?.session?;
        Some(self.label(n))
    }

    async fn on_request(&mut self, id: u64, req: WorkspaceRequest) {
        let current = self.clients.get(&id).and_then(|c| c.session);
        match req {
            WorkspaceRequest::Detach => {
                let name = self.following(id).unwrap_or_default();
                self.leave(id);
                self.tell(
                    id,
                    Down::Detached {
                        reason: format!("detached from {name}"),
                    },
                );
            }
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

    fn to_session(&self, n: u32, ev: WorldEvent) {
        if let Some(run) = self.sessions.get(&n) {
            let _ = run.tx.send(ev);
        }
    }

    /// Starts a session for client `id` (its size, environment and terminal) in `dir`.
    async fn create(
        &mut self,
        id: u64,
        name: Option<&str>,
        dir: &str,
        argv: Vec<String>,
    ) -> Result<u32, String> {
        let meta = std::fs::metadata(dir).map_err(|e| format!("{dir}: {e}"))?;
        if !meta.is_dir() {
            return Err(format!("{dir} is not a directory"));
        }
        let (cols, rows, env, waiting) = self
            .clients
            .get(&id)
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
        let env = if env.is_empty() {
            std::env::vars().collect()
        } else {
            env
        };
        let number = self.table.add(name, dir, argv.clone(), wall_ms())?;
        let name = self.table.get(number).map(|e| e.name.clone()).unwrap_or_default();
        let start = SessionStart {
            number,
            name,
            dir: dir.to_string(),
            argv,
            env,
            cols,
            rows,
            caps_now,
            resume: false,
        };
        match self.start(start).await {
            Ok(()) => {
                self.save();
                Ok(number)
            }
            Err(e) => {
                self.table.remove(number);
                Err(e)
            }
        }
    }

    /// Starts a session's thread and keeps it among the running ones.
    pub(super) async fn start(&mut self, start: SessionStart) -> Result<(), String> {
        let number = start.number;
        let tx = session_thread::spawn(start, self.me.clone()).await?;
        self.sessions.insert(
            number,
            Running {
                tx,
                clients: BTreeSet::new(),
            },
        );
        Ok(())
    }

    /// Client `id` follows session `n` from now on (and leaves the one it followed).
    fn attach(&mut self, id: u64, n: u32) {
        if !self.sessions.contains_key(&n) {
            self.tell(
                id,
                Down::Error {
                    message: format!("session {} is not running", self.label(n)),
                },
            );
            return;
        }
        self.leave(id);
        let Some(c) = self.clients.get_mut(&id) else {
            return;
        };
        c.session = Some(n);
        let (out_tx, out_rx) = unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let _ = c.ctl.send(ConnCmd::Follow {
            out: out_rx,
            queued: queued.clone(),
        });
        let link = ClientLink {
            tx: out_tx,
            cols: c.cols,
            rows: c.rows,
            queued,
        };
        let caps = if c.caps_pending {
            None
        } else if c.caps.is_empty() {
            Some(self.last_caps.clone())
        } else {
            Some(c.caps.clone())
        };
        self.table.touch(n);
        if let Some(run) = self.sessions.get_mut(&n) {
            run.clients.insert(id);
            let _ = run
                .tx
                .send(WorldEvent::Client(ClientEvent::Attach { id, link, caps }));
        }
        if let Some(e) = self.table.get_mut(n) {
            e.attached += 1;
        }
        self.share_briefs();
        let label = self.label(n);
        self.tell(id, Down::Attached { name: label });
    }

    /// Client `id` stops following its session, if it follows one.
    fn leave(&mut self, id: u64) {
        let Some(c) = self.clients.get_mut(&id) else {
            return;
        };
        let Some(n) = c.session.take() else {
            return;
        };
        let _ = c.ctl.send(ConnCmd::Unfollow);
        if let Some(run) = self.sessions.get_mut(&n) {
            run.clients.remove(&id);
            let _ = run.tx.send(WorldEvent::Client(ClientEvent::Detach { id }));
        }
        if let Some(e) = self.table.get_mut(n) {
            e.attached = e.attached.saturating_sub(1);
        }
        self.share_briefs();
    }

    fn on_report(&mut self, number: u32, report: Report) {
        let Some(e) = self.table.get_mut(number) else {
            return;
        };
        let saved_changed = e.session_file != report.session_file || e.mid_run != report.mid_run;
        e.session_file = report.session_file.clone();
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
    fn share_briefs(&self) {
        let briefs = self.table.briefs();
        for run in self.sessions.values() {
            let _ = run.tx.send(WorldEvent::Sessions(briefs.clone()));
        }
    }
}

/// A pokeshell command line without pi's arguments (those after `--`).
fn options_only(argv: &[String]) -> Vec<String> {
    argv.iter().take_while(|a| *a != "--").cloned().collect()
}
