//! The pure supervisor: events and the current time go in, actions come out as data.
//!
//! One state machine ports four pi extensions (docs/supervision.md explains every rule). Each part owns
//! its state and is only reached through its methods:
//! - [`run`]: where pi's agent loop is; [`compaction`]: whether a compaction runs; [`wake`]: the
//!   post-compaction wake and pi-poke's stall episode;
//! - [`monitor`]: the running tools, the long-tool monitor and the orphans' bookkeeping (pi-poke);
//! - [`recovery`]: the empty-reply retry's and the loop guard's budgets (pi-stalled-agent-recovery);
//!   [`wakeup`]: model-scheduled wakeups (pi-wakeup); [`guard`]: the guard rails;
//! - [`stall`]: the silence of a run in flight; [`provider_wait`]: the planned resume after a provider
//!   error, read with [`limit`]; [`promise`]: runs that end on an announced step, and their pokes;
//! - [`arbiter`]: who owned the last settle, the shared cooldown, the parked resume, the user's stop;
//!   [`delivery`]: the sends waiting for the bridge's answer; [`outcome`]: what came of a resume;
//!   [`ledger`]: the latest records.
//!
//! [`Supervisor`] orchestrates them: the files under `flow/` take each event or tick through the parts.
//!
//! Nothing here reads a clock, touches a file or spawns a thread. The shell passes [`Now`] to every
//! call, performs the returned [`Action`]s, reports each send's result with [`Event::SendResult`], and
//! calls [`Supervisor::tick`] whenever [`Supervisor::next_deadline`] has passed.

pub mod action;
mod arbiter;
mod compaction;
pub mod config;
mod delivery;
pub mod event;
mod flow;
pub mod guard;
pub mod ledger;
pub mod limit;
pub mod message;
mod monitor;
mod outcome;
pub mod promise;
pub mod provider_wait;
mod records;
pub mod recovery;
mod run;
pub mod stall;
pub mod texts;
pub mod time;
pub mod view;
mod wake;
pub mod wakeup;

pub use action::{Action, DeliverAs, NotifyLevel};
pub use arbiter::StopCause;
pub use config::{HandoffConfig, PokeConfig, RecoveryConfig, SupervisorConfig};
pub use event::{CompactReason, ContextUsage, CustomEntry, Event, InputSource, ModelAnswer};
pub use ledger::{LedgerKind, LedgerRecord};
pub use message::{Block, Message, Role, StopReason};
pub use time::Now;
pub use view::{AgentState, Footer, FooterSuffix, View};
pub use wake::WakePhase;

use self::arbiter::Arbiter;
use self::compaction::Compaction;
use self::delivery::SendLog;
use self::flow::settle::Settle;
use self::guard::Guard;
use self::ledger::{Ledger, LedgerKind as Kind, rule};
use self::monitor::Tools;
use self::outcome::Outcomes;
use self::promise::episode::PromiseEpisode;
use self::provider_wait::ProviderWaits;
use self::recovery::Recovery;
use self::run::RunState;
use self::stall::StallWatch;
use self::wake::{CompactionEnd, PostCompact};
use self::wakeup::Wakeups;

/// A restart of pi in progress: the resume its session gets, if it was mid-run, and the user's stop
/// that still holds.
#[derive(Debug)]
struct PendingRestart {
    resume: Option<String>,
    stopped: Option<StopCause>,
}

/// How much the supervisor holds: for tests that check it stays bounded however long pi runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateSize {
    pub ledger: usize,
    pub sends: usize,
    pub tools: usize,
    pub wakeups: usize,
    pub recovery_sessions: usize,
    pub loop_signatures: usize,
}

/// The whole supervision state of one pokeshell run.
#[derive(Debug)]
pub struct Supervisor {
    config: SupervisorConfig,
    session_id: Option<String>,
    /// The bridge is connected (or has not said otherwise yet).
    connected: bool,
    run: RunState,
    compaction: Compaction,
    tools: Tools,
    post_compact: PostCompact,
    recovery: Recovery,
    wakeups: Wakeups,
    arbiter: Arbiter,
    /// pi is being restarted: what its new session takes over (RST-R1).
    restart: Option<PendingRestart>,
    /// A manual poke waiting for a compaction to end (mono ms of the request).
    held_manual_poke: Option<u64>,
    outcomes: Outcomes,
    context: Option<ContextUsage>,
    ledger: Ledger,
    sends: SendLog,
    stall: StallWatch,
    provider: ProviderWaits,
    /// The promise pokes sent in this episode (PROM-B1).
    promise: PromiseEpisode,
    /// The local offset from UTC in seconds (east positive), for reset times written without a zone.
    utc_offset_secs: i32,
    /// The guard rails: budget, call cap, no-progress rails and their ladder, the pause.
    guard: Guard,
    /// The user's stop is written in pi's session (and not lifted there yet).
    stop_saved: bool,
}

