//! The event loop: stdin, child output, signals and timers in; PTY writes and frames out.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossterm::cursor::SetCursorStyle;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::{App, AppOptions, Effect};
use crate::app::view::BridgeStatus;
use crate::bridge::server::{BridgeEvent, BridgeHandle, BridgeServer};
use crate::config::Settings;
use crate::host::{self, HostModes, TerminalGuard};
use crate::ledger::LedgerFile;
use crate::pty::{ChildExit, ChildPty, CommandSpec, PtyEvent};
use crate::screen::{ChildModes, HostCaps, Mirror};

/// At most about 60 frames a second.
const FRAME: Duration = Duration::from_millis(16);
/// A resize burst is applied once, this long after its first signal.
const RESIZE_COALESCE: Duration = Duration::from_millis(20);
/// A partial escape sequence is passed on as it is after this long without more bytes.
const INPUT_FLUSH: Duration = Duration::from_millis(25);
/// After SIGTERM/SIGHUP is passed on, the child gets this long before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// What a dead child left running gets this long to end after SIGTERM.
const ORPHAN_GRACE: Duration = Duration::from_secs(2);

pub struct RunConfig {
    pub spec: CommandSpec,
    pub app: AppOptions,
    pub settings: Settings,
    /// Load the bridge extension into the child (it is pi).
    pub bridge: bool,
    pub probe_timeout: Duration,
    /// `pokeshell demo`: the tour's director and the scripted model it queues answers on.
    pub demo: Option<super::demo::DemoRun>,
    /// Where the intervention ledger goes; `None`: the user's state dir.
    pub ledger_dir: Option<std::path::PathBuf>,
    /// Print what pi left on its main screen after the terminal is restored.
    pub final_screen: bool,
}

#[derive(Debug)]
enum LoopEvent {
    Stdin(Vec<u8>),
    StdinClosed,
    Pty(PtyEvent),
    /// What `pi --version` said, when it says something the user should know.
    VersionWarning(String),
}

/// The bridge server and the extension file, when the child is pi.
struct BridgeSetup {
    handle: BridgeHandle,
    events: tokio::sync::mpsc::Receiver<BridgeEvent>,
}

fn start_bridge(spec: &mut CommandSpec) -> Result<BridgeSetup, String> {
    let path =
        crate::bridge::asset::install_bridge().map_err(|e| format!("cannot write the extension: {e}"))?;
    let (handle, events) = BridgeServer::start().map_err(|e| format!("cannot open its socket: {e}"))?;
    let mut args: Vec<String> = crate::bridge::asset::pi_args(&path)
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    args.append(&mut spec.args);
    spec.args = args;
    for (k, v) in handle.env() {
        spec.env.push((k.to_string(), v.to_string_lossy().into_owned()));
    }
    Ok(BridgeSetup { handle, events })
}

/// Waits for the next bridge event, or forever when there is no bridge.
async fn next_bridge_event(bridge: &mut Option<BridgeSetup>) -> Option<BridgeEvent> {
    match bridge {
        Some(b) => b.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Runs the child inside pokeshell until it exits; returns its exit code.
pub fn run(cfg: RunConfig) -> Result<i32> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(run_async(cfg))
}

fn lock(m: &Mutex<Mirror>) -> MutexGuard<'_, Mirror> {
    // A poisoned lock means a reader thread panicked; the panic hook is already ending the process.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn spawn_stdin(tx: UnboundedSender<LoopEvent>) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            // SAFETY: reading into a local buffer of the given length.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if n <= 0 {
                let _ = tx.send(LoopEvent::StdinClosed);
                return;
            }
            if tx.send(LoopEvent::Stdin(buf[..n as usize].to_vec())).is_err() {
                return;
            }
        }
    });
}

fn cursor_style(s: vt100::CursorStyle) -> SetCursorStyle {
    use vt100::CursorStyle as C;
    match s {
        C::Default => SetCursorStyle::DefaultUserShape,
        C::BlinkBlock => SetCursorStyle::BlinkingBlock,
        C::SteadyBlock => SetCursorStyle::SteadyBlock,
        C::BlinkUnderline => SetCursorStyle::BlinkingUnderScore,
        C::SteadyUnderline => SetCursorStyle::SteadyUnderScore,
        C::BlinkVerticalBar => SetCursorStyle::BlinkingBar,
        C::SteadyVerticalBar => SetCursorStyle::SteadyBar,
    }
}

