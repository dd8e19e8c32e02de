//! Builds the side pane's sections and the status overlay's lines from the session's state and the
//! supervisor's view.

use ratatui_core::layout::Rect;
use ratatui_core::text::{Line, Span};

use super::Session;
use crate::bridge::Hello;
use crate::format::{clock, duration, short_session, uptime};
use crate::supervisor::view::{ToolView, WakeupView};
use crate::supervisor::{AgentState, ContextUsage, LedgerKind, LedgerRecord, Now, View};
use crate::ui::side::{Section, SideView};
use crate::ui::theme::{self, Tone};

/// How many interventions the side pane lists.
const RECENT: usize = 5;

/// Where the bridge inside pi stands, as the side pane shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BridgeStatus {
    /// Hosting a command that is not pi: there is no bridge.
    #[default]
    NotUsed,
    /// pi is starting; the bridge has not said hello yet.
    Waiting,
    Connected,
    Disconnected(String),
}

/// What the bridge told about pi.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PiInfo {
    pub status: BridgeStatus,
    pub version: Option<String>,
    /// The session's name, else its id.
    pub session: Option<String>,
    pub model: Option<String>,
    /// Context use as pi last reported it (settle or snapshot).
    pub context: Option<ContextUsage>,
    /// A compaction ran since pi last reported its context use.
    pub compacted: bool,
    /// When the bridge last said anything (mono ms): an event, a reply or a heartbeat.
    pub last_heard_ms: Option<u64>,
    /// Lines the bridge sent that never arrived, by the gaps in their sequence numbers.
    pub lost_lines: u64,
    /// pi's own latest status report (OSC 7501), read from its screen output.
    pub program_status: Option<crate::screen::ProgramStatus>,
    /// pi did not settle 30 s after pokeshell's own abort of a stalled run (STALL-F1).
    pub frozen: bool,
}

/// The bridge sends a heartbeat every 5 s: after three missed ones it counts as silent.
pub const SILENT_AFTER_MS: u64 = 15_000;

impl PiInfo {
    /// `bridge`: `None` when the child is not pi, else whether the bridge could be set up.
    pub fn new(bridge: Option<&Result<(), String>>) -> Self {
        let status = match bridge {
            None => BridgeStatus::NotUsed,
            Some(Ok(())) => BridgeStatus::Waiting,
            Some(Err(e)) => BridgeStatus::Disconnected(e.clone()),
        };
        Self {
            status,
            ..Self::default()
        }
    }

    pub fn connected(&mut self, hello: &Hello) {
        self.status = BridgeStatus::Connected;
        self.frozen = false;
        self.version = hello.pi_version.clone().or(self.version.take());
        self.session = hello.session_name.clone().or(hello.session_id.clone());
        self.model = hello.model.clone();
    }

    /// pokeshell relaunches pi: its new bridge has yet to say hello.
    pub fn restarting(&mut self) {
        self.status = BridgeStatus::Waiting;
        self.program_status = None;
    }

    /// Context use as pi reported it at a settle.
    pub fn note_context(&mut self, reported: Option<ContextUsage>) {
        if let Some(u) = reported {
            if u.percent.is_some() {
                self.compacted = false;
            }
            self.context = Some(u);
        }
    }

    pub fn heard(&mut self, now: Now) {
        self.last_heard_ms = Some(now.mono_ms);
    }

    /// How long a connected bridge has been silent, once that is long enough to say so.
    pub fn silent_for(&self, now: Now) -> Option<u64> {
        if self.status != BridgeStatus::Connected {
            return None;
        }
        let silent = now.mono_ms.saturating_sub(self.last_heard_ms?);
        (silent >= SILENT_AFTER_MS).then_some(silent)
    }

    /// When the side pane's word on the bridge changes next: it goes silent, or its silence grows.
    pub fn next_change(&self, now: Now) -> Option<u64> {
        if self.status != BridgeStatus::Connected {
            return None;
        }
        let heard = self.last_heard_ms?;
        match self.silent_for(now) {
            None => Some(heard + SILENT_AFTER_MS),
            Some(_) => Some((now.mono_ms / 1000 + 1) * 1000),
        }
    }

    pub fn note_compacted(&mut self) {
        self.context = None;
        self.compacted = true;
    }
}

fn kv(key: &str, value: impl Into<String>) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{key:<8}"), theme::dim()),
        Span::raw(value.into()),
    ])
}

fn toned(text: impl Into<String>, tone: Tone) -> Line<'static> {
    Line::from(Span::styled(text.into(), tone.style()))
}

/// `[███████░░░] 72%` in `width` cells, or why it is unknown.
pub fn context_bar(usage: Option<&ContextUsage>, compacted: bool, width: usize) -> Line<'static> {
    let Some(percent) = usage.and_then(|u| u.percent) else {
        let why = if compacted {
            "unknown since the compaction"
        } else {
            "unknown"
        };
        return toned(why, Tone::Dim);
    };
    let cells = width.saturating_sub(7).max(4);
    let filled = ((percent.clamp(0.0, 100.0) / 100.0) * cells as f64).round() as usize;
    let tone = match percent {
        p if p >= 80.0 => Tone::Error,
        p if p >= 60.0 => Tone::Warn,
        _ => Tone::Ok,
    };
    Line::from(vec![
        Span::styled("█".repeat(filled), tone.style()),
        Span::styled("░".repeat(cells - filled), theme::dim()),
        Span::raw(format!(" {percent:.0}%")),
    ])
}