impl Supervisor {
    pub fn new(config: SupervisorConfig) -> Self {
        Self {
            config,
            session_id: None,
            connected: true,
            run: RunState::default(),
            compaction: Compaction::default(),
            tools: Tools::default(),
            post_compact: PostCompact::default(),
            recovery: Recovery::default(),
            wakeups: Wakeups::default(),
            arbiter: Arbiter::default(),
            restart: None,
            held_manual_poke: None,
            outcomes: Outcomes::default(),
            context: None,
            ledger: Ledger::default(),
            sends: SendLog::default(),
            stall: StallWatch::default(),
            provider: ProviderWaits::default(),
            promise: PromiseEpisode::default(),
            utc_offset_secs: 0,
            guard: Guard::default(),
            stop_saved: false,
        }
    }

    /// The local offset from UTC (seconds east), measured by the shell, for reset times without a zone.
    pub fn set_utc_offset(&mut self, secs: i32) {
        self.utc_offset_secs = secs;
    }

    /// A planned resume after a provider error is waiting (typing cancels it).
    pub fn limit_wait_pending(&self) -> bool {
        self.provider.wait().is_some()
    }

    pub fn config(&self) -> &SupervisorConfig {
        &self.config
    }

    /// Feeds one event; returns what to do, in order.
    pub fn handle(&mut self, event: Event, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        // Every event is a sign that pi and its run are alive (STALL-S1, STALL-R1).
        self.stall.alive(now.mono_ms);
        match event {
            Event::BridgeConnected => self.on_bridge_connected(),
            Event::BridgeDisconnected { reason } => self.on_bridge_disconnected(&reason, now, &mut out),
            Event::Snapshot { idle } => self.run.snapshot(idle),
            Event::SessionStart { session_id, entries } => {
                self.on_session_start(session_id, &entries, now, &mut out);
                self.restart_resume_due(now, &mut out);
            }
            Event::PiRestarted { rule, reason, resume } => {
                self.on_pi_restarted(rule, reason, resume, now, &mut out)
            }
            Event::RestartRefused { rule, reason } => {
                let notice = format!("{reason}.");
                self.give_up(&mut out, now, rule, reason, notice);
            }
            Event::SessionShutdown => self.on_session_shutdown(now, &mut out),
            Event::SessionTree => self.on_session_tree(now, &mut out),
            Event::AgentStart => self.on_agent_start(now, &mut out),
            Event::AgentEnd {
                stop_reason,
                error_message,
            } => self.run.ended(stop_reason, error_message),
            Event::TurnStart => {
                self.post_compact.saw_turn();
                self.outcomes.saw_turn();
            }
            Event::TurnEnd { tail } => self.on_turn_end(&tail, now, &mut out),
            Event::ToolStart {
                id,
                name,
                args_preview,
                args,
            } => {
                self.guard_tool_started(&id, &name, &args, &args_preview, now);
                self.tools.start(id, name, args_preview, now.mono_ms, now.wall_ms);
                self.outcomes.saw_tool();
            }
            Event::ToolEnd { id, outcome } => {
                self.tools.end(&id);
                self.guard_tool_ended(&id, &outcome, now, &mut out);
            }
            Event::ToolsRunning { ids } => self.forget_ghost_tools(&ids, now, &mut out),
            Event::TimeAway { ms } => self.stall.away(ms),
            Event::CompactStart { .. } => self.compaction.start(now.mono_ms),
            Event::Compact {
                reason,
                will_retry,
                tokens_before,
            } => {
                let end = CompactionEnd {
                    reason,
                    will_retry,
                    failed: false,
                    aborted: false,
                    error: None,
                    tokens_before,
                };
                self.on_compaction_end(end, now, &mut out)
            }
            Event::CompactFailed {
                reason,
                aborted,
                will_retry,
                error_message,
            } => {
                let end = CompactionEnd {
                    reason,
                    will_retry,
                    failed: true,
                    aborted,
                    error: error_message,
                    tokens_before: None,
                };
                self.on_compaction_end(end, now, &mut out)
            }
            Event::CompactResult { error } => self.finish_handoff(error.as_deref(), now, &mut out),
            Event::AgentSettled {
                aborted,
                is_idle,
                context_usage,
                tail,
                final_text,
            } => self.on_settled(
                Settle {
                    aborted,
                    is_idle,
                    context_usage,
                    tail,
                    final_text,
                },
                now,
                &mut out,
            ),
            Event::Input { source } => self.on_input(source, now, &mut out),
            Event::ToolCallRequest { call_id, name, args } => {
                self.on_tool_call(call_id, &name, &args, now, &mut out)
            }
            Event::Progress => {}
            Event::UserTyped => {
                self.stall.end_episode();
                self.cancel_limit_wait("you typed", now, &mut out);
            }
            Event::ManualPoke => self.on_manual_poke(now, &mut out),
            Event::Review { text } => self.on_review(text, now, &mut out),
            Event::ManualHandoff { focus } => self.manual_handoff(focus, now, &mut out),
            Event::CancelWakeup { id } => self.user_cancel_wakeup(&id, now, &mut out),
            Event::SendResult { send_id, error } => self.on_send_result(send_id, error, now, &mut out),
            Event::ModelAnswer { ask_id, result } => self.on_model_answer(ask_id, result, now, &mut out),
            Event::ModelCall { session_cost_usd } => self.guard_model_call(session_cost_usd, now, &mut out),
            Event::GuardAllow { usd } => self.guard_allow(usd, now, &mut out),
            Event::GuardLeave => self.guard_leave(now, &mut out),
            Event::Daily(news) => self.guard_daily(news, now, &mut out),
            Event::Breaker(order) => self.guard_breaker(order, now, &mut out),
        }
        out
    }

