//! The session's side of the bridge: what pi reports reaches the supervisor and the side pane, and
//! what the supervisor decides goes out as bridge commands, numbered by [`super::link::Link`].

use serde_json::Value;

use super::link::{self, Purpose, Wired};
use super::view::BridgeStatus;
use super::{Effect, Session};
use crate::bridge::BridgeEvent;
use crate::bridge::{Command, PiEvent};
use crate::supervisor::guard::circuit::{BreakerNote, GuardNote, failure_key};
use crate::supervisor::{self as sup, Action, Now};
use crate::ui::theme::Tone;

impl Session {
    /// A key the user typed into pi's pane: it cancels a planned resume after a provider error.
    pub(super) fn note_typing(&mut self, now: Now, fx: &mut Vec<Effect>) {
        if self.supervisor.limit_wait_pending() {
            self.supervise(sup::Event::UserTyped, now, fx);
        }
    }

    /// Feeds one supervisor event and turns its actions into effects.
    pub(super) fn supervise(&mut self, event: sup::Event, now: Now, fx: &mut Vec<Effect>) {
        let actions = self.supervisor.handle(event, now);
        self.perform(actions, now, fx);
        fx.push(Effect::Redraw);
    }

    pub(super) fn perform(&mut self, actions: Vec<Action>, now: Now, fx: &mut Vec<Effect>) {
        self.trouble.note(&actions, now, self.stall_limit_ms());
        for action in actions {
            if action == Action::Abort {
                // Whoever aborted: a run that does not settle within the limit means pi is stuck.
                self.watch.abort_sent(now);
            }
            match link::wire_action(action) {
                Wired::Command(command, purpose) => self.send(command, purpose, fx),
                Wired::Notify { level, text, desktop } => {
                    self.flash.show(text.clone(), link::tone(level), now);
                    if desktop {
                        let display = self.settings.get().effective().display;
                        fx.push(Effect::Notify {
                            text,
                            bell: display.bell,
                            desktop: display.notifications,
                        });
                    }
                }
                Wired::Log(record) => fx.push(Effect::Ledger(record)),
                Wired::Breaker(note) => fx.push(Effect::Guard(self.breaker_note(note))),
                Wired::Daily(answer) => fx.push(Effect::Guard(GuardNote::Daily(answer))),
                // The supervisor already told the user and the ledger. The side pane says pi looks
                // frozen until it settles or a new bridge connects; the restart watch, which saw the
                // abort go out, relaunches pi (RST-F2).
                Wired::Unresponsive { .. } => {
                    self.pi.frozen = true;
                    fx.push(Effect::Redraw);
                }
            }
        }
    }

    /// A provider failure, for the server's core: two sessions meet the same one when their provider
    /// (the model's, as pi names it) and its kind are the same (GUARD-K1).
    fn breaker_note(&self, note: BreakerNote) -> GuardNote {
        let provider = self
            .pi
            .model
            .as_deref()
            .and_then(|m| m.split_once('/').map(|(p, _)| p).or(Some(m)))
            .unwrap_or("the provider");
        match note {
            BreakerNote::Failed { kind, until_wall_ms } => GuardNote::Failed {
                key: failure_key(provider, kind),
                until_wall_ms,
            },
            BreakerNote::Recovered { kind } => GuardNote::Recovered {
                key: failure_key(provider, kind),
            },
            BreakerNote::Left { kind } => GuardNote::Left {
                key: failure_key(provider, kind),
            },
        }
    }

    pub(super) fn send(&mut self, command: Command, purpose: Purpose, fx: &mut Vec<Effect>) {
        let id = self.link.open(purpose);
        fx.push(Effect::Bridge { id, command });
    }

