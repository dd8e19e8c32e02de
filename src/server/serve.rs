//! The server process: listens on the per-user socket, forwards signals, and runs the main loop that
//! feeds every event to the server's state ([`super::state`], pure) through its performer
//! ([`super::perform`]). It outlives the terminals that started it and ends when its last session
//! ends, or on SIGTERM (the sessions are saved and come back with the next server).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::unbounded_channel;

use super::conn;
use super::kind::Kinds;
use super::perform::{Handle, Performer};
use super::saver::Saver;
use crate::ipc::socket::Listening;
pub use pokeshell_core::server::state::ServerEvent;

/// How long the server waits for its clients to read their last message before it exits.
const FAREWELL_GRACE: Duration = Duration::from_secs(2);

/// What reaches the server's main loop: an event for the core, or keys that came the long way with
/// their input meter's ticket. The ticket stays out of the core: it goes with the keys to the
/// session's loop when the core sends them there, and is dropped (the bytes no longer counted) when
/// the core does not.
// Nearly every message is an event, which went by value before: boxing it would allocate each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum ServerMsg {
    Event(ServerEvent),
    Input {
        id: u64,
        bytes: Vec<u8>,
        ticket: crate::server::event_loop::input_meter::Ticket,
    },
}

impl From<ServerEvent> for ServerMsg {
    fn from(ev: ServerEvent) -> Self {
        ServerMsg::Event(ev)
    }
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

/// Runs the server until it has no session left, or is told to end; `kinds` are the kinds of
/// session it runs besides its own.
pub fn run(kinds: Kinds) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(serve(kinds))
}

async fn serve(kinds: Kinds) -> Result<()> {
    let listening = Listening::bind().context("cannot listen")?;
    // The panes show the children's own colours, which NO_COLOR does not govern (see
    // `TerminalGuard::enter`); the server draws them for its clients.
    crossterm::style::Colored::set_ansi_color_disabled(false);
    crate::term::host::install_panic_hook();
    crate::term::reaper::adopt_orphans(crate::term::pty::live_children);
    let (tx, mut rx) = unbounded_channel::<ServerMsg>();
    let (handle_tx, mut handle_rx) = unbounded_channel::<Handle>();
    for kind in [SignalKind::terminate(), SignalKind::interrupt()] {
        let mut stream = signal(kind).context("cannot watch SIGTERM")?;
        let tx = tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                let _ = tx.send(ServerEvent::Shutdown.into());
            }
        });
    }
    // A debugging aid, as for pokeshell in a terminal: every session's bridge connection is dropped
    // (the bridge inside pi connects again).
    let mut usr1 = signal(SignalKind::user_defined1()).context("cannot watch SIGUSR1")?;
    let usr1_tx = tx.clone();
    tokio::spawn(async move {
        while usr1.recv().await.is_some() {
            let _ = usr1_tx.send(ServerEvent::DropBridges.into());
        }
    });
    // The server has no terminal to hang up; a stray SIGHUP must not end it.
    let mut hup = signal(SignalKind::hangup()).context("cannot watch SIGHUP")?;
    tokio::spawn(async move { while hup.recv().await.is_some() {} });
    let token: Arc<str> = Arc::from(listening.token.as_str());
    let accept_tx = tx.clone();
    let accept_handles = handle_tx.clone();
    let listening = Arc::new(listening);
    let accepting = listening.clone();
    tokio::spawn(async move {
        let mut next = 1u64;
        loop {
            match accepting.listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(conn::serve(
                        next,
                        stream,
                        token.clone(),
                        accept_tx.clone(),
                        accept_handles.clone(),
                    ));
                    next += 1;
                }
                Err(e) => {
                    eprintln!("pokeshell server: cannot accept a client: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    let store = crate::server::store::default_path();
    // Only the server acts on a list it cannot bring back (moves it aside, or leaves a newer
    // pokeshell's alone and saves nothing over it), and says so to the next client.
    let (saved, store, news) = match store {
        Some(path) => match crate::server::store::read(&path) {
            Ok(saved) => (saved, Some(path), Vec::new()),
            Err(problem) => {
                let settled = crate::server::store::settle(&path, &problem);
                let store = settled.may_save.then_some(path);
                (Vec::new(), store, vec![settled.message])
            }
        },
        None => (Vec::new(), None, Vec::new()),
    };
    let saver = Saver::spawn(store, tx.clone()).context("cannot start the saving thread")?;
    super::remote_list::spawn_refresher(tx.clone());
    super::drive_bound::spawn_reader(tx.clone());
    let mut server = Performer::new(tx, handle_tx, saver, kinds);
    let env = std::env::vars().collect();
    // What is left of each saved session on disk, looked at here: the core does no I/O.
    let saved = saved
        .into_iter()
        .map(|s| {
            let found = super::restore_look::look(&s);
            (s, found)
        })
        .collect();
    server.event(ServerEvent::Restore { saved, env, news });
    while !server.state.done() {
        // Handles first: one always arrives before what its owner sent after it.
        tokio::select! {
            biased;
            Some(handle) = handle_rx.recv() => server.on_handle(handle),
            Some(msg) = rx.recv() => server.on_msg(msg),
            else => break,
        }
    }
    // Let the clients read their last message (an exit, a detach) before the runtime ends.
    let deadline = tokio::time::Instant::now() + FAREWELL_GRACE;
    while server.state.has_clients() {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(ServerMsg::Event(ev @ ServerEvent::Gone { .. }))) => server.event(ev),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    // Dropping the listener removes the socket, token and pid files.
    drop(listening);
    Ok(())
}