struct Loop {
    app: App,
    caps: HostCaps,
    mirror: Arc<Mutex<Mirror>>,
    output_pending: Arc<AtomicBool>,
    child: ChildPty,
    terminal: Terminal<CrosstermBackend<std::io::Stdout>>,
    host_modes: HostModes,
    child_modes: ChildModes,
    pane: (u16, u16),
    dirty: bool,
    last_draw: Instant,
    cursor: Option<vt100::CursorStyle>,
    ledger: LedgerFile,
    bridge: Option<BridgeHandle>,
    model: Option<std::sync::Arc<crate::demo::model::ModelServer>>,
}

async fn run_async(mut cfg: RunConfig) -> Result<i32> {
    let (mut bridge, bridge_error) = if cfg.bridge {
        match start_bridge(&mut cfg.spec) {
            Ok(b) => (Some(b), None),
            Err(e) => (None, Some(e)),
        }
    } else {
        (None, None)
    };
    let guard = TerminalGuard::enter()?;
    let reading = host::probe::probe(cfg.probe_timeout);
    let (cols, rows) = crossterm::terminal::size().context("cannot read the terminal size")?;
    let now = Instant::now();
    let mut app = App::new(cfg.app, cfg.settings, cols, rows, now);
    let model = cfg.demo.map(|demo| {
        app.enable_demo(demo.director);
        demo.model
    });
    if cfg.bridge {
        app.set_bridge_status(match &bridge_error {
            None => BridgeStatus::Waiting,
            Some(e) => BridgeStatus::Disconnected(e.clone()),
        });
    }
    let pane = app.pane();
    let mirror = Arc::new(Mutex::new(Mirror::new(
        pane.height,
        pane.width,
        reading.caps.clone(),
    )));
    let (tx, mut rx) = unbounded_channel::<LoopEvent>();
    let output_pending = Arc::new(AtomicBool::new(false));
    let pty_tx = tx.clone();
    crate::reaper::adopt_orphans(crate::pty::live_child_pid);
    let child = ChildPty::spawn(
        &cfg.spec,
        pane.height,
        pane.width,
        mirror.clone(),
        output_pending.clone(),
        move |e| {
            let _ = pty_tx.send(LoopEvent::Pty(e));
        },
    )?;
    spawn_stdin(tx.clone());
    if cfg.bridge {
        let program = cfg.spec.program.clone();
        let version_tx = tx.clone();
        tokio::task::spawn_blocking(move || {
            let check = crate::bridge::version::probe(&program, Duration::from_secs(10));
            if let Some(msg) = check.message() {
                let _ = version_tx.send(LoopEvent::VersionWarning(msg.to_string()));
            }
        });
    }

    let terminal =
        Terminal::new(CrosstermBackend::new(std::io::stdout())).context("cannot set up drawing")?;
    let mut lp = Loop {
        app,
        caps: reading.caps,
        mirror,
        output_pending,
        terminal,
        host_modes: HostModes::default(),
        child_modes: ChildModes::default(),
        pane: (pane.width, pane.height),
        dirty: true,
        last_draw: now - FRAME,
        cursor: None,
        bridge: bridge.as_ref().map(|b| b.handle.clone()),
        ledger: LedgerFile::new(&cfg.ledger_dir.unwrap_or_else(|| {
            crate::ledger::default_dir().unwrap_or_else(|| std::env::temp_dir().join("pokeshell"))
        })),
        model,
        child,
    };
    lp.app.set_child_pid(lp.child.pid());
    if !reading.leftover.is_empty() {
        let effects = lp.app.on_stdin(&reading.leftover, &lp.child_modes, now);
        lp.apply(effects)?;
    }

    let mut winch = signal(SignalKind::window_change()).context("cannot watch terminal resizes")?;
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut hup = signal(SignalKind::hangup()).context("cannot watch SIGHUP")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    let mut usr1 = signal(SignalKind::user_defined1()).context("cannot watch SIGUSR1")?;

    let mut resize_due: Option<Instant> = None;
    let mut flush_due: Option<Instant> = None;
    let mut kill_due: Option<Instant> = None;
    let far = Duration::from_secs(3600);
    let panic_on_output = std::env::var_os("POKESHELL_TEST_PANIC").is_some();
    let mut output_closed = false;

    let exit = loop {
        let now = Instant::now();
        let deadlines = [
            lp.draw_due(now),
            resize_due,
            flush_due,
            kill_due,
            lp.app.next_tick(now),
        ];
        let next = deadlines.into_iter().flatten().min().unwrap_or(now + far);
        tokio::select! {
            ev = rx.recv() => {
                let now = Instant::now();
                match ev {
                    Some(LoopEvent::Stdin(bytes)) => {
                        let effects = lp.app.on_stdin(&bytes, &lp.child_modes, now);
                        lp.apply(effects)?;
                        flush_due = lp.app.input_pending().then_some(now + INPUT_FLUSH);
                    }
                    Some(LoopEvent::StdinClosed) => {
                        // The terminal went away: treat it like a hangup.
                        crate::pty::signal_child(libc::SIGHUP);
                        kill_due.get_or_insert(now + SHUTDOWN_GRACE);
                    }
                    Some(LoopEvent::Pty(PtyEvent::Output)) => {
                        if lp.on_output()? {
                            guard.suspend()?;
                            lp.after_resume()?;
                        }
                        // A test hook: proves the terminal is restored and the child stopped on a panic.
                        if panic_on_output {
                            panic!("POKESHELL_TEST_PANIC is set: panicking on purpose");
                        }
                    }
                    Some(LoopEvent::Pty(PtyEvent::Closed)) => output_closed = true,
                    Some(LoopEvent::Pty(PtyEvent::Stopped)) => {
                        // pi stopped itself (Ctrl+Z): stop with it, as pi alone would have.
                        guard.suspend()?;
                        lp.after_resume()?;
                    }
                    Some(LoopEvent::Pty(PtyEvent::Exited(exit))) => break exit,
                    Some(LoopEvent::VersionWarning(msg)) => {
                        lp.app.flash(msg, crate::ui::theme::Tone::Warn, now);
                        lp.dirty = true;
                    }
                    None => break ChildExit { code: 1, signal: None },
                }
            }
            Some(ev) = next_bridge_event(&mut bridge) => {
                let now = Instant::now();
                let cue = crate::app::demo::cue_of(&ev).map(|_| ev.clone());
                let effects = lp.app.on_bridge(ev, now);
                lp.apply(effects)?;
                // The director hears of the event after the supervisor has acted on it.
                if let Some(ev) = cue {
                    let effects = lp.app.demo_bridge_event(&ev, now);
                    lp.apply(effects)?;
                }
            }
            _ = winch.recv() => { resize_due.get_or_insert(Instant::now() + RESIZE_COALESCE); }
            _ = term.recv() => {
                crate::pty::signal_child(libc::SIGTERM);
                kill_due.get_or_insert(Instant::now() + SHUTDOWN_GRACE);
            }
            _ = hup.recv() => {
                crate::pty::signal_child(libc::SIGHUP);
                kill_due.get_or_insert(Instant::now() + SHUTDOWN_GRACE);
            }
            _ = int.recv() => {
                crate::pty::signal_child(libc::SIGINT);
            }
            _ = usr1.recv() => {
                // A debugging aid: drop the bridge connection; the bridge inside pi connects again.
                if let Some(b) = &lp.bridge {
                    let _ = b.disconnect("dropped on request (SIGUSR1)");
                }
            }
            _ = tokio::time::sleep_until(next.into()) => {
                let now = Instant::now();
                if resize_due.is_some_and(|d| d <= now) {
                    resize_due = None;
                    let (cols, rows) = crossterm::terminal::size().context("cannot read the terminal size")?;
                    lp.app.set_size(cols, rows);
                    lp.relayout()?;
                }
                if flush_due.is_some_and(|d| d <= now) {
                    flush_due = None;
                    let effects = lp.app.on_input_idle(&lp.child_modes, now);
                    lp.apply(effects)?;
                }
                if kill_due.is_some_and(|d| d <= now) {
                    kill_due = None;
                    crate::pty::signal_child(libc::SIGKILL);
                }
                let effects = lp.app.on_tick(now);
                lp.apply(effects)?;
                if lp.draw_due(now).is_some_and(|d| d <= now) {
                    lp.draw(now)?;
                }
            }
        }
    };

    // Killed by a signal, pi could not stop its tools; they hold the terminal open, too.
    if exit.signal.is_some() {
        crate::reaper::end_orphans(ORPHAN_GRACE);
    }
    // The exit can overtake the last output: let the reader finish, briefly, for the final screen.
    let drain_until = Instant::now() + Duration::from_millis(300);
    while !output_closed {
        match tokio::time::timeout_at(drain_until.into(), rx.recv()).await {
            Ok(Some(LoopEvent::Pty(PtyEvent::Closed))) | Ok(None) | Err(_) => output_closed = true,
            Ok(Some(_)) => {}
        }
    }
    lp.app.set_child_exit(exit.code);
    let farewell = if cfg.final_screen {
        lp.final_screen()
    } else {
        Vec::new()
    };
    drop(lp);
    drop(guard);
    if !farewell.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&farewell);
        let _ = out.flush();
    }
    Ok(exit.code)
}