    fn on_reply(&mut self, purpose: Purpose, result: Result<Value, String>, now: Now, fx: &mut Vec<Effect>) {
        match purpose {
            Purpose::Send(send_id) => {
                let event = sup::Event::SendResult {
                    send_id,
                    error: result.err(),
                };
                self.supervise(event, now, fx);
            }
            Purpose::Compact => {
                self.supervise(sup::Event::CompactResult { error: result.err() }, now, fx);
            }
            Purpose::Ask(ask_id) => {
                let result = link::model_answer(result);
                self.supervise(sup::Event::ModelAnswer { ask_id, result }, now, fx);
            }
            Purpose::Quiet => {}
            Purpose::Other(what) => {
                if let Err(e) = result {
                    self.flash.show(format!("{what} failed: {e}"), Tone::Error, now);
                    fx.push(Effect::Redraw);
                }
            }
        }
    }

    /// Everything the bridge server reports.
    pub(super) fn on_bridge(&mut self, event: BridgeEvent, now: Now, fx: &mut Vec<Effect>) {
        if !matches!(event, BridgeEvent::Rejected { .. } | BridgeEvent::Warning { .. }) {
            self.pi.heard(now);
            self.watch.alive(now);
        }
        match event {
            BridgeEvent::Connected { hello, .. } => {
                self.pi.connected(&hello);
                self.watch.connected(&hello, now);
                self.supervise(sup::Event::BridgeConnected, now, fx);
            }
            BridgeEvent::Disconnected { reason, .. } => {
                self.pi.status = BridgeStatus::Disconnected(reason.clone());
                self.watch.disconnected();
                self.supervise(sup::Event::BridgeDisconnected { reason }, now, fx);
            }
            BridgeEvent::Event { event, .. } => self.on_pi_event(event, now, fx),
            BridgeEvent::Reply { id, command, result } => {
                let purpose = self.link.close(id, command);
                self.on_reply(purpose, result, now, fx);
            }
            BridgeEvent::Rejected { reason } => {
                self.flash
                    .show(format!("bridge refused a connection: {reason}"), Tone::Warn, now);
                fx.push(Effect::Redraw);
            }
            BridgeEvent::Heartbeat {
                missed, heartbeat, ..
            } => {
                if missed > 0 {
                    // A lost tool end would leave a ghost the orphan poke could act on.
                    let ids = heartbeat.running_tools;
                    self.supervise(sup::Event::ToolsRunning { ids }, now, fx);
                    self.pi.lost_lines += missed;
                    self.flash.show(
                        format!("bridge: {missed} line(s) from pi were lost"),
                        Tone::Warn,
                        now,
                    );
                    fx.push(Effect::Redraw);
                }
            }
            BridgeEvent::Warning { .. } => {}
        }
    }

