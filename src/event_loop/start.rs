//! Wires the loop to the world: the bridge server, the terminal, the start-up probe, the child in
//! its PTY, the stdin reader, signals. Runs until the child exits and returns its exit code.

use std::io::Write;

use std::time::Duration;

use anyhow::{Context, Result};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::build::{SessionConfig, build};
use super::layer::Layer;
use super::sinks::HostScreen;
use super::{Signal, WorldEvent, lock};
use crate::core::config::Settings;
use crate::core::session::Input;
use crate::term::host::watchdog::Watchdog;
use crate::term::host::{self, TerminalGuard};
use crate::term::pty::{CommandSpec, PtyEvent};
use crate::term::screen::Mirror;

/// What a dead child left running gets this long to end after SIGTERM.
const ORPHAN_GRACE: Duration = Duration::from_secs(2);

pub struct RunConfig {
    pub spec: CommandSpec,
    /// What runs in the pane, as the side pane shows it.
    pub label: String,
    pub settings: Settings,
    /// Load the bridge extension into the child (it is pi).
    pub bridge: bool,
    pub probe_timeout: Duration,
    /// Where the intervention ledger goes; `None`: the user's state dir.
    pub ledger_dir: Option<std::path::PathBuf>,
    /// Print what pi left on its main screen after the terminal is restored.
    pub final_screen: bool,
}

/// Runs the child inside pokeshell until it exits; returns its exit code. `layer` watches from
/// above (the demo's director), or is [`super::NoLayer`].
pub fn run<L: Layer>(cfg: RunConfig, layer: L) -> Result<i32> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(run_async(cfg, layer))
}

/// Each signal pokeshell handles becomes a [`WorldEvent::Signal`]; SIGTERM and SIGHUP come through
/// the watchdog instead, which does not depend on this runtime.
fn spawn_signals(tx: &UnboundedSender<WorldEvent>) -> Result<()> {
    let kinds = [
        (SignalKind::window_change(), Signal::Winch, "terminal resizes"),
        (SignalKind::interrupt(), Signal::Int, "SIGINT"),
        (SignalKind::user_defined1(), Signal::Usr1, "SIGUSR1"),
    ];
    for (kind, sig, what) in kinds {
        let mut stream = signal(kind).with_context(|| format!("cannot watch {what}"))?;
        let tx = tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if tx.send(WorldEvent::Signal(sig)).is_err() {
                    return;
                }
            }
        });
    }
    Ok(())
}

async fn run_async<L: Layer>(mut cfg: RunConfig, layer: L) -> Result<i32> {
    let (tx, mut rx) = unbounded_channel::<WorldEvent>();
    // First, so that no signal finds the terminal taken and nobody to give it back.
    let watchdog = {
        let tx = tx.clone();
        Watchdog::start(move |sig| {
            let sig = if sig == libc::SIGTERM {
                Signal::Term
            } else {
                Signal::Hup
            };
            let _ = tx.send(WorldEvent::Signal(sig));
        })?
    };
    // Raw mode as early as possible: until then a Ctrl+C typed at pokeshell's start ends it.
    let guard = TerminalGuard::enter()?;
    // The host's answers are read while the child starts; its queries wait for them in the mirror.
    let probing = host::probe::send();
    let (cols, rows) = crossterm::terminal::size().context("cannot read the terminal size")?;
    let ledger_dir = cfg.ledger_dir.take().unwrap_or_else(|| {
        crate::pi::ledger::default_dir().unwrap_or_else(|| std::env::temp_dir().join("pokeshell"))
    });
    crate::term::reaper::adopt_orphans(crate::term::pty::live_children);
    let with_bridge = cfg.bridge;
    let built = build(
        SessionConfig {
            spec: cfg.spec,
            label: cfg.label,
            settings: cfg.settings,
            bridge: cfg.bridge,
            ledger_dir,
            session: crate::core::spec::SessionSpec::default(),
        },
        cols,
        rows,
        &tx,
    )?;
    let terminal =
        Terminal::new(CrosstermBackend::new(std::io::stdout())).context("cannot set up drawing")?;
    let screen = HostScreen { terminal, guard };
    let (mut lp, pid) = built.into_loop(screen, layer, tx.clone());
    let gate = if with_bridge {
        host::start_gate::StartGate::until_ready(std::time::Instant::now())
    } else {
        host::start_gate::StartGate::open()
    };
    let (stdin_tx, closed_tx, ready_mirror) = (tx.clone(), tx.clone(), lp.mirror.clone());
    let probe_timeout = if probing {
        cfg.probe_timeout
    } else {
        Duration::ZERO
    };
    let (caps, probe_tx) = (lp.child.caps_handoff(lp.mirror.clone()), tx.clone());
    host::stdin::spawn(
        move || {
            let reading = host::probe::read_answers(probe_timeout);
            caps.give(reading.caps);
            // The host modes pi asked for meanwhile may now reach a kitty-capable host.
            let _ = probe_tx.send(WorldEvent::Pty(PtyEvent::Output));
            reading.leftover
        },
        gate,
        host::test_hook::LoopBlocker::from_env(),
        host::stdin::Sinks {
            pass: move |bytes| stdin_tx.send(WorldEvent::Stdin(bytes)).is_ok(),
            closed: move || {
                watchdog.terminal_lost();
                let _ = closed_tx.send(WorldEvent::StdinClosed);
            },
            child_ready: move || lock(&ready_mirror).modes().bracketed_paste,
        },
    );
    spawn_signals(&tx)?;
    lp.input(Input::ChildStarted { pid })?;
    let exit = lp.run(&mut rx).await?;
    watchdog.finished();

    // Killed by a signal, pi could not stop its tools; they hold the terminal open, too.
    if exit.signal.is_some() {
        crate::term::reaper::end_orphans(ORPHAN_GRACE);
    }
    lp.drain_output(&mut rx).await;
    let farewell = if cfg.final_screen {
        final_screen(&lock(&lp.mirror))
    } else {
        Vec::new()
    };
    drop(lp);
    if !farewell.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&farewell);
        let _ = out.flush();
    }
    Ok(exit.code)
}

/// What the child left on its main screen (pi's resume hint), to print after the terminal is
/// restored, as it would have stayed in the user's terminal without pokeshell.
pub fn final_screen(m: &Mirror) -> Vec<u8> {
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
