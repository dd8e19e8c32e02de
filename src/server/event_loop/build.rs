//! What every pokeshell session is made of, wherever it runs (in the user's terminal, or in the
//! server): the bridge server and its extension on pi's command line, the intervention ledger, the
//! pure [`Session`], the mirror and the child in its PTY.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

use super::{Clock, Layer, Loop, Screen, WorldEvent};
use crate::pi::bridge::server::{BridgeHandle, BridgeServer};
use crate::pi::ledger::LedgerFile;
use crate::term::pty::{ChildPty, CommandSpec};
use crate::term::screen::Mirror;
use pokeshell_core::config::Settings;
use pokeshell_core::session::{Input, Session, SessionOptions};
use pokeshell_core::spec::SessionSpec;
use pokeshell_core::workspace::Workspace;

/// How one session starts.
pub struct SessionConfig {
    pub spec: CommandSpec,
    /// What runs in the pane, as the side pane shows it.
    pub label: String,
    pub settings: Settings,
    /// Load the bridge extension into the child (it is pi).
    pub bridge: bool,
    /// Where the intervention ledger goes.
    pub ledger_dir: std::path::PathBuf,
    /// Who the session is, and whether a restarted server brought it back mid-run.
    pub session: SessionSpec,
}

/// A session with its child running.
pub struct Built {
    pub session: Session,
    pub child: ChildPty,
    pub bridge: Option<BridgeHandle>,
    pub mirror: Arc<Mutex<Mirror>>,
    pub output_pending: Arc<AtomicBool>,
    pub ledger: LedgerFile,
    pub clock: Clock,
    pub pid: i32,
}

impl Built {
    /// The loop over this session, drawing on `screen`, watched by `layer`; with the child's pid.
    pub fn into_loop<S: Screen, L: Layer>(
        self,
        screen: S,
        layer: L,
        events: UnboundedSender<WorldEvent>,
    ) -> (Loop<S, ChildPty, Option<BridgeHandle>, L>, i32) {
        let lp = Loop::new(
            Workspace::new(self.session),
            screen,
            self.child,
            self.bridge,
            layer,
            self.mirror,
            self.output_pending,
            self.ledger,
            self.clock,
            events,
        );
        (lp, self.pid)
    }
}

/// Writes the extension, starts the bridge server and adds both to the child's command line.
fn start_bridge(
    spec: &mut CommandSpec,
    settings: &Settings,
) -> Result<
    (
        BridgeHandle,
        tokio::sync::mpsc::Receiver<crate::pi::bridge::server::BridgeEvent>,
    ),
    String,
> {
    let path =
        crate::pi::bridge::asset::install_bridge().map_err(|e| format!("cannot write the extension: {e}"))?;
    let (handle, events) = BridgeServer::start().map_err(|e| format!("cannot open its socket: {e}"))?;
    let mut args: Vec<String> = crate::pi::bridge::asset::pi_args(&path)
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    args.append(&mut spec.args);
    spec.args = args;
    for (k, v) in handle.env() {
        spec.env.push((k.to_string(), v.to_string_lossy().into_owned()));
    }
    // The schedule_wakeup tool's description names the bounds in force now.
    let wakeups = settings.effective().wakeups;
    spec.env.push((
        pokeshell_core::bridge::ENV_WAKEUP_BOUNDS.to_string(),
        format!("{},{}", wakeups.min_seconds, wakeups.max_seconds),
    ));
    Ok((handle, events))
}

/// Starts the bridge (for pi), builds the session for a terminal of `cols`×`rows` and spawns the
/// child; every event of the session's world goes to `tx`. Must run inside a tokio runtime.
pub fn build(cfg: SessionConfig, cols: u16, rows: u16, tx: &UnboundedSender<WorldEvent>) -> Result<Built> {
    let SessionConfig {
        mut spec,
        label,
        settings,
        bridge,
        ledger_dir,
        session: identity,
    } = cfg;
    let (bridge, bridge_state) = if bridge {
        match start_bridge(&mut spec, &settings) {
            Ok((handle, mut events)) => {
                let tx = tx.clone();
                tokio::spawn(async move {
                    while let Some(ev) = events.recv().await {
                        if tx.send(WorldEvent::Bridge(ev)).is_err() {
                            return;
                        }
                    }
                });
                (Some(handle), Some(Ok(())))
            }
            Err(e) => (None, Some(Err(e))),
        }
    } else {
        (None, None)
    };
    let start = Instant::now();
    let wall_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let clock = Clock::new(start, wall_ms).with_zone(super::clock::Zone::System);
    let ledger = LedgerFile::new(&ledger_dir);
    let opts = SessionOptions {
        label,
        bridge: bridge_state,
        ledger_path: Some(ledger.path().to_path_buf()),
        // Not known yet: the mirror's modes carry it once the host's answers are in.
        host_kitty: false,
        child_args: spec.args.clone(),
        spec: identity,
    };
    let mut session = Session::new(opts, settings, cols, rows, clock.now(start));
    // Local time from the start (the loop gives it again when it changes).
    let utc_offset_secs = clock.utc_offset_secs(clock.now(start));
    session.handle(Input::LocalTime { utc_offset_secs }, clock.now(start));
    let pane = session.pane();
    let mirror = Arc::new(Mutex::new(Mirror::awaiting_host_caps(pane.height, pane.width)));
    let output_pending = Arc::new(AtomicBool::new(false));
    let pty_tx = tx.clone();
    let child = ChildPty::spawn(
        &spec,
        pane.height,
        pane.width,
        mirror.clone(),
        output_pending.clone(),
        move |e| {
            let _ = pty_tx.send(WorldEvent::Pty(e));
        },
    )?;
    let pid = child.pid();
    if bridge.is_some() {
        let program = spec.program.clone();
        let version_tx = tx.clone();
        tokio::task::spawn_blocking(move || {
            let check = crate::pi::bridge::version::probe_once(&program, Duration::from_secs(10));
            if let Some(msg) = check.message() {
                let _ = version_tx.send(WorldEvent::Notice(msg.to_string()));
            }
        });
    }
    Ok(Built {
        session,
        child,
        bridge,
        mirror,
        output_pending,
        ledger,
        clock,
        pid,
    })
}
