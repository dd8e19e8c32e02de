//! One pi session as a pure state machine: what the user sees of it, what their keys do, and how
//! pokeshell supervises it. [`Session::handle`] takes an [`Input`] (a fact from the world) and the
//! time, and answers with [`Effect`]s (requests to the world). Nothing in here reads a clock, a file
//! or the environment, and nothing writes anywhere: the event loop (`event_loop`) does that and
//! brings the results back as inputs, so the same logic runs in tests without a terminal.

mod away;
mod brief;
mod child;
mod draw;
mod drive;
mod flash;
mod guard_view;
mod input;
mod keyboards;
mod layout;
pub mod link;
mod mouse;
mod overlay;
mod pi;
mod pi_commands;
mod reported;
mod restart;
mod settings;
mod status;
mod upward;
pub mod usage;
pub mod view;
mod workspace;
mod world;

use ratatui_core::layout::Rect;

use self::brief::Trouble;
use self::child::ChildState;
pub use self::draw::{Drawn, Painted};
use self::flash::Flash;
pub use self::keyboards::ClientId;
use self::keyboards::Keyboards;
pub use self::layout::Layout;
use self::link::Link;
pub use self::overlay::{Overlay, OverlayKind};
pub use self::restart::relaunch_args;
use self::settings::SettingsView;
use self::view::PiInfo;
pub use self::workspace::WorkspaceRequest;
pub use self::world::{Effect, Input};
pub use crate::brief::{Attention, SessionBrief, order_briefs};
use crate::config::{KeyId, Settings};
use crate::screen::ChildModes;
use crate::spec::SessionSpec;
use crate::supervisor::{Now, Supervisor, View};
use crate::ui::theme::Tone;

#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// What runs in the pane, as the side pane shows it.
    pub label: String,
    /// The child is pi with the bridge loaded (`false`: a hosted command, or the bridge failed).
    pub bridge: Option<Result<(), String>>,
    /// Where interventions are logged, as the status overlay names it.
    pub ledger_path: Option<std::path::PathBuf>,
    /// The host terminal speaks the kitty keyboard protocol.
    pub host_kitty: bool,
    /// The child's arguments as started (the bridge's included), for a relaunch.
    pub child_args: Vec<String>,
    /// Who the session is (number 0: it runs alone, as in tests, and nothing about sessions is
    /// shown), and whether a restarted server brought it back mid-run: then the first child's
    /// session is asked to carry on, as after a restart (RST-S1).
    pub spec: SessionSpec,
}

/// Everything pokeshell knows and shows about one pi.
pub struct Session {
    opts: SessionOptions,
    settings: SettingsView,
    /// Every client's keyboard: its half-typed keys, prefix state and overlay.
    keys: Keyboards,
    layout: Layout,
    flash: Flash,
    child: ChildState,
    /// The watch for a frozen or dead pi, and its restarts.
    watch: restart::Watch,
    supervisor: Supervisor,
    pi: PiInfo,
    link: Link,
    /// When the session was made, for its uptime.
    started_ms: u64,
    /// Why the intervention ledger is not (or was not) written, if it is not well.
    ledger_status: Option<String>,
    /// What the supervisor gave up on, and since when a run has been stalled.
    trouble: Trouble,
    /// Every session's brief, as the server last sent them.
    sessions: Vec<SessionBrief>,
    /// When the session was made (wall ms), for its brief.
    created_wall_ms: u64,
    /// The user's local offset from UTC (seconds east), as last given ([`Input::LocalTime`]).
    utc_offset_secs: i32,
    /// Tokens and cost, per run and for the session.
    usage: usage::Tally,
    /// What the terminal around pokeshell was last told (OSC 7501, the title).
    upward: upward::Upward,
    /// What scripts and agents driving the session need: its messages, runs and transcript.
    driven: drive::Driven,
    /// pi's screen as last drawn (drawing takes `&self`; the cache is a copy of what is shown).
    pane_cache: std::cell::RefCell<crate::ui::pane::PaneCache>,
}

impl Session {
    pub fn new(opts: SessionOptions, settings: Settings, cols: u16, rows: u16, now: Now) -> Self {
        let effective = settings.effective();
        let display = effective.display.clone();
        let mut session = Self {
            keys: Keyboards::new(display.prefix_key.parse().unwrap_or_default()),
            layout: Layout::new(cols, rows, &display),
            supervisor: Supervisor::new(effective.supervisor()),
            settings: SettingsView::new(settings),
            flash: Flash::default(),
            child: ChildState::new(opts.host_kitty),
            watch: restart::Watch::default(),
            pi: PiInfo::new(opts.bridge.as_ref()),
            link: Link::default(),
            started_ms: now.mono_ms,
            ledger_status: None,
            trouble: Trouble::default(),
            sessions: Vec::new(),
            created_wall_ms: now.wall_ms,
            utc_offset_secs: 0,
            usage: usage::Tally::default(),
            upward: upward::Upward::default(),
            pane_cache: Default::default(),
            driven: drive::Driven::new(opts.spec.prompted),
            opts,
        };
        let warnings = session.settings.get().warnings().len();
        if warnings > 0 {
            let prefix = session.keys.prefix();
            session.flash.show(
                format!("{warnings} settings warning(s): {prefix} i shows them"),
                Tone::Warn,
                now,
            );
        }
        session
    }