impl Loop {
    fn apply(&mut self, effects: Vec<Effect>) -> Result<()> {
        let mut queue: std::collections::VecDeque<Effect> = effects.into();
        while let Some(e) = queue.pop_front() {
            match e {
                Effect::ToChild(bytes) => self.child.write(bytes),
                Effect::Relayout => self.relayout()?,
                Effect::Redraw => self.dirty = true,
                Effect::Bridge(command, purpose) => {
                    let result = match &self.bridge {
                        Some(b) => b.send(command).map_err(|e| e.to_string()),
                        None => Err("pokeshell runs without a bridge".to_string()),
                    };
                    queue.extend(self.app.on_sent(purpose, result, Instant::now()));
                }
                Effect::Desktop(text) => {
                    let display = self.app.settings().effective().display;
                    let bytes = crate::notify::desktop(&text, display.bell, display.notifications);
                    if !bytes.is_empty() {
                        let out = self.terminal.backend_mut();
                        out.write_all(&bytes)
                            .and_then(|()| out.flush())
                            .context("cannot write to the terminal")?;
                    }
                }
                Effect::Ledger(record) => {
                    self.ledger.append(&record);
                    queue.extend(self.app.demo_record(&record, Instant::now()));
                }
                Effect::DemoModel(scenario) => {
                    if let Some(model) = &self.model {
                        model.replace(*scenario);
                    }
                }
            }
        }
        Ok(())
    }

