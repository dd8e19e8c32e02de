//! The event loop only performs: it turns what happens in the world (keys, child output, bridge
//! events, signals, timers, finished file I/O) into [`Input`]s for the workspace, and the
//! [`Effect`]s that come back into writes, commands and frames. It is generic over where its
//! events come from (a channel of [`WorldEvent`]) and over its sinks ([`Screen`], [`Child`],
//! [`Bridge`]), so tests drive the real loop with ratatui's `TestBackend`, a fake child and a fake
//! bridge. It runs in one place only: a session's thread in the server (`server/session_thread.rs`
//! wires it to the clients, the PTY and the bridge server), `pokeshell demo`'s session included.

pub mod build;
mod changes;
mod child_io;
pub mod clients;
pub mod clock;
mod frames;
pub mod input_meter;
mod layer;
mod restart;
mod sinks;
mod test_screen;
mod typing;
mod world;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

pub use self::clients::{ClientEvent, ClientLink, ClientOut};
pub use self::clock::{Clock, Zone};
pub use self::layer::{Layer, NoLayer};
pub(crate) use self::sinks::cursor_style;
pub use self::sinks::{Bridge, Child, Screen};
pub use self::test_screen::TestScreen;
pub use self::world::{Signal, WorldEvent};
use crate::pi::bridge::server::BridgeEvent;
use crate::pi::ledger::LedgerFile;
use crate::term::host::HostModes;
use crate::term::pty::{ChildExit, PtyEvent};
use crate::term::screen::Mirror;
use pokeshell_core::session::{Effect, Input};
use pokeshell_core::workspace::Workspace;

/// At most about 60 frames a second.
const FRAME: Duration = Duration::from_millis(16);
/// For this long after input went to the child, its output is drawn almost at once (frames at
/// least `ECHO_GAP` apart) rather than at the next 60 Hz frame, so a typed key's echo does not wait
/// for the frame clock while the pane floods.
const ECHO_WINDOW: Duration = Duration::from_millis(50);
const ECHO_GAP: Duration = Duration::from_millis(2);
/// A resize burst is applied once, this long after its first signal.
pub(crate) const RESIZE_COALESCE: Duration = Duration::from_millis(20);
/// A partial escape sequence is passed on as it is after this long without more bytes.
pub(crate) const INPUT_FLUSH: Duration = Duration::from_millis(25);
/// After the server's SIGTERM is passed on, the child gets this long before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// The loop wakes at least this often, so that it can tell the time it did not run.
const PULSE: Duration = Duration::from_secs(1);

pub fn lock(m: &Mutex<Mirror>) -> MutexGuard<'_, Mirror> {
    // A poisoned lock means a reader thread panicked; the panic hook is already ending the process.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The loop's state: the workspace and the world it performs on.
pub struct Loop<S: Screen, C: Child, B: Bridge, L: Layer> {
    pub workspace: Workspace,
    pub screen: S,
    pub child: C,
    pub bridge: B,
    pub layer: L,
    pub mirror: Arc<Mutex<Mirror>>,
    /// Set by the parser when output is ready; cleared when the loop takes it.
    pub output_pending: Arc<AtomicBool>,
    pub ledger: LedgerFile,
    pub clock: Clock,
    /// Where finished file I/O reports back.
    pub events: UnboundedSender<WorldEvent>,
    host_modes: HostModes,
    /// The attached clients whose terminal answered the program-status query (OSC 7501) in its
    /// start-up probe.
    status_clients: std::collections::BTreeSet<u64>,
    /// The ledger's state as the session last heard it.
    ledger_status: Option<String>,
    pane: (u16, u16),
    dirty: bool,
    last_draw: Instant,
    /// When input last went to the child (see [`ECHO_WINDOW`]).
    typed_at: Option<Instant>,
    cursor: Option<vt100::CursorStyle>,
    resize_due: Option<Instant>,
    kill_due: Option<Instant>,
    /// A relaunch gives up waiting for the killed child then (see `restart.rs`).
    reap_due: Option<Instant>,
    /// The child's output reader has finished.
    pub output_closed: bool,
    /// The relaunch the session asked for, waiting for the old child to exit.
    respawn: Option<Vec<String>>,
    /// The child is running (it has not been reported exited).
    child_alive: bool,
    /// How the last child exited.
    last_exit: ChildExit,
    /// A relaunch did not start (no directory): no child runs until a poke; the exit to end with.
    not_started: Option<ChildExit>,
    /// The server ended the session (SIGTERM: a kill, or the server shutting down): no relaunch.
    shutting_down: bool,
    /// The last program-status report the session heard of.
    program_status_seq: u64,
    /// Keys on their way in: held while pi starts, each client's partial sequence flushed.
    typing: typing::Typing,
    /// Every relaunched child gets the gate again.
    gate_each_start: bool,
    /// pi and its clients are suspended (Ctrl+Z), waiting for a client to come back.
    suspended: bool,
    /// The local offset the session was last given, and when it is read again.
    utc_offset: Option<i32>,
    zone_check_due: Instant,
}