    /// The one entry point: a fact from the world in, requests to the world out.
    pub fn handle(&mut self, input: Input, now: Now) -> Vec<Effect> {
        let mut fx = Vec::new();
        // Keys and output change nothing the terminal around is told (a title pi sets is seen in
        // `on_child_output`); everything else may.
        let upward = !matches!(
            input,
            Input::Stdin { .. }
                | Input::InputIdle { .. }
                | Input::ClientLeft { .. }
                | Input::ChildOutput { .. }
                | Input::TypeIntoChild(_)
        );
        match input {
            Input::Stdin { client, bytes } => {
                let tokens = self.keys.of(client).keys.feed(&bytes);
                self.on_tokens(client, tokens, now, &mut fx);
            }
            Input::InputIdle { client } => {
                let tokens = self.keys.of(client).keys.flush();
                self.on_tokens(client, tokens, now, &mut fx);
            }
            Input::ClientLeft { client } => {
                if self.keys.leave(client) {
                    fx.push(Effect::Redraw);
                }
            }
            Input::ChildOutput { modes, host_bytes } => {
                self.watch.alive(now);
                self.on_child_output(modes, host_bytes, now, &mut fx)
            }
            Input::ChildStarted { pid } => {
                self.trouble.clear_gave_up();
                self.child.pid = Some(pid);
                self.child.exit = None;
                self.watch.child_started(now);
                self.resume_after_server_restart(now, &mut fx);
                self.drive_started(now, &mut fx);
                fx.push(Effect::Redraw);
            }
            Input::ChildStopped => fx.push(Effect::Suspend),
            Input::ChildExited { code, signal } => self.on_child_exited(code, signal, now, &mut fx),
            Input::ChildNotStarted { why } => self.on_child_not_started(why, now, &mut fx),
            Input::LoopAway { ms } => {
                self.watch.away(ms, now);
                self.supervise(crate::supervisor::Event::TimeAway { ms }, now, &mut fx);
            }
            Input::ProgramStatus(status) => {
                self.pi.program_status = status;
                fx.push(Effect::Redraw);
            }
            Input::Bridge(event) => self.on_bridge(event, now, &mut fx),
            Input::SettingsLoaded(files) => self.on_settings_loaded(files, now, &mut fx),
            Input::SettingsSaved { result, files } => self.on_settings_saved(result, files, now, &mut fx),
            Input::ApplySettings(changes) => self.apply_changes(&changes, now, &mut fx),
            Input::TypeIntoChild(bytes) => fx.push(Effect::ToChild(bytes)),
            Input::LedgerStatus(status) => {
                if let Some(text) = &status {
                    self.flash.show(text.clone(), Tone::Error, now);
                }
                self.ledger_status = status;
                fx.push(Effect::Redraw);
            }
            Input::Notice { text, tone } => {
                self.flash.show(text, tone, now);
                fx.push(Effect::Redraw);
            }
            Input::Request(request) => self.on_client_request(request, now, &mut fx),
            Input::Drive(msg) => self.on_drive(msg, now, &mut fx),
            Input::Away(answer) => self.on_away(answer, now, &mut fx),
            Input::Tick => self.on_tick(now, &mut fx),
            Input::Redraw => fx.push(Effect::Redraw),
            Input::Resize { cols, rows } => {
                self.layout.set_size(cols, rows);
                self.relayout(&mut fx);
            }
            Input::Resumed { cols, rows } => {
                // pi was stopped with pokeshell: its silence meanwhile was ours.
                self.watch.alive(now);
                // The shell had the terminal meanwhile: every mode is set again.
                fx.push(Effect::HostModes(self.child.wanted_host_modes()));
                self.layout.set_size(cols, rows);
                self.relayout(&mut fx);
            }
            Input::Sessions(briefs) => {
                self.sessions = briefs;
                fx.push(Effect::Redraw);
            }
            Input::Changes { client, result } => self.changes_arrived(client, result, &mut fx),
            Input::LocalTime { utc_offset_secs } => {
                self.utc_offset_secs = utc_offset_secs;
                self.supervisor.set_utc_offset(utc_offset_secs);
                fx.push(Effect::Redraw);
            }
            Input::Guard(order) => {
                use crate::supervisor::guard::circuit::GuardOrder;
                let event = match order {
                    GuardOrder::Daily(news) => crate::supervisor::Event::Daily(news),
                    GuardOrder::Breaker(order) => crate::supervisor::Event::Breaker(order),
                };
                self.supervise(event, now, &mut fx);
            }
        }
        if upward {
            self.sync_upward(now, &mut fx);
        }
        fx
    }

