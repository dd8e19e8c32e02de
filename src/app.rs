//! The application state: what the user sees and what their keys do. The event loop in `run` feeds
//! it input and time; it answers with effects, so the same logic runs in tests without a terminal.

pub mod demo;
mod input;
pub mod link;
mod mouse;
pub mod run;
pub mod view;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::bridge::protocol::Command;
use crate::config::{Settings, SidePaneMode};
use crate::host::HostModes;
use crate::input::prefix::PrefixKey;
use crate::input::router::Router;
use crate::input::tokenizer::Tokenizer;
use crate::screen::ChildModes;
use crate::supervisor::{LedgerRecord, Now, Supervisor, View};
use crate::ui::footer::FooterView;
use crate::ui::help::HelpView;
use crate::ui::layout::{self, Areas, SideMode};
use crate::ui::pane::{self, PaneView};
use crate::ui::prompt::LinePrompt;
use crate::ui::settings_dialog::SettingsDialog;
use crate::ui::status_overlay::StatusOverlay;
use crate::ui::theme::Tone;

/// After Ctrl+Z, how long pi has to show that it is suspending (it turns bracketed paste off).
const SUSPEND_WINDOW: Duration = Duration::from_secs(1);

fn is_suspend_key(k: &KeyEvent) -> bool {
    k.code == KeyCode::Char('z')
        && k.modifiers == crossterm::event::KeyModifiers::CONTROL
        && k.kind == KeyEventKind::Press
}

/// How long a footer message stays.
const MESSAGE_TTL: Duration = Duration::from_secs(4);

/// Something the event loop must do on the app's behalf.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Bytes for the child's input.
    ToChild(Vec<u8>),
    /// The pane may have changed size: resize the PTY and the mirror.
    Relayout,
    /// Draw again.
    Redraw,
    /// Send a command to the bridge; report the outcome with [`App::on_sent`].
    Bridge(Command, link::Purpose),
    /// Ring the bell and send a desktop notification (as the settings allow).
    Desktop(String),
    /// Append a record to the intervention ledger.
    Ledger(LedgerRecord),
    /// Demo only: drop what the scripted model still has queued and queue this instead.
    DemoModel(Box<crate::demo::model::Scenario>),
}

/// A layer drawn over the panes that takes the keyboard while it is open.
pub enum Overlay {
    Help,
    Settings(Box<SettingsDialog>),
    Status(Box<StatusOverlay>),
    /// The handoff's optional focus line.
    Handoff(LinePrompt),
}

/// Which overlay is open, for tests and the event loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayKind {
    Help,
    Settings,
    Status,
    Handoff,
}

#[derive(Debug, Clone)]
pub struct AppOptions {
    /// What runs in the pane, as the side pane shows it.
    pub label: String,
}

impl Default for AppOptions {
    fn default() -> Self {
        Self { label: "pi".into() }
    }
}

fn side_mode(m: SidePaneMode) -> SideMode {
    match m {
        SidePaneMode::Auto => SideMode::Auto,
        SidePaneMode::Shown => SideMode::Shown,
        SidePaneMode::Hidden => SideMode::Hidden,
    }
}

pub struct App {
    opts: AppOptions,
    settings: Settings,
    prefix: PrefixKey,
    side_width: u16,
    router: Router,
    tokenizer: Tokenizer,
    side_mode: SideMode,
    /// The side pane setting last applied, to tell a changed setting from a re-read of the same one.
    side_setting: SideMode,
    /// Host terminal size, columns × rows.
    size: (u16, u16),
    overlay: Option<Overlay>,
    message: Option<(String, Tone, Instant)>,
    child_pid: Option<i32>,
    started: Instant,
    /// Unix-epoch milliseconds at `started`: wall time is derived from it, never read again.
    started_wall_ms: u64,
    child_exit: Option<i32>,
    supervisor: Supervisor,
    pi: view::PiInfo,
    pending: link::Pending,
    /// Set while `pokeshell demo` plays a tour.
    demo: Option<demo::DemoState>,
    /// When Ctrl+Z last went to the child.
    suspend_key_at: Option<Instant>,
}