    /// Back from a suspension: the terminal was handed to the shell meanwhile, so every mode and
    /// every cell is set again, then pi is continued.
    fn after_resume(&mut self) -> Result<()> {
        self.host_modes = HostModes::default();
        self.cursor = None;
        let (cols, rows) = crossterm::terminal::size().context("cannot read the terminal size")?;
        self.app.set_size(cols, rows);
        self.terminal
            .resize(ratatui::layout::Rect::new(0, 0, cols, rows))
            .context("cannot redraw after resuming")?;
        self.relayout()?;
        self.on_output()?;
        // Continues a stopped child, and tells pi (whose own SIGTSTP was discarded) to restart its TUI.
        crate::pty::signal_child(libc::SIGCONT);
        Ok(())
    }

    fn relayout(&mut self) -> Result<()> {
        let pane = self.app.pane();
        if (pane.width, pane.height) != self.pane {
            self.pane = (pane.width, pane.height);
            lock(&self.mirror).resize(pane.height, pane.width);
            self.child.resize(pane.height, pane.width)?;
        }
        self.dirty = true;
        Ok(())
    }

    /// New child output: carry its mode changes and host-bound bytes over to the host terminal.
    /// Returns true when pi is suspending itself (Ctrl+Z) and pokeshell should suspend with it.
    fn on_output(&mut self) -> Result<bool> {
        self.output_pending.store(false, Ordering::Release);
        let (host_bytes, modes) = {
            let mut m = lock(&self.mirror);
            (m.take_host_output(), m.modes())
        };
        let suspend = self.app.wants_suspend(&self.child_modes, &modes, Instant::now());
        self.child_modes = modes;
        let want = HostModes::for_child(&modes, self.caps.kitty);
        let mut bytes = self.host_modes.transition(&want);
        bytes.extend(host_bytes);
        if !bytes.is_empty() {
            let out = self.terminal.backend_mut();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .context("cannot write to the terminal")?;
        }
        self.host_modes = want;
        self.app.set_host_modes(&want);
        self.dirty = true;
        Ok(suspend)
    }

    /// When the next frame may be drawn, if one is needed.
    fn draw_due(&self, now: Instant) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        let earliest = self.last_draw + FRAME;
        let sync = lock(&self.mirror).sync_deadline().filter(|d| *d > now);
        Some(sync.map_or(earliest, |s| s.max(earliest)))
    }

    fn draw(&mut self, now: Instant) -> Result<()> {
        self.dirty = false;
        self.last_draw = now;
        let app = &self.app;
        let mirror = &self.mirror;
        let mut style = vt100::CursorStyle::Default;
        // Our own frames are synchronized too, so the host never shows half of one.
        self.terminal
            .backend_mut()
            .write_all(b"\x1b[?2026h")
            .context("cannot draw")?;
        self.terminal
            .draw(|f| {
                // The lock is held only while the frame is built, not while it is written out.
                let m = lock(mirror);
                style = m.screen().cursor_style();
                app.draw(f, m.screen(), now);
            })
            .context("cannot draw")?;
        let out = self.terminal.backend_mut();
        if self.cursor != Some(style) {
            self.cursor = Some(style);
            crossterm::queue!(out, cursor_style(style)).context("cannot set the cursor")?;
        }
        out.write_all(b"\x1b[?2026l")
            .and_then(|()| out.flush())
            .context("cannot draw")
    }

    /// What the child left on its main screen (pi's resume hint), to print after the terminal is
    /// restored, as it would have stayed in the user's terminal without pokeshell.
    fn final_screen(&self) -> Vec<u8> {
        let m = lock(&self.mirror);
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
}