impl<S: Screen, C: Child, B: Bridge, L: Layer> Loop<S, C, B, L> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        workspace: Workspace,
        screen: S,
        child: C,
        bridge: B,
        layer: L,
        mirror: Arc<Mutex<Mirror>>,
        output_pending: Arc<AtomicBool>,
        ledger: LedgerFile,
        clock: Clock,
        events: UnboundedSender<WorldEvent>,
    ) -> Self {
        let pane = workspace.shown().pane();
        Self {
            workspace,
            screen,
            child,
            bridge,
            layer,
            mirror,
            output_pending,
            ledger,
            events,
            host_modes: HostModes::default(),
            status_clients: Default::default(),
            ledger_status: None,
            pane: (pane.width, pane.height),
            dirty: true,
            last_draw: clock.start(),
            typed_at: None,
            cursor: None,
            resize_due: None,
            kill_due: None,
            reap_due: None,
            clock,
            output_closed: false,
            respawn: None,
            child_alive: true,
            last_exit: ChildExit::default(),
            not_started: None,
            shutting_down: false,
            program_status_seq: 0,
            typing: typing::Typing::open(),
            gate_each_start: false,
            suspended: false,
            utc_offset: None,
            zone_check_due: clock.start(),
        }
    }

    /// The server ended the session (a kill, a shutdown): the child's exit ends the loop.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Runs until the child exits (or the event source ends); returns how it exited. While it
    /// runs, the loop reads the child's quiet spells itself.
    pub async fn run(&mut self, rx: &mut UnboundedReceiver<WorldEvent>) -> Result<ChildExit> {
        self.child.want_quiet_spells(true);
        let ran = self.run_until_exit(rx).await;
        self.child.want_quiet_spells(false);
        ran
    }

    async fn run_until_exit(&mut self, rx: &mut UnboundedReceiver<WorldEvent>) -> Result<ChildExit> {
        // A quiet spell's read: a key's echo fits many times over, and a flood's read gives the
        // reading back.
        let mut read_buf = vec![0u8; 16 * 1024];
        loop {
            let now = Instant::now();
            // A frame due now is drawn now: a timer would round its deadline up to the runtime's
            // next millisecond tick, a wait a typed key's echo would pay each time.
            if self.draw_due(now).is_some_and(|d| d <= now) {
                self.draw(now)?;
            }
            // Woken at least every PULSE, the loop can tell how long it did not run; a wake for
            // that alone does nothing else.
            let due = self.next_deadline(now);
            let next = due.map_or(now + PULSE, |d| d.min(now + PULSE));
            let woke = tokio::select! {
                ev = rx.recv() => Some(ev),
                read = self.child.quiet_output(&mut read_buf) => {
                    if self.child.took_quiet_output(read, &read_buf) {
                        self.child_output()?;
                    }
                    continue;
                }
                _ = tokio::time::sleep_until(next) => None,
            };
            // Before anything else: time the loop did not run is not pi's silence.
            self.note_away(next, Instant::now())?;
            match woke {
                Some(Some(WorldEvent::Pty(PtyEvent::Quiet))) => self.child.take_quiet_spell(),
                Some(Some(WorldEvent::Pty(PtyEvent::Exited(exit)))) => {
                    if let Some(exit) = self.child_exited(exit)? {
                        return Ok(exit);
                    }
                }
                Some(Some(ev)) => {
                    if let Some(exit) = self.on_world_then_end(ev)? {
                        return Ok(exit);
                    }
                }
                Some(None) => {
                    return Ok(ChildExit {
                        code: 1,
                        signal: None,
                    });
                }
                None => {
                    if due.is_some_and(|d| d <= Instant::now()) {
                        self.on_timers()?;
                    }
                }
            }
            self.forget_dropped()?;
        }
    }

    fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let at = self.clock.now(now);
        let session = self
            .workspace
            .next_deadline(at)
            .and_then(|ms| self.clock.instant(ms));
        let layer = self.layer.next_deadline().and_then(|ms| self.clock.instant(ms));
        [
            self.draw_due(now),
            self.typing.gate_deadline(),
            self.resize_due,
            self.typing.flush_deadline(),
            self.kill_due,
            self.reap_due,
            session,
            layer,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// One event from the world.
    pub fn on_world(&mut self, ev: WorldEvent) -> Result<()> {
        let now = Instant::now();
        self.check_zone(now)?;
        match ev {
            WorldEvent::Client(ev) => self.on_client(ev)?,
            WorldEvent::Sessions(briefs) => self.input(Input::Sessions(briefs))?,
            WorldEvent::Signal(Signal::Term) => {
                self.shutting_down = true;
                if self.child_alive {
                    self.child.signal(libc::SIGTERM);
                }
                self.kill_due.get_or_insert(now + SHUTDOWN_GRACE);
            }
            WorldEvent::Signal(Signal::Usr1) => self.bridge.disconnect("dropped on request (SIGUSR1)"),
            WorldEvent::Pty(PtyEvent::Output) => self.child_output()?,
            // Only the running loop reads quiet spells ([`Self::run`]).
            WorldEvent::Pty(PtyEvent::Quiet) => self.child.want_quiet_spells(false),
            WorldEvent::Pty(PtyEvent::Closed) => self.output_closed = true,
            WorldEvent::Pty(PtyEvent::Stopped) => self.input(Input::ChildStopped)?,
            WorldEvent::Pty(PtyEvent::Exited(_)) => {}
            WorldEvent::Bridge(ev) => self.input(Input::Bridge(ev))?,
            WorldEvent::Request(request) => self.input(Input::Request(request))?,
            WorldEvent::Drive(msg) => self.input(Input::Drive(msg))?,
            WorldEvent::Away(answer) => self.input(Input::Away(answer))?,
            WorldEvent::Guard(order) => self.input(Input::Guard(order))?,
            WorldEvent::Changes { client, result } => self.input(Input::Changes { client, result })?,
            WorldEvent::Notice(text) => self.input(Input::Notice {
                text,
                tone: pokeshell_core::ui::theme::Tone::Warn,
            })?,
            WorldEvent::SettingsLoaded(files) => self.input(Input::SettingsLoaded(files))?,
            WorldEvent::SettingsSaved { result, files } => {
                self.input(Input::SettingsSaved { result, files })?
            }
        }
        Ok(())
    }

    /// Timers: a coalesced resize, a held partial sequence, the kill after the grace, ticks, frames.
    pub fn on_timers(&mut self) -> Result<()> {
        let now = Instant::now();
        self.check_zone(now)?;
        if self.resize_due.is_some_and(|d| d <= now) {
            self.resize_due = None;
            let (cols, rows) = self.screen.size().context("cannot read the terminal size")?;
            self.input(Input::Resize { cols, rows })?;
        }
        for client in self.typing.take_due(now) {
            self.input(Input::InputIdle { client })?;
        }
        if self.typing.gate_deadline().is_some_and(|d| d <= now) {
            self.release_held_keys()?;
        }
        self.kill_timers(now)?;
        self.input(Input::Tick)?;
        if self.draw_due(now).is_some_and(|d| d <= now) {
            self.draw(now)?;
        }
        Ok(())
    }

    /// Hands one input to the workspace (the layer sees it first), performs the effects, then lets
    /// the layer act on what it saw.
    pub fn input(&mut self, input: Input) -> Result<()> {
        let at = self.clock.now(Instant::now());
        self.layer.observe(&input);
        let effects = self.workspace.handle(input, at);
        self.perform(effects)?;
        for input in self.layer.act(at, self.workspace.shown()) {
            let effects = self.workspace.handle(input, at);
            self.perform(effects)?;
        }
        Ok(())
    }

    fn perform(&mut self, effects: Vec<Effect>) -> Result<()> {
        for e in effects {
            self.layer.observe_effect(&e);
            match e {
                Effect::ToChild(bytes) => {
                    self.typed_at = Some(Instant::now());
                    self.child.write(bytes);
                }
                Effect::ResizePane { cols, rows } => self.resize_pane(cols, rows)?,
                Effect::HostModes(want) => {
                    let bytes = self.host_modes.transition(&want);
                    self.host_modes = want;
                    self.screen.write_raw(&bytes)?;
                }
                Effect::ToHost(bytes) => self.screen.write_raw(&bytes)?,
                Effect::StatusReport(bytes) => self.status_report(&bytes)?,
                Effect::Redraw => self.dirty = true,
                Effect::Bridge { id, command } => {
                    let name = command.name();
                    if let Err(error) = self.bridge.send(id, command) {
                        // The failure to send comes back as the command's reply.
                        let reply = BridgeEvent::Reply {
                            id,
                            command: name,
                            result: Err(error),
                        };
                        let _ = self.events.send(WorldEvent::Bridge(reply));
                    }
                }
                // With nobody attached, the server's observer (a layer) passes it on to whoever
                // the server decides should hear it.
                Effect::Notify { text, bell, desktop } => {
                    let bytes = pokeshell_core::notify::desktop(&text, bell, desktop);
                    self.screen.write_raw(&bytes)?;
                }
                Effect::Ledger(record) => {
                    self.ledger.append(&record);
                    let status = self.ledger.status();
                    if status != self.ledger_status {
                        self.ledger_status = status.clone();
                        self.input(Input::LedgerStatus(status))?;
                    }
                }
                Effect::LoadSettings(paths) => {
                    let tx = self.events.clone();
                    tokio::task::spawn_blocking(move || {
                        let _ = tx.send(WorldEvent::SettingsLoaded(crate::pi::settings_files::read_files(
                            &paths,
                        )));
                    });
                }
                Effect::SaveSettings { paths, path, values } => {
                    // Writing waits on a lock file: off the loop's thread.
                    let tx = self.events.clone();
                    tokio::task::spawn_blocking(move || {
                        let result = crate::pi::settings_files::write_values(&path, &values);
                        let files = crate::pi::settings_files::read_files(&paths);
                        let _ = tx.send(WorldEvent::SettingsSaved { result, files });
                    });
                }
                Effect::ReadChanges { client, dir, base } => changes::read(&self.events, client, dir, base),
                Effect::Suspend => self.suspend()?,
                Effect::Respawn { args } => self.ask_respawn(args)?,
                // The server's: it switches or detaches the client that asked.
                Effect::Workspace { client, req } => self.screen.request(client, req),
                // The server's observer (a layer) hands it to the server's core.
                Effect::Guard(_) => {}
                // For the server's core: the observer (a layer) hands it on.
                Effect::Drive(_) => {}
            }
        }
        Ok(())
    }
}
