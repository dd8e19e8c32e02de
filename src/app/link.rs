//! The app's side of the bridge: pi's events become supervisor events, the supervisor's actions
//! become bridge commands, and each command's reply finds its way back.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Value, json};

use super::view::BridgeStatus;
use super::{App, Effect};
use crate::bridge::protocol::{self as wire, Command, PiEvent};
use crate::bridge::server::BridgeEvent;
use crate::config::SESSION_ENTRY_TYPE;
use crate::supervisor::{self as sup, Action, DeliverAs, NotifyLevel};
use crate::ui::theme::Tone;

/// Why a command was sent, so its reply can be routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A supervisor `SendMessage` with this send id.
    Send(u64),
    /// A supervisor `Compact` (handoff).
    Compact,
    /// Anything whose failure only needs to be shown.
    Other(&'static str),
    /// Nothing to do either way (releasing a held turn that pi may already have let go).
    Quiet,
}

/// Commands in flight, by bridge command id.
#[derive(Debug, Default)]
pub struct Pending {
    by_id: HashMap<u64, Purpose>,
}

/// Longest tool-argument preview kept for the side pane.
const PREVIEW_CHARS: usize = 60;

/// A one-line preview of a tool's arguments: `command` or `path` alone when that is all there is.
pub fn args_preview(args: &Value) -> String {
    let text = match args {
        Value::Object(map) if map.len() == 1 => match map.values().next() {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        Value::Object(map) => match map.get("command").or_else(|| map.get("path")) {
            Some(Value::String(s)) => s.clone(),
            _ => args.to_string(),
        },
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > PREVIEW_CHARS {
        let cut: String = one_line.chars().take(PREVIEW_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

fn stop_reason(r: wire::StopReason) -> sup::StopReason {
    match r {
        wire::StopReason::Stop => sup::StopReason::Stop,
        wire::StopReason::Length => sup::StopReason::Length,
        wire::StopReason::ToolUse => sup::StopReason::ToolUse,
        wire::StopReason::Error => sup::StopReason::Error,
        wire::StopReason::Aborted => sup::StopReason::Aborted,
        wire::StopReason::Pending => sup::StopReason::Pending,
        wire::StopReason::Deferred => sup::StopReason::Deferred,
        wire::StopReason::Other => sup::StopReason::Other("other".into()),
    }
}

fn compact_reason(r: wire::CompactReason) -> sup::CompactReason {
    match r {
        wire::CompactReason::Manual => sup::CompactReason::Manual,
        wire::CompactReason::Overflow => sup::CompactReason::Overflow,
        // An unknown reason is pi's own doing, not the user's: treat it as automatic.
        wire::CompactReason::Threshold | wire::CompactReason::Other => sup::CompactReason::Threshold,
    }
}

fn usage(u: &wire::ContextUsage) -> sup::ContextUsage {
    sup::ContextUsage {
        tokens: u.tokens,
        window: u.context_window,
        percent: u.percent,
    }
}

/// The bridge reports whether text was blank, not the text: a stand-in of the same blankness.
fn blank_or_not(non_blank: bool) -> String {
    if non_blank { "…".into() } else { String::new() }
}

fn message(m: &wire::MessageSummary) -> sup::Message {
    let role = match m.role {
        wire::Role::User => sup::Role::User,
        wire::Role::Assistant => sup::Role::Assistant,
        wire::Role::ToolResult => sup::Role::ToolResult,
        wire::Role::Custom => sup::Role::Custom {
            custom_type: m.custom_type.clone().unwrap_or_default(),
        },
        other => sup::Role::Other {
            name: format!("{other:?}"),
        },
    };
    let content = m
        .content
        .iter()
        .map(|b| match b {
            wire::Block::Text { non_blank } => sup::Block::Text {
                text: blank_or_not(*non_blank),
            },
            wire::Block::Thinking { non_blank } => sup::Block::Thinking {
                thinking: blank_or_not(*non_blank),
            },
            wire::Block::ToolCall { id, name, arguments } => sup::Block::ToolCall {
                id: id.clone(),
                name: name.clone(),
                args: arguments.clone(),
            },
            wire::Block::Image | wire::Block::Other { .. } => sup::Block::Other,
        })
        .collect();
    sup::Message {
        role,
        stop_reason: m.stop_reason.map(stop_reason),
        error_message: m.error_message.clone(),
        content,
        tool_call_id: m.tool_call_id.clone(),
        tool_name: m.tool_name.clone(),
        is_error: m.is_error.unwrap_or(false),
    }
}

fn tail(entries: &[wire::TailEntry]) -> Vec<sup::Message> {
    entries
        .iter()
        .filter_map(|e| match e {
            wire::TailEntry::Message(m) => Some(message(m)),
            wire::TailEntry::CustomMessage { custom_type, .. } => Some(sup::Message::custom(custom_type, "")),
            wire::TailEntry::Compaction { .. } => None,
        })
        .collect()
}

fn custom_entries(entries: &[wire::CustomEntry]) -> Vec<sup::CustomEntry> {
    entries
        .iter()
        .map(|e| sup::CustomEntry {
            custom_type: e.custom_type.clone(),
            data: e.data.clone(),
        })
        .collect()
}

/// The entries as pi stores them, for the settings' session restore.
fn entry_values(entries: &[wire::CustomEntry]) -> Vec<Value> {
    entries
        .iter()
        .map(|e| json!({"type": "custom", "customType": e.custom_type, "data": e.data}))
        .collect()
}

fn deliver_as(d: DeliverAs) -> wire::DeliverAs {
    match d {
        DeliverAs::Steer => wire::DeliverAs::Steer,
        DeliverAs::FollowUp => wire::DeliverAs::FollowUp,
        DeliverAs::NextTurn => wire::DeliverAs::NextTurn,
    }
}

pub fn tone(level: NotifyLevel) -> Tone {
    match level {
        NotifyLevel::Info => Tone::Accent,
        NotifyLevel::Success => Tone::Ok,
        NotifyLevel::Warning => Tone::Warn,
        NotifyLevel::Error => Tone::Error,
    }
}

impl App {
    /// Feeds one supervisor event and turns its actions into effects.
    pub(super) fn supervise(&mut self, event: sup::Event, now: Instant, effects: &mut Vec<Effect>) {
        let actions = self.supervisor.handle(event, self.now(now));
        self.perform(actions, now, effects);
        effects.push(Effect::Redraw);
    }

    pub(super) fn perform(&mut self, actions: Vec<Action>, now: Instant, effects: &mut Vec<Effect>) {
        for action in actions {
            match action {
                Action::SendMessage {
                    send_id,
                    custom_type,
                    text,
                    display,
                    deliver_as: d,
                    trigger_turn,
                } => {
                    let command = Command::SendMessage(wire::SendMessage {
                        custom_type: custom_type.to_string(),
                        content: text,
                        display,
                        trigger_turn,
                        deliver_as: Some(deliver_as(d)),
                        details: None,
                    });
                    effects.push(Effect::Bridge(command, Purpose::Send(send_id)));
                }
                Action::Abort => effects.push(Effect::Bridge(Command::Abort, Purpose::Other("abort"))),
                Action::Compact { focus, save } => {
                    let command = Command::Compact(wire::CompactRequest {
                        custom_instructions: focus,
                        handoff: true,
                        save,
                    });
                    effects.push(Effect::Bridge(command, Purpose::Compact));
                }
                Action::ToolReply {
                    call_id,
                    text,
                    is_error,
                    details,
                } => {
                    let details = (!details.is_null()).then_some(details);
                    let command = Command::ToolReply(wire::ToolReply {
                        call_id,
                        text,
                        is_error,
                        details,
                    });
                    effects.push(Effect::Bridge(command, Purpose::Other("tool reply")));
                }
                Action::AppendEntry { custom_type, data } => {
                    let command = Command::AppendEntry {
                        custom_type: custom_type.to_string(),
                        data,
                    };
                    effects.push(Effect::Bridge(command, Purpose::Other("saving to the session")));
                }
                Action::Notify { level, text, desktop } => {
                    self.flash(text.clone(), tone(level), now);
                    if desktop {
                        effects.push(Effect::Desktop(text));
                    }
                }
                Action::Log(record) => effects.push(Effect::Ledger(record)),
            }
        }
    }

    /// The event loop sent a command (or could not): remember it, or report the failure at once.
    pub fn on_sent(&mut self, purpose: Purpose, result: Result<u64, String>, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        match result {
            Ok(id) => {
                self.pending.by_id.insert(id, purpose);
            }
            Err(error) => self.on_reply(purpose, Err(error), now, &mut effects),
        }
        effects
    }

    fn on_reply(
        &mut self,
        purpose: Purpose,
        result: Result<Value, String>,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        match purpose {
            Purpose::Send(send_id) => {
                self.supervise(
                    sup::Event::SendResult {
                        send_id,
                        error: result.err(),
                    },
                    now,
                    effects,
                );
            }
            Purpose::Compact => {
                self.supervise(sup::Event::CompactResult { error: result.err() }, now, effects);
            }
            Purpose::Quiet => {}
            Purpose::Other(what) => {
                if let Err(e) = result {
                    self.flash(format!("{what} failed: {e}"), Tone::Error, now);
                    effects.push(Effect::Redraw);
                }
            }
        }
    }

    /// Everything the bridge server reports.
    pub fn on_bridge(&mut self, event: BridgeEvent, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        match event {
            BridgeEvent::Connected { hello, .. } => {
                self.pi.status = BridgeStatus::Connected;
                self.pi.version = hello.pi_version.clone().or(self.pi.version.take());
                self.pi.session = hello.session_name.clone().or(hello.session_id.clone());
                self.pi.model = hello.model.clone();
                self.supervise(sup::Event::BridgeConnected, now, &mut effects);
            }
            BridgeEvent::Disconnected { reason, .. } => {
                self.pi.status = BridgeStatus::Disconnected(reason.clone());
                self.supervise(sup::Event::BridgeDisconnected { reason }, now, &mut effects);
            }
            BridgeEvent::Event { event, .. } => self.on_pi_event(event, now, &mut effects),
            BridgeEvent::Reply { id, command, result } => {
                let purpose = self.pending.by_id.remove(&id).unwrap_or(Purpose::Other(command));
                self.on_reply(purpose, result, now, &mut effects);
            }
            BridgeEvent::Rejected { reason } => {
                self.flash(format!("bridge refused a connection: {reason}"), Tone::Warn, now);
                effects.push(Effect::Redraw);
            }
            BridgeEvent::Warning { .. } => {}
        }
        effects
    }

    fn on_pi_event(&mut self, event: PiEvent, now: Instant, effects: &mut Vec<Effect>) {
        let ev = match event {
            PiEvent::SessionStart(s) => {
                self.pi.session = s.session_name.clone().or(s.session_id.clone());
                if s.model.is_some() {
                    self.pi.model = s.model.clone();
                }
                self.restore_settings(&s.custom_entries, now, effects);
                sup::Event::SessionStart {
                    reason: format!("{:?}", s.reason).to_lowercase(),
                    session_id: s.session_id.unwrap_or_default(),
                    entries: custom_entries(&s.custom_entries),
                }
            }
            PiEvent::SessionShutdown(_) => sup::Event::SessionShutdown,
            PiEvent::SessionTree(t) => {
                self.restore_settings(&t.custom_entries, now, effects);
                sup::Event::SessionTree
            }
            PiEvent::SessionInfoChanged(i) => {
                if let Some(name) = i.name {
                    self.pi.session = Some(name);
                }
                effects.push(Effect::Redraw);
                return;
            }
            PiEvent::ModelSelect(m) => {
                self.pi.model = m.model;
                effects.push(Effect::Redraw);
                return;
            }
            PiEvent::Input(i) => sup::Event::Input {
                source: match i.source {
                    wire::InputSource::Interactive => sup::InputSource::Interactive,
                    wire::InputSource::Rpc => sup::InputSource::Rpc,
                    wire::InputSource::Extension | wire::InputSource::Other => sup::InputSource::Extension,
                },
            },
            PiEvent::AgentStart => sup::Event::AgentStart,
            PiEvent::AgentEnd(e) => sup::Event::AgentEnd {
                stop_reason: e.stop_reason.map(stop_reason),
                error_message: e.error_message,
            },
            PiEvent::AgentSettled(s) => {
                self.note_context(s.context_usage.as_ref());
                sup::Event::AgentSettled {
                    aborted: s.aborted,
                    // A bridge that cannot tell is read as busy: messages queue, no handoff.
                    is_idle: s.idle.unwrap_or(false),
                    context_usage: s.context_usage.as_ref().map(usage),
                    tail: tail(&s.tail),
                }
            }
            PiEvent::TurnStart(_) => sup::Event::TurnStart,
            PiEvent::TurnEnd(t) => {
                self.supervise(sup::Event::TurnEnd { tail: tail(&t.tail) }, now, effects);
                // After whatever the supervisor steers in: the bridge handles commands in order.
                if let Some(hold_id) = t.hold_id {
                    effects.push(Effect::Bridge(Command::ReleaseTurn { hold_id }, Purpose::Quiet));
                }
                return;
            }
            PiEvent::ToolExecutionStart(t) => sup::Event::ToolStart {
                id: t.tool_call_id,
                name: t.tool_name,
                args_preview: args_preview(&t.args),
            },
            PiEvent::ToolExecutionEnd(t) => sup::Event::ToolEnd { id: t.tool_call_id },
            PiEvent::SessionBeforeCompact(c) => sup::Event::CompactStart {
                reason: compact_reason(c.reason),
                will_retry: c.will_retry,
            },
            PiEvent::SessionCompact(c) => {
                self.pi.context = None;
                self.pi.compacted = true;
                sup::Event::Compact {
                    reason: compact_reason(c.reason),
                    will_retry: c.will_retry,
                    tokens_before: c.tokens_before,
                }
            }
            PiEvent::SessionCompactFailed(c) => sup::Event::CompactFailed {
                reason: compact_reason(c.reason),
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
                let text = match (report.outcome, &report.path) {
                    (wire::HandoffOutcome::Written, Some(path)) => format!("handoff written: {path}"),
                    (wire::HandoffOutcome::Written, None) => "handoff written".to_string(),
                    (wire::HandoffOutcome::Fallback, _) => format!(
                        "handoff fell back to pi's own summary: {}",
                        report.reason.as_deref().unwrap_or("no reason given")
                    ),
                };
                let tone = if report.outcome == wire::HandoffOutcome::Written {
                    Tone::Ok
                } else {
                    Tone::Warn
                };
                self.flash(text, tone, now);
                effects.push(Effect::Redraw);
                return;
            }
            PiEvent::Log(l) => {
                if l.level == "error" {
                    self.flash(format!("bridge: {}", l.message), Tone::Error, now);
                    effects.push(Effect::Redraw);
                }
                return;
            }
            PiEvent::BeforeAgentStart(_)
            | PiEvent::MessageEnd(_)
            | PiEvent::Snapshot(_)
            | PiEvent::Unknown => return,
        };
        self.supervise(ev, now, effects);
    }

    fn note_context(&mut self, reported: Option<&wire::ContextUsage>) {
        if let Some(u) = reported {
            let u = usage(u);
            if u.percent.is_some() {
                self.pi.compacted = false;
            }
            self.pi.context = Some(u);
        }
    }

    /// pokeshell's settings from the session's own entries (POKE-C4), re-reading the files too.
    fn restore_settings(&mut self, entries: &[wire::CustomEntry], now: Instant, effects: &mut Vec<Effect>) {
        let values = entry_values(entries);
        self.settings.reload_files();
        self.settings.restore_session(values.iter());
        self.settings_applied(now, effects);
    }

    /// The dialog changed the session's settings: persist them in pi's session.
    pub(super) fn persist_settings(&self, effects: &mut Vec<Effect>) {
        if self.pi.status == BridgeStatus::Connected {
            let command = Command::AppendEntry {
                custom_type: SESSION_ENTRY_TYPE.to_string(),
                data: self.settings.session_entry_data(),
            };
            effects.push(Effect::Bridge(
                command,
                Purpose::Other("saving the settings to the session"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_are_short_single_lines() {
        assert_eq!(args_preview(&json!({"command": "sleep 3"})), "sleep 3");
        assert_eq!(args_preview(&json!({"path": "/a/b", "offset": 3})), "/a/b");
        let long = args_preview(&json!({"command": "x".repeat(200)}));
        assert_eq!(long.chars().count(), PREVIEW_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(args_preview(&json!({"command": "a\nb"})), "a b");
        assert_eq!(args_preview(&Value::Null), "");
    }

    #[test]
    fn tail_keeps_custom_messages_and_drops_compactions() {
        let t = tail(&[
            wire::TailEntry::Compaction {
                id: None,
                tokens_before: Some(9000),
            },
            wire::TailEntry::CustomMessage {
                id: None,
                custom_type: "poke".into(),
                display: false,
            },
            wire::TailEntry::Message(wire::MessageSummary {
                id: None,
                role: wire::Role::Assistant,
                stop_reason: Some(wire::StopReason::Stop),
                error_message: None,
                content: vec![
                    wire::Block::Thinking { non_blank: true },
                    wire::Block::Text { non_blank: false },
                ],
                tool_call_id: None,
                tool_name: None,
                is_error: None,
                custom_type: None,
            }),
        ]);
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[0].role,
            sup::Role::Custom {
                custom_type: "poke".into()
            }
        );
        assert_eq!(
            t[1].content,
            vec![
                sup::Block::Thinking {
                    thinking: "…".into()
                },
                sup::Block::Text { text: String::new() }
            ]
        );
    }
}