    /// New child output: its mode changes follow on the host, and what it meant for the host goes there.
    fn on_child_output(&mut self, modes: ChildModes, host_bytes: Vec<u8>, now: Now, fx: &mut Vec<Effect>) {
        let (host_modes, suspend) = self.child.update(modes, now);
        if let Some(m) = host_modes {
            self.keys.set_release_events(m.reports_releases());
            fx.push(Effect::HostModes(m));
        }
        let host_bytes = match self.settings.get().get(KeyId::Clipboard).as_bool() {
            Some(true) => host_bytes,
            _ => upward::without_clipboard_writes(&host_bytes).unwrap_or(host_bytes),
        };
        if !host_bytes.is_empty() {
            let titled = self.upward.note_host_bytes(&host_bytes);
            fx.push(Effect::ToHost(host_bytes));
            if titled {
                self.sync_upward(now, fx);
            }
        }
        fx.push(Effect::Redraw);
        if suspend {
            fx.push(Effect::Suspend);
        }
    }

    /// Time passed: timers that ran out, and the supervisor's.
    fn on_tick(&mut self, now: Now, fx: &mut Vec<Effect>) {
        if self.flash.expire(now) || self.pi.silent_for(now).is_some() {
            fx.push(Effect::Redraw);
        }
        if self.supervisor.next_deadline().is_some_and(|d| d <= now.mono_ms) {
            let actions = self.supervisor.tick(now);
            self.perform(actions, now, fx);
            fx.push(Effect::Redraw);
        }
        if self.supervisor.has_live_timers() {
            fx.push(Effect::Redraw);
        }
        self.watch_tick(now, fx);
        self.drive_tick(now, fx);
    }

    /// When the session next needs an [`Input::Tick`] (monotonic ms), if ever.
    pub fn next_deadline(&self, now: Now) -> Option<u64> {
        let minute = self
            .side_visible()
            .then(|| crate::format::next_uptime_change(self.started_ms, now.mono_ms));
        let second = self
            .supervisor
            .has_live_timers()
            .then(|| (now.mono_ms / 1000 + 1) * 1000);
        let bridge = self.side_visible().then(|| self.pi.next_change(now)).flatten();
        [
            self.sessions_deadline(now),
            self.flash.deadline(),
            minute,
            second,
            bridge,
            self.supervisor.next_deadline(),
            self.watch_deadline(),
            self.drive_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The pane may have changed size: tell the loop, and redraw.
    fn relayout(&mut self, fx: &mut Vec<Effect>) {
        if let Some((cols, rows)) = self.layout.take_pane_change() {
            fx.push(Effect::ResizePane { cols, rows });
        }
        fx.push(Effect::Redraw);
    }

    pub fn settings(&self) -> &Settings {
        self.settings.get()
    }

    pub fn supervisor(&self) -> &Supervisor {
        &self.supervisor
    }

    pub fn supervisor_view(&self, now: Now) -> View {
        self.supervisor.view(now)
    }

    pub fn areas(&self) -> crate::ui::layout::Areas {
        self.layout.areas()
    }

    pub fn pane(&self) -> Rect {
        self.layout.areas().pane
    }

    fn side_visible(&self) -> bool {
        self.layout.areas().side.is_some()
    }

    /// The overlay this client has open, if any.
    pub fn overlay(&self, client: ClientId) -> Option<OverlayKind> {
        self.keys.overlay(client)
    }

    /// The clients that see something the others do not (an overlay, an armed prefix): each needs a
    /// frame of its own; every other client sees the same one.
    pub fn own_views(&self) -> Vec<ClientId> {
        self.keys.own_views()
    }
}

/// Everything these effects write to the child, in order (for tests, here and in the binary crate).
#[cfg(any(test, feature = "testing"))]
pub fn child_bytes(effects: &[Effect]) -> Vec<u8> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::ToChild(b) => Some(b.as_slice()),
            _ => None,
        })
        .flatten()
        .copied()
        .collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod restart_tests;

#[cfg(test)]
mod restart_dir_tests;
#[cfg(test)]
mod restart_planned_tests;

#[cfg(test)]
mod server_restart_tests;

#[cfg(test)]
mod brief_tests;

#[cfg(test)]
mod workspace_tests;

#[cfg(test)]
mod keyboards_tests;

#[cfg(test)]
mod changes_tests;

#[cfg(test)]
mod upward_tests;

#[cfg(test)]
mod drive_tests;
