//! One session in the server: its own thread and runtime, running the session's loop with the
//! attached clients as its screen. Sessions do not share a runtime, so a busy one (a flood of
//! output) does not hold up the others' keys. A session of another kind (`kind.rs`: the demo's) is
//! prepared by its kind, whose layer watches the loop beside the server's observer.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use anyhow::{Context, Result};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

use super::kind::{Kinds, Prepare, Prepared};
use super::observer::Observer;
use super::remote_screen::RemoteScreen;
use super::serve::{ServerEvent, ServerMsg};
use crate::cli::Cli;
use crate::server::event_loop::build::{SessionConfig, build};
use crate::server::event_loop::{Layer, WorldEvent, lock};
use crate::term::pty::PtyEvent;
use crate::term::screen::Mirror;
use pokeshell_core::server::state::{SessionSpec, SessionStart};
use pokeshell_core::session::Input;

/// The most threads a session's blocking pool runs at once, and how long an idle one is kept.
const BLOCKING_THREADS: usize = 2;
const BLOCKING_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(1);

fn env_get<'a>(env: &'a [(String, String)], key: &str) -> Option<&'a str> {
    env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// pi's environment: the client's, with the session's own name in `$POKESHELL_SESSION` (a
/// `pokeshell` its agent runs says who asks by it; one inherited from a parent session is replaced).
fn session_env(start: &SessionSpec) -> Vec<(String, String)> {
    let var = pokeshell_core::drive::SESSION_ENV;
    let mut env: Vec<(String, String)> = start.env.iter().filter(|(k, _)| k != var).cloned().collect();
    env.push((var.to_string(), start.name.clone()));
    env
}

/// What a session's command line asks for.
enum Plan {
    Session(Box<SessionConfig>),
    /// A kind's session: prepared on the session's thread.
    Kind(Prepare),
}

/// The session's configuration from its command line, in the client's environment.
fn config(start: &SessionSpec, kinds: &Kinds) -> Result<Plan, String> {
    if let Some(prepare) = kinds.iter().find_map(|k| k.claim(&start.argv)) {
        return Ok(Plan::Kind(prepare));
    }
    let cli = Cli::try_parse_from_argv(&start.argv)?;
    let dir = PathBuf::from(&start.dir);
    let home = env_get(&start.env, "HOME").map(PathBuf::from);
    let agent_dir =
        env_get(&start.env, pokeshell_core::config::paths::AGENT_DIR_ENV).map(std::ffi::OsString::from);
    let settings = crate::cli::launch::settings(&cli, &dir, home.as_deref(), agent_dir.as_deref())?;
    let mut spec = crate::cli::launch::child_spec(&cli)?;
    spec.cwd = Some(dir);
    spec.cwd_real = start.real_dir.as_ref().map(PathBuf::from);
    spec.base_env = Some(session_env(start));
    let ledger_dir = env_get(&start.env, "XDG_STATE_HOME")
        .filter(|v| v.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".local/state")))
        .map(|d| d.join("pokeshell"))
        .unwrap_or_else(|| std::env::temp_dir().join("pokeshell"));
    Ok(Plan::Session(Box::new(SessionConfig {
        label: spec.label.clone(),
        spec,
        settings,
        bridge: cli.command.is_none(),
        ledger_dir,
        session: start.clone(),
    })))
}

/// The commit the session's changes are read against, looked up as it first starts (before pi
/// runs, so nothing the agent does can come before it); a restored session has it from the saved
/// list. Outside a git checkout, or when git cannot say in time, it stays unknown.
fn record_base(spec: &mut SessionSpec) {
    if spec.base.is_some() {
        return;
    }
    match crate::git::changes::base::checked_out(std::path::Path::new(&spec.dir)) {
        Ok(base) => spec.base = base,
        Err(e) => eprintln!(
            "pokeshell server: session {}: no base for its changes: {e}",
            spec.number
        ),
    }
}

/// A started session: where its world events go, its program's input queue (bytes not yet
/// written to its terminal; see [`crate::server::event_loop::input_meter`]), and its thread's runtime
/// (where the connections of the clients that follow it run, see `conn`).
pub type Ready = (
    UnboundedSender<WorldEvent>,
    Arc<AtomicUsize>,
    tokio::runtime::Handle,
);