    fn on_pi_event(&mut self, event: PiEvent, now: Now, fx: &mut Vec<Effect>) {
        let ev = match event {
            PiEvent::SessionStart(s) => {
                self.watch.settled();
                // Another conversation (`/new`, `/resume`): the last one's question is not asked here.
                self.trouble.clear_ending();
                // `/new`, `/resume` and `/fork` move pi to another file: a relaunch (and a server
                // that comes back) follows it there.
                self.watch.session_started(s.session_file.as_deref());
                self.pi.session = s.session_name.clone().or(s.session_id.clone());
                if s.model.is_some() {
                    self.pi.model = s.model.clone();
                }
                self.restore_settings(&link::entry_values(&s.custom_entries), now, fx);
                sup::Event::SessionStart {
                    session_id: s.session_id.unwrap_or_default(),
                    entries: link::custom_entries(&s.custom_entries),
                }
            }
            PiEvent::SessionShutdown(_) => sup::Event::SessionShutdown,
            PiEvent::SessionTree(t) => {
                self.restore_settings(&link::entry_values(&t.custom_entries), now, fx);
                sup::Event::SessionTree
            }
            PiEvent::SessionInfoChanged(i) => {
                if let Some(name) = i.name {
                    self.pi.session = Some(name);
                }
                fx.push(Effect::Redraw);
                return;
            }
            PiEvent::ModelSelect(m) => {
                self.pi.model = m.model;
                fx.push(Effect::Redraw);
                return;
            }
            PiEvent::Input(i) => sup::Event::Input {
                source: link::input_source(i.source),
            },
            PiEvent::AgentStart => {
                self.usage.run_started();
                self.watch.mid_run = true;
                self.trouble.clear_gave_up();
                sup::Event::AgentStart
            }
            PiEvent::AgentEnd(e) => sup::Event::AgentEnd {
                stop_reason: e.stop_reason.map(link::stop_reason),
                error_message: e.error_message,
            },
            PiEvent::AgentSettled(s) => {
                self.watch.settled();
                self.pi.frozen = false;
                self.pi.note_context(s.context_usage.as_ref().map(link::usage));
                // A bridge that cannot tell is read as busy: automatic messages then queue as follow-ups.
                let is_idle = s.idle.unwrap_or(false);
                let tail = link::tail(&s.tail);
                let final_text = s.final_text.as_deref().map(link::final_text);
                self.trouble
                    .settled(s.aborted, is_idle, &tail, final_text.as_deref());
                sup::Event::AgentSettled {
                    aborted: s.aborted,
                    is_idle,
                    context_usage: s.context_usage.as_ref().map(link::usage),
                    tail,
                    final_text,
                }
            }
            PiEvent::TurnStart(_) => sup::Event::TurnStart,
            PiEvent::Progress(_) => {
                // Only the stall watch's clock moves: nothing to redraw.
                let actions = self.supervisor.handle(sup::Event::Progress, now);
                self.perform(actions, now, fx);
                return;
            }
            PiEvent::TurnEnd(t) => {
                self.supervise(
                    sup::Event::TurnEnd {
                        tail: link::tail(&t.tail),
                    },
                    now,
                    fx,
                );
                // After whatever the supervisor steers in: the bridge handles commands in order.
                if let Some(hold_id) = t.hold_id {
                    self.send(Command::ReleaseTurn { hold_id }, Purpose::Quiet, fx);
                }
                return;
            }
            PiEvent::ToolExecutionStart(t) => sup::Event::ToolStart {
                id: t.tool_call_id,
                name: t.tool_name,
                args_preview: link::args_preview(&t.args),
                args: t.args,
            },
            PiEvent::ToolExecutionEnd(t) => sup::Event::ToolEnd {
                id: t.tool_call_id,
                outcome: sup::event::ToolOutcome {
                    is_error: t.is_error,
                    duration_ms: t.duration_ms,
                    result_digest: t.result_digest,
                },
            },
            PiEvent::SessionBeforeCompact(c) => sup::Event::CompactStart {
                reason: link::compact_reason(c.reason),
                will_retry: c.will_retry,
            },
            PiEvent::SessionCompact(c) => {
                self.pi.note_compacted();
                sup::Event::Compact {
                    reason: link::compact_reason(c.reason),
                    will_retry: c.will_retry,
                    tokens_before: c.tokens_before,
                }
            }
            PiEvent::SessionCompactFailed(c) => sup::Event::CompactFailed {
                reason: link::compact_reason(c.reason),
                aborted: c.aborted,
                will_retry: c.will_retry,
                error_message: c.error_message,
            },
            PiEvent::ToolCallRequest(r) => sup::Event::ToolCallRequest {
                call_id: r.call_id,
                name: r.tool_name,
                args: r.args,
            },
            PiEvent::Handoff(report) => {
                let (text, tone) = link::handoff_text(&report);
                self.flash.show(text, tone, now);
                fx.push(Effect::Redraw);
                return;
            }
            PiEvent::Log(l) => {
                if l.level == "error" {
                    self.flash
                        .show(format!("bridge: {}", l.message), Tone::Error, now);
                    fx.push(Effect::Redraw);
                }
                return;
            }
            PiEvent::UserCommand(c) => {
                self.on_user_command(c, now, fx);
                return;
            }
            PiEvent::MessageEnd(m) => {
                if let Some(u) = &m.usage {
                    self.on_usage(u, now, fx);
                }
                return;
            }
            PiEvent::Snapshot(s) => sup::Event::Snapshot { idle: s.idle },
            PiEvent::BeforeAgentStart(_) | PiEvent::Unknown => return,
        };
        self.supervise(ev, now, fx);
    }
}