impl App {
    pub fn new(opts: AppOptions, settings: Settings, cols: u16, rows: u16, now: Instant) -> Self {
        let effective = settings.effective();
        let settings_supervisor = effective.supervisor();
        let display = effective.display;
        let prefix = display.prefix_key.parse().unwrap_or_default();
        let mut app = Self {
            prefix,
            side_width: display.side_pane_width,
            settings,
            router: Router::new(prefix),
            tokenizer: Tokenizer::new(),
            side_mode: side_mode(display.side_pane),
            side_setting: side_mode(display.side_pane),
            size: (cols, rows),
            overlay: None,
            message: None,
            child_pid: None,
            started: now,
            started_wall_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            child_exit: None,
            supervisor: Supervisor::new(settings_supervisor),
            pi: view::PiInfo::default(),
            pending: link::Pending::default(),
            demo: None,
            suspend_key_at: None,
            opts,
        };
        let warnings = app.settings.warnings().len();
        if warnings > 0 {
            let prefix = app.prefix;
            app.flash(
                format!("{warnings} settings warning(s): {prefix} i shows them"),
                Tone::Warn,
                now,
            );
        }
        app
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The supervisor's notion of now, derived from the monotonic instant.
    pub fn now(&self, at: Instant) -> Now {
        let mono_ms = at.saturating_duration_since(self.started).as_millis() as u64;
        Now::new(mono_ms, self.started_wall_ms + mono_ms)
    }

    pub fn supervisor_view(&self, at: Instant) -> View {
        self.supervisor.view(self.now(at))
    }

    pub fn set_bridge_status(&mut self, status: view::BridgeStatus) {
        self.pi.status = status;
    }

    /// Takes display settings that may have changed (prefix key, side pane width and mode).
    fn apply_display_settings(&mut self, effects: &mut Vec<Effect>) {
        let display = self.settings.effective().display;
        let prefix = display.prefix_key.parse().unwrap_or_default();
        if prefix != self.prefix {
            self.prefix = prefix;
            self.router = Router::new(prefix);
        }
        self.side_width = display.side_pane_width;
        // Only a changed setting overrides what the user chose with prefix+s during this run.
        let configured = side_mode(display.side_pane);
        if configured != self.side_setting {
            self.side_setting = configured;
            self.side_mode = configured;
        }
        effects.push(Effect::Relayout);
    }

    pub fn areas(&self) -> Areas {
        layout::areas(self.size.0, self.size.1, self.side_mode, self.side_width)
    }

    pub fn pane(&self) -> Rect {
        self.areas().pane
    }

    pub fn set_size(&mut self, cols: u16, rows: u16) {
        self.size = (cols, rows);
    }

    pub fn set_child_pid(&mut self, pid: i32) {
        self.child_pid = Some(pid);
    }

    pub fn set_child_exit(&mut self, code: i32) {
        self.child_exit = Some(code);
    }

    /// pi handles Ctrl+Z by stopping its TUI and sending itself SIGTSTP. Inside pokeshell that signal
    /// is discarded (pi's process group has no parent in its session), so pokeshell suspends in its
    /// place: when Ctrl+Z went to pi and pi then turned bracketed paste off, as stopping its TUI does.
    pub fn wants_suspend(&mut self, before: &ChildModes, after: &ChildModes, now: Instant) -> bool {
        let recent = self
            .suspend_key_at
            .is_some_and(|t| now.saturating_duration_since(t) <= SUSPEND_WINDOW);
        if recent && before.bracketed_paste && !after.bracketed_paste {
            self.suspend_key_at = None;
            return true;
        }
        false
    }

    /// Keeps release reports of pokeshell's own keys away from pi when the host sends them.
    pub fn set_host_modes(&mut self, modes: &HostModes) {
        self.router.set_release_events(modes.reports_releases());
    }

    pub fn overlay(&self) -> Option<OverlayKind> {
        self.overlay.as_ref().map(|o| match o {
            Overlay::Help => OverlayKind::Help,
            Overlay::Settings(_) => OverlayKind::Settings,
            Overlay::Status(_) => OverlayKind::Status,
            Overlay::Handoff(_) => OverlayKind::Handoff,
        })
    }

    pub fn flash(&mut self, text: impl Into<String>, tone: Tone, now: Instant) {
        self.message = Some((text.into(), tone, now));
    }

    /// Time passed: lets the supervisor act on its timers; redraws when something visible changed.
    pub fn on_tick(&mut self, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        if let Some((_, _, at)) = &self.message
            && now.duration_since(*at) >= MESSAGE_TTL
        {
            self.message = None;
            effects.push(Effect::Redraw);
        }
        if self.supervisor_due(now) {
            let actions = self.supervisor.tick(self.now(now));
            self.perform(actions, now, &mut effects);
            effects.push(Effect::Redraw);
        }
        if self.live_timers() {
            effects.push(Effect::Redraw);
        }
        effects.extend(self.demo_tick(now));
        effects
    }

    fn supervisor_due(&self, now: Instant) -> bool {
        self.supervisor_deadline().is_some_and(|d| d <= now)
    }

    fn supervisor_deadline(&self) -> Option<Instant> {
        self.supervisor
            .next_deadline()
            .map(|ms| self.started + std::time::Duration::from_millis(ms))
    }

    /// Running tool timers and wakeup countdowns tick every second while shown.
    fn live_timers(&self) -> bool {
        self.supervisor.has_live_timers()
    }

    fn next_whole_second(&self, now: Instant) -> Instant {
        let ms = now.saturating_duration_since(self.started).as_millis() as u64;
        self.started + std::time::Duration::from_millis((ms / 1000 + 1) * 1000)
    }

    /// When `on_tick` must run next, if ever.
    pub fn next_tick(&self, now: Instant) -> Option<Instant> {
        let msg = self.message.as_ref().map(|(_, _, at)| *at + MESSAGE_TTL);
        let minute = self
            .side_visible()
            .then(|| view::next_uptime_change(self.started, now));
        let second = self.live_timers().then(|| self.next_whole_second(now));
        [
            msg,
            minute,
            second,
            self.supervisor_deadline(),
            self.demo_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn side_visible(&self) -> bool {
        self.areas().side.is_some()
    }

    pub fn footer_view(&self, at: Instant) -> FooterView {
        self.footer_from(&self.supervisor_view(at))
    }

    fn footer_from(&self, view: &View) -> FooterView {
        let message = self.message.as_ref().map(|(t, tone, _)| (t.clone(), *tone));
        FooterView::new(&view.footer, message, self.router.is_armed(), self.prefix)
    }

    pub fn draw(&self, frame: &mut Frame, screen: &vt100::Screen, now: Instant) {
        let areas = self.areas();
        frame.render_widget(PaneView { screen }, areas.pane);
        let view = self.supervisor_view(now);
        if let Some(side) = areas.side {
            frame.render_widget(&self.side_from(&view, areas.pane, now), side);
        }
        if let Some(footer) = areas.footer {
            frame.render_widget(&self.footer_from(&view), footer);
        }
        match &self.overlay {
            Some(Overlay::Help) => {
                let prefix = self.prefix.to_string();
                frame.render_widget(HelpView { prefix: &prefix }, frame.area());
            }
            Some(Overlay::Settings(d)) => frame.render_widget(d.as_ref(), frame.area()),
            Some(Overlay::Status(s)) => frame.render_widget(s.as_ref(), frame.area()),
            Some(Overlay::Handoff(p)) => frame.render_widget(p, frame.area()),
            None => {
                if let Some(pos) = pane::cursor(screen, areas.pane) {
                    frame.set_cursor_position(pos);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