fn tool_lines(t: &ToolView) -> Vec<Line<'static>> {
    let tone = if t.overdue { Tone::Warn } else { Tone::Plain };
    let mark = if t.overdue { "⚠ " } else { "" };
    let mut lines = vec![Line::from(vec![
        Span::styled(
            format!("{mark}{}", t.name),
            tone.style().add_modifier(ratatui_core::style::Modifier::BOLD),
        ),
        Span::styled(format!("  {}", duration(t.elapsed_ms)), tone.style()),
    ])];
    if !t.args_preview.is_empty() {
        lines.push(toned(format!("  {}", t.args_preview), Tone::Dim));
    }
    lines
}

fn wakeup_lines(w: &WakeupView) -> Vec<Line<'static>> {
    let when = match w.held {
        Some(why) => format!("due, held: {why}"),
        None if w.remaining_ms == 0 => "due now".into(),
        None => format!("in {}", duration(w.remaining_ms)),
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(w.id.clone(), theme::key()),
        Span::raw(format!("  {when}")),
    ])];
    let about = if w.reason.is_empty() { &w.prompt } else { &w.reason };
    if !about.is_empty() {
        lines.push(toned(format!("  {about}"), Tone::Dim));
    }
    lines
}

fn record_line(r: &LedgerRecord, utc_offset_secs: i32) -> Line<'static> {
    let tone = match r.kind {
        LedgerKind::Action => Tone::Accent,
        LedgerKind::Declined => Tone::Dim,
        LedgerKind::Outcome => Tone::Plain,
    };
    Line::from(vec![
        Span::styled(format!("{} ", clock(r.wall_ms, utc_offset_secs)), theme::dim()),
        Span::styled(r.reason.clone(), tone.style()),
    ])
}

fn agent_line(state: AgentState) -> Line<'static> {
    match state {
        AgentState::Idle => toned("● idle", Tone::Dim),
        AgentState::Running => toned("● running", Tone::Ok),
        AgentState::Compacting => toned("● compacting", Tone::Warn),
        AgentState::Unknown => toned("● state unknown", Tone::Dim),
    }
}

impl Session {
    /// The side pane: `extra` (from a layer above the session) first, then the session's own.
    pub(super) fn side_from(&self, view: &View, pane: Rect, now: Now, extra: Option<Section>) -> SideView {
        let mut sections: Vec<Section> = extra.into_iter().collect();
        sections.extend(self.sessions_section(now));
        sections.push(self.pi_section(view, now));
        if !view.tools.is_empty() {
            sections.push(Section {
                title: "tools".into(),
                lines: view.tools.iter().flat_map(tool_lines).collect(),
            });
        }
        if self.pi.status != BridgeStatus::NotUsed {
            let width = self.layout.side_width().saturating_sub(3) as usize;
            sections.push(Section {
                title: "context".into(),
                lines: vec![context_bar(self.pi.context.as_ref(), self.pi.compacted, width)],
            });
        }
        let (run, total) = self.spend();
        if total.replies > 0 {
            sections.push(Section {
                title: "spend".into(),
                lines: vec![kv("run", run.short()), kv("session", total.short())],
            });
        }
        if !view.wakeups.is_empty() {
            sections.push(Section {
                title: "wakeups".into(),
                lines: view.wakeups.iter().flat_map(wakeup_lines).collect(),
            });
        }
        sections.extend(super::guard_view::guard_section(&view.guard));
        let watch = supervision_lines(view, self.utc_offset_secs);
        if !watch.is_empty() {
            sections.push(Section {
                title: "supervisor".into(),
                lines: watch,
            });
        }
        let shown: Vec<Line<'static>> = {
            let skip = view.recent.len().saturating_sub(RECENT);
            view.recent
                .iter()
                .skip(skip)
                .map(|r| record_line(r, self.utc_offset_secs))
                .collect()
        };
        let mut shown = shown;
        if let Some(status) = &self.ledger_status {
            shown.push(toned(status.clone(), Tone::Error));
        }
        if !shown.is_empty() {
            sections.push(Section {
                title: "interventions".into(),
                lines: shown,
            });
        }
        sections.push(self.process_section(pane, now));
        SideView { sections }
    }

    fn pi_section(&self, view: &View, now: Now) -> Section {
        let label = |text: &str| Span::styled(format!("{text:<8}"), theme::dim());
        let mut lines = Vec::new();
        match self.reported_state() {
            Some(line) => lines.push(line),
            None if self.pi.status != BridgeStatus::NotUsed => lines.push(agent_line(view.agent)),
            None => {}
        }
        lines.extend(self.restart_lines());
        lines.push(match &self.pi.status {
            BridgeStatus::NotUsed => Line::from(vec![
                label("bridge"),
                Span::styled("not connected (not pi)", theme::dim()),
            ]),
            BridgeStatus::Waiting => Line::from(vec![
                label("bridge"),
                Span::styled("not connected yet", theme::dim()),
            ]),
            BridgeStatus::Connected => match self.pi.silent_for(now) {
                None => Line::from(vec![label("bridge"), Span::styled("connected", theme::ok())]),
                Some(ms) => Line::from(vec![
                    label("bridge"),
                    Span::styled(format!("connected, silent {}", duration(ms)), theme::warn()),
                ]),
            },
            BridgeStatus::Disconnected(why) => Line::from(vec![
                label("bridge"),
                Span::styled(format!("not connected: {why}"), theme::warn()),
            ]),
        });
        if self.pi.frozen {
            lines.push(toned(
                "⚠ pi did not stop after pokeshell's abort: it looks frozen".to_string(),
                Tone::Error,
            ));
        }
        if let Some(v) = &self.pi.version {
            lines.push(kv("version", v.clone()));
        }
        if let Some(s) = self.pi.session.as_ref().or(view.session_id.as_ref()) {
            lines.push(kv("session", short_session(s)));
        }
        if let Some(m) = &self.pi.model {
            lines.push(kv("model", m.clone()));
        }
        Section {
            title: "pi".into(),
            lines,
        }
    }

    fn process_section(&self, pane: Rect, now: Now) -> Section {
        let mut process = vec![kv("command", self.opts.label.clone())];
        match (self.child.pid, self.child.exit) {
            (_, Some(code)) => process.push(kv("exited", format!("code {code}"))),
            (Some(pid), None) => process.push(kv("pid", pid.to_string())),
            (None, None) => process.push(kv("pid", "starting")),
        }
        process.push(kv("pane", format!("{}×{}", pane.width, pane.height)));
        process.push(kv("uptime", uptime(now.mono_ms.saturating_sub(self.started_ms))));
        Section {
            title: "process".into(),
            lines: process,
        }
    }
}

