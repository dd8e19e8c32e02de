//! What the footer and the side pane show, as data. Rendering is the UI's job.

use super::Supervisor;
use super::arbiter::StopCause;
use super::event::ContextUsage;
use super::guard::DailyState;
use super::guard::halt::Halt;
use super::ledger::LedgerRecord;
use super::time::Now;
use super::wake::WakePhase;

#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub footer: Footer,
    pub agent: AgentState,
    pub bridge_connected: bool,
    pub session_id: Option<String>,
    /// Running tool calls, oldest first.
    pub tools: Vec<ToolView>,
    /// Pending wakeups, soonest first.
    pub wakeups: Vec<WakeupView>,
    pub wake: Option<WakeView>,
    /// A resume chosen at a settle that waits for a cooldown or a compaction.
    pub pending_resume: Option<PendingResumeView>,
    pub manual_poke_held: bool,
    pub handoff_in_flight: bool,
    /// Set after an aborted settle: nothing resumes until the user types.
    pub stopped_by: Option<StopCause>,
    /// A planned resume after a provider error (LIMIT-W1).
    pub limit_wait: Option<LimitWaitView>,
    /// pokeshell aborted a silent run and waits for its settle (STALL-S1, STALL-R1).
    pub stall_abort_pending: bool,
    pub counters: Counters,
    /// Context use as of the last settle.
    pub context: Option<ContextUsage>,
    /// The latest ledger records, oldest first.
    pub recent: Vec<LedgerRecord>,
    /// What the guard rails watch and did (docs/supervision.md, "Guard rails").
    pub guard: GuardView,
}

/// The guard rails, as the side pane and the session's brief show them.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardView {
    /// The pause the person is asked about.
    pub halt: Option<Halt>,
    pub spent_usd: f64,
    /// The budget in force (with what was allowed), when there is one.
    pub budget_usd: Option<f64>,
    /// Model calls since the person's last word, and the cap (0: none).
    pub calls: u32,
    pub max_calls: u32,
    /// Ladder steps taken since the person's last word (0 to 3).
    pub ladder: u8,
    /// The day's budget across sessions, while it is spent.
    pub daily: Option<DailyState>,
    /// The last step or pause: its rule and evidence.
    pub last: Option<(&'static str, String)>,
}