/// Starts the session's thread; returns where its world events go once pi runs.
pub async fn spawn(
    mut start: SessionStart,
    server: UnboundedSender<ServerMsg>,
    kinds: Kinds,
) -> Result<Ready, String> {
    let dir = std::path::Path::new(&start.spec.dir);
    let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", start.spec.dir))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", start.spec.dir));
    }
    // Where its directory leads, recorded as it first starts: every later start of its pi (a
    // relaunch, a restore) checks that it still leads there.
    if start.spec.real_dir.is_none() {
        start.spec.real_dir = crate::term::pty::resolve(dir);
    }
    let plan = config(&start.spec, &kinds)?;
    let (ready_tx, ready_rx) = oneshot::channel();
    let name = format!("session-{}", start.spec.number);
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let number = start.spec.number;
            // What a kind keeps (the demo's directories) lives as long as the session, and goes
            // before the server hears it ended.
            let (mut cfg, layer, keep, farewell) = match plan {
                Plan::Session(cfg) => (*cfg, None, None, true),
                Plan::Kind(prepare) => match prepare(&start.spec) {
                    Ok(Prepared {
                        config,
                        layer,
                        keep,
                        farewell,
                    }) => (config, Some(layer), Some(keep), farewell),
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                },
            };
            record_base(&mut cfg.session);
            // Its blocking pool (settings files, the version check, orphans ended after a relaunch)
            // stays small and lets its threads go soon: sessions brought back together must not
            // each keep one for long.
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .max_blocking_threads(BLOCKING_THREADS)
                .thread_keep_alive(BLOCKING_KEEP_ALIVE)
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("cannot start the session's runtime: {e}")));
                    return;
                }
            };
            let ended = rt.block_on(run(start, cfg, layer, farewell, server.clone(), ready_tx));
            let (code, shutdown, farewell) = ended.unwrap_or_else(|e| {
                eprintln!("pokeshell server: session {number}: {e:#}");
                (1, false, Vec::new())
            });
            drop(keep);
            let _ = server.send(
                ServerEvent::Ended {
                    number,
                    code,
                    shutdown,
                    farewell,
                }
                .into(),
            );
        })
        .map_err(|e| format!("cannot start the session's thread: {e}"))?;
    ready_rx
        .await
        .map_err(|_| "the session ended before it started".to_string())?
}

/// The session's life: returns pi's exit code, whether the server was shutting down, and what pi
/// left on its main screen (when the kind wants it: the demo's resume hint would name a session
/// dir that is removed on the way out).
async fn run(
    start: SessionStart,
    cfg: SessionConfig,
    kind_layer: Option<Box<dyn Layer>>,
    farewell: bool,
    server: UnboundedSender<ServerMsg>,
    ready: oneshot::Sender<Result<Ready, String>>,
) -> Result<(i32, bool, Vec<u8>)> {
    let (tx, mut rx) = unbounded_channel::<WorldEvent>();
    let with_bridge = cfg.bridge;
    let built = match build(cfg, start.cols, start.rows, &tx) {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(format!("{e:#}")));
            return Ok((1, false, Vec::new()));
        }
    };
    let input_queued = built.child.input_queued();
    let mut screen = RemoteScreen::new(start.cols, start.rows)?;
    screen.server = Some(server.clone());
    if let Some(bound) = env_get(&start.spec.env, "POKESHELL_TEST_CLIENT_BOUND").and_then(|v| v.parse().ok())
    {
        screen.bound = bound;
    }
    let layer = (
        Observer::new(start.spec.number, server, built.session.notify_command()),
        kind_layer,
    );
    let (mut lp, pid) = built.into_loop(screen, layer, tx.clone());
    if with_bridge {
        lp.hold_keys_until_ready();
    }
    if let Some(caps) = &start.caps_now {
        lp.give_caps(caps);
    }
    lp.input(Input::ChildStarted { pid })?;
    let _ = ready.send(Ok((tx, input_queued, tokio::runtime::Handle::current())));
    // A test hook: proves a client's terminal is restored and the children stopped when the server
    // panics.
    if env_get(&start.spec.env, "POKESHELL_TEST_PANIC").is_some() {
        while let Some(ev) = rx.recv().await {
            if matches!(ev, WorldEvent::Pty(PtyEvent::Output)) {
                panic!("POKESHELL_TEST_PANIC is set: panicking on purpose");
            }
            lp.on_world(ev)?;
        }
    }
    let exit = lp.run(&mut rx).await.context("the session's loop failed")?;
    lp.drain_output(&mut rx).await;
    let shutdown = lp.shutting_down();
    let farewell = if farewell {
        final_screen(&lock(&lp.mirror))
    } else {
        Vec::new()
    };
    Ok((exit.code, shutdown, farewell))
}

/// What the child left on its main screen (pi's resume hint), for the client to print after its
/// terminal is restored, as it would have stayed in the user's terminal without pokeshell.
fn final_screen(m: &Mirror) -> Vec<u8> {
    let screen = m.screen();
    if screen.alternate_screen() {
        return Vec::new();
    }
    let (_, cols) = screen.size();
    let rows: Vec<String> = screen.rows_formatted(0, cols.get()).collect();
    let plain: Vec<String> = screen.rows(0, cols.get()).collect();
    let Some(last) = plain.iter().rposition(|r| !r.trim().is_empty()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for row in &rows[..=last] {
        out.extend_from_slice(row.as_bytes());
        out.extend_from_slice(b"\x1b[0m\r\n");
    }
    out
}