/// What the supervisor is waiting for or holding back, in a few words each.
fn supervision_lines(view: &View, utc_offset_secs: i32) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(w) = &view.wake {
        let what = if w.failed {
            "compaction failed"
        } else {
            "compaction"
        };
        lines.push(toned(format!("👀 watching after {what}"), Tone::Warn));
    }
    if let Some(p) = &view.pending_resume {
        let why = if p.held_by_compaction {
            "until the compaction ends".to_string()
        } else {
            format!("{} (cooldown)", duration(p.due_in_ms))
        };
        lines.push(toned(format!("resume ({}) waits {why}", p.rule), Tone::Warn));
    }
    if let Some(w) = &view.limit_wait {
        let when = match w.held {
            Some(why) => format!("due, held: {why}"),
            None => format!(
                "in {} (at {})",
                duration(w.remaining_ms),
                clock(w.at_wall_ms, utc_offset_secs)
            ),
        };
        lines.push(toned(format!("⏸ {} — resume {when}", w.kind), Tone::Warn));
        lines.push(toned(format!("  {}", w.error_line), Tone::Dim));
        if let Some(prober) = &w.probe_by {
            lines.push(toned(
                format!("  session {prober} probes first; this one follows"),
                Tone::Warn,
            ));
        }
        lines.push(toned(
            "  prefix+p resumes now; typing cancels".to_string(),
            Tone::Dim,
        ));
    }
    if view.stall_abort_pending {
        lines.push(toned("stopping a stalled run…".to_string(), Tone::Warn));
    }
    if view.manual_poke_held {
        lines.push(toned("your poke waits for the compaction", Tone::Warn));
    }
    if view.handoff_in_flight {
        lines.push(toned("writing a handoff…", Tone::Accent));
    }
    if let Some(who) = view.stopped_by {
        lines.push(toned(
            format!("stopped by {}: no automatic poke until you type", who.who()),
            Tone::Dim,
        ));
    }
    let c = &view.counters;
    if c.pokes > 0 {
        lines.push(kv("pokes", format!("{}/{} this episode", c.pokes, c.max_pokes)));
    }
    if c.retries > 0 {
        lines.push(kv("retries", format!("{}/{}", c.retries, c.max_retries)));
    }
    if c.loop_nudges > 0 {
        lines.push(kv("nudges", format!("{}/{}", c.loop_nudges, c.max_loop_nudges)));
    }
    if c.promise_pokes > 0 {
        lines.push(kv(
            "promises",
            format!("{}/{} poked", c.promise_pokes, c.max_promise_pokes),
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_bar_shows_percent_or_unknown() {
        let u = ContextUsage {
            tokens: Some(9000),
            window: Some(16000),
            percent: Some(56.25),
        };
        let line = context_bar(Some(&u), false, 20);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(text.ends_with(" 56%"), "{text}");
        assert_eq!(text.chars().filter(|c| *c == '█').count(), 7);
        let unknown = ContextUsage {
            tokens: None,
            window: Some(16000),
            percent: None,
        };
        let text: String = context_bar(Some(&unknown), true, 20)
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(text, "unknown since the compaction");
    }
}