    /// Runs everything time-driven that is due. Cheap and idempotent: call it at
    /// [`Supervisor::next_deadline`] (calling it more often is harmless).
    pub fn tick(&mut self, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        self.compaction_hold_tick(now, &mut out);
        self.monitor_tick(now, &mut out);
        self.stall_tick(now, &mut out);
        let wakeup_fired = self.wakeup_tick(now, &mut out);
        if wakeup_fired {
            // The wakeup restarts the agent; its run will be judged at its own settle (X4).
            self.cancel_deferred("a wakeup restarted the agent", now, &mut out);
        }
        self.deferred_tick(now, &mut out);
        self.held_manual_poke_tick(now, &mut out);
        self.limit_tick(now, &mut out);
        self.orphan_tick(now, &mut out);
        self.outcome_tick(now, &mut out);
        self.promise_ask_tick(now, &mut out);
        out
    }

    /// The monotonic time at which [`Supervisor::tick`] has something to do, if any. It may lie in the
    /// past: then tick at once.
    pub fn next_deadline(&self) -> Option<u64> {
        [
            self.monitor_deadline(),
            self.orphan_deadline(),
            self.wakeup_deadline(),
            self.deferred_deadline(),
            self.held_manual_poke_deadline(),
            self.compaction.hold_deadline(),
            self.outcomes.deadline(),
            self.stall_deadline(),
            self.limit_deadline(),
            self.promise.ask_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Applies new settings at once. Turning supervision on starts the monitor right away (fix B4): the
    /// returned actions include a tick's. Turning it off drops a parked resume.
    pub fn set_config(&mut self, config: SupervisorConfig, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        let was_enabled = self.config.poke.enabled;
        self.config = config;
        // A watch switched on or changed starts counting now, not from an old event.
        self.stall.alive(now.mono_ms);
        match (was_enabled, self.config.poke.enabled) {
            (false, true) => self.record(
                &mut out,
                now,
                rule::POKE_CONFIG,
                Kind::Action,
                "supervision switched on".into(),
                None,
            ),
            (true, false) => {
                self.record(
                    &mut out,
                    now,
                    rule::POKE_CONFIG,
                    Kind::Action,
                    "supervision switched off".into(),
                    None,
                );
                self.cancel_deferred("supervision was switched off", now, &mut out);
                self.arbiter.hide_resume();
            }
            _ => {}
        }
        out.extend(self.tick(now));
        out
    }

    pub fn state_size(&self) -> StateSize {
        let (recovery_sessions, loop_signatures) = self.recovery.size();
        StateSize {
            ledger: self.ledger.recent().count(),
            sends: self.sends.len(),
            tools: self.tools.len(),
            wakeups: self.wakeups.len(),
            recovery_sessions,
            loop_signatures,
        }
    }

    /// What the footer and the side pane show at `now`.
    pub fn view(&self, now: Now) -> View {
        self.build_view(now)
    }

    /// pokeshell will carry the run on by itself: a message went to the model since the last settle,
    /// or a resume waits for its moment (`pokeshell wait` does not take such a pause for the end).
    pub fn going_on(&self) -> bool {
        self.arbiter.injected_since_settle() || self.arbiter.parked().is_some()
    }

    /// pokeshell has this session's next step planned while pi is idle: a resume after a provider
    /// limit, a wakeup, or a message sent or waiting for its moment. A pi that dies meanwhile is
    /// brought back, or the plan would die with it (RST-D1).
    pub fn work_planned(&self) -> bool {
        self.going_on() || self.limit_wait_pending() || !self.wakeups.is_empty()
    }

    /// Whether the view shows something that changes every second (a tool's timer, a wakeup's or a
    /// provider limit's countdown); cheaper than building the view.
    pub fn has_live_timers(&self) -> bool {
        !self.tools.is_empty() || !self.wakeups.is_empty() || self.provider.wait().is_some()
    }
}