/// pi-poke's footer (docs/supervision.md, "Long tool calls"): `📌 p:on` / `📌 p:off` and one transient suffix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footer {
    pub enabled: bool,
    pub suffix: Option<FooterSuffix>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FooterSuffix {
    /// `⏳ bash`: a tool call runs.
    Running { tool: String },
    /// `⚠️ bash 45s`: a tool call is past the threshold (live seconds).
    Overdue { tool: String, seconds: u64 },
    /// `👀 post-compact`: a post-compaction wake is armed or watching.
    PostCompact,
    /// `📤 resume`: pokeshell sent a resume poke (until the next settle).
    Resume,
    /// `⏸ limit 0:24`: a planned resume after a provider error, counting down.
    LimitWait { remaining_ms: u64 },
    /// `⛔ budget`: a guard rail paused the session and asks the person.
    Paused { what: &'static str },
}

impl Footer {
    /// The exact footer text; colour is the UI's choice (success for on, dim for off, warning for
    /// overdue and post-compact).
    pub fn text(&self) -> String {
        let base = if self.enabled { "📌 p:on" } else { "📌 p:off" };
        match &self.suffix {
            None => base.to_string(),
            Some(suffix) => format!("{base} {}", suffix.text()),
        }
    }
}

impl FooterSuffix {
    /// The suffix's own text, as it follows the base in the footer.
    pub fn text(&self) -> String {
        match self {
            FooterSuffix::Running { tool } => format!("⏳ {tool}"),
            FooterSuffix::Overdue { tool, seconds } => format!("⚠️ {tool} {seconds}s"),
            FooterSuffix::PostCompact => "👀 post-compact".to_string(),
            FooterSuffix::Resume => "📤 resume".to_string(),
            FooterSuffix::LimitWait { remaining_ms } => {
                format!("⏸ limit {}", super::provider_wait::countdown(*remaining_ms))
            }
            FooterSuffix::Paused { what } => format!("{what} · prefix+a / prefix+x"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentState {
    Idle,
    Running,
    Compacting,
    /// The bridge just (re)connected, or is gone.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolView {
    pub id: String,
    pub name: String,
    pub args_preview: String,
    pub started_wall_ms: u64,
    pub elapsed_ms: u64,
    pub overdue: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeupView {
    pub id: String,
    pub reason: String,
    pub prompt: String,
    pub fire_at_wall_ms: u64,
    /// 0 when due (it may be held: see `held`).
    pub remaining_ms: u64,
    /// Why a due wakeup does not fire yet, if it is held.
    pub held: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeView {
    pub phase: WakePhase,
    pub failed: bool,
    pub since_wall_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitWaitView {
    /// "rate limit", "overload", ...
    pub kind: &'static str,
    /// The first line of the provider's error.
    pub error_line: String,
    /// When the resume is planned (Unix epoch ms).
    pub at_wall_ms: u64,
    pub remaining_ms: u64,
    /// Why a due resume does not go out yet.
    pub held: Option<&'static str>,
    /// GUARD-K1: the session that probes the provider first; this one resumes after it got through.
    pub probe_by: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingResumeView {
    pub rule: &'static str,
    pub due_in_ms: u64,
    pub held_by_compaction: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counters {
    /// Pokes in the current stall episode, and the maximum.
    pub pokes: u32,
    pub max_pokes: u32,
    /// Empty-reply retries for the current occurrence, and the maximum.
    pub retries: u32,
    pub max_retries: u32,
    /// The highest loop-guard nudge number stored for this session, and the maximum.
    pub loop_nudges: u32,
    pub max_loop_nudges: u32,
    /// Promise pokes in the current episode (PROM-B1), and the maximum.
    pub promise_pokes: u32,
    pub max_promise_pokes: u32,
}

impl Supervisor {
    pub(super) fn build_view(&self, now: Now) -> View {
        let tools = self.tools.views(now.mono_ms, self.config.threshold_ms());
        let held = self.circuit_held();
        let limit_remaining = self.provider.wait().map(|wait| match held {
            // GUARD-K1: the shared countdown, the probing session's.
            Some(held) => held.until_wall_ms.saturating_sub(now.wall_ms),
            None => wait.due_mono.saturating_sub(now.mono_ms),
        });
        let wakeups = self.wakeups.views(now.mono_ms, self.wakeups_held());
        let session = self.session_id.as_deref();
        View {
            footer: Footer {
                enabled: self.config.poke.enabled,
                suffix: match (&self.guard.halt, limit_remaining) {
                    (Some(halt), _) if self.config.poke.enabled => Some(FooterSuffix::Paused {
                        what: halt.cause.footer(),
                    }),
                    (_, Some(remaining_ms)) if self.config.poke.enabled => {
                        Some(FooterSuffix::LimitWait { remaining_ms })
                    }
                    _ => self.footer_suffix(&tools),
                },
            },
            agent: self.agent_state(),
            bridge_connected: self.connected,
            session_id: self.session_id.clone(),
            tools,
            wakeups,
            wake: self.post_compact.view(),
            pending_resume: self.arbiter.parked().map(|deferred| PendingResumeView {
                rule: deferred.resume.rule(),
                due_in_ms: deferred.due_mono.saturating_sub(now.mono_ms),
                held_by_compaction: self.compaction.active(),
            }),
            manual_poke_held: self.held_manual_poke.is_some(),
            handoff_in_flight: self.compaction.handoff_in_flight(),
            stopped_by: self.arbiter.stopped(),
            limit_wait: self.provider.wait().map(|wait| {
                let remaining_ms = limit_remaining.unwrap_or(0);
                LimitWaitView {
                    kind: super::provider_wait::kind_label(wait.kind),
                    error_line: wait.error_line.clone(),
                    at_wall_ms: held.map_or(wait.at_wall, |h| h.until_wall_ms),
                    remaining_ms,
                    held: if remaining_ms == 0 {
                        self.limit_held()
                    } else {
                        None
                    },
                    probe_by: held.map(|h| h.prober.clone()),
                }
            }),
            stall_abort_pending: self.stall.pending_abort().is_some(),
            counters: Counters {
                pokes: self.post_compact.pokes(),
                max_pokes: self.config.max_pokes(),
                retries: self.recovery.retries(session),
                max_retries: self.config.recovery.max_retries,
                loop_nudges: self.recovery.highest_nudge(session),
                max_loop_nudges: self.config.recovery.effective_max_loop_nudges(),
                promise_pokes: self.promise.pokes(),
                max_promise_pokes: self.config.recovery.max_promise_pokes,
            },
            context: self.context,
            recent: self.ledger.recent().cloned().collect(),
            guard: GuardView {
                halt: self.guard.halt.clone(),
                spent_usd: self.guard.spend.spent_usd(),
                budget_usd: self.guard.spend.limit_usd(self.config.guard.budget_usd),
                calls: self.guard.spend.calls(),
                max_calls: self.config.guard.max_calls_per_run,
                ladder: self.guard.ladder.taken(),
                daily: self.guard.daily,
                last: self.guard.last.clone(),
            },
        }
    }

    /// Priority: resume sent > overdue tool > post-compaction wake > running tool. Nothing while off.
    fn footer_suffix(&self, tools: &[ToolView]) -> Option<FooterSuffix> {
        if !self.config.poke.enabled {
            return None;
        }
        if self.arbiter.resume_shown() {
            return Some(FooterSuffix::Resume);
        }
        if let Some(tool) = tools.iter().rev().find(|tool| tool.overdue) {
            return Some(FooterSuffix::Overdue {
                tool: tool.name.clone(),
                seconds: (tool.elapsed_ms + 500) / 1000,
            });
        }
        if self.post_compact.armed() {
            return Some(FooterSuffix::PostCompact);
        }
        tools.last().map(|tool| FooterSuffix::Running {
            tool: tool.name.clone(),
        })
    }

    fn agent_state(&self) -> AgentState {
        if self.compaction.active() {
            AgentState::Compacting
        } else if !self.connected || !self.run.known() {
            AgentState::Unknown
        } else if self.run.idle() {
            AgentState::Idle
        } else {
            AgentState::Running
        }
    }
}
