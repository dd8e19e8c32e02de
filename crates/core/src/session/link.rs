//! The wire and the supervisor, each in the other's terms: pi's events (wire types) become
//! supervisor events, the supervisor's actions become bridge commands, and [`Link`] remembers why
//! each command went out so that its reply finds its way back.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::bridge::{self as wire, Command};
use crate::supervisor::{self as sup, Action, DeliverAs, NotifyLevel};
use crate::ui::theme::Tone;

/// Why a command was sent, so its reply can be routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A supervisor `SendMessage` with this send id.
    Send(u64),
    /// A supervisor `Compact` (handoff).
    Compact,
    /// A supervisor `AskModel` with this ask id.
    Ask(u64),
    /// Anything whose failure only needs to be shown.
    Other(&'static str),
    /// Nothing to do either way (releasing a held turn that pi may already have let go).
    Quiet,
}

/// Commands in flight: the session numbers its commands itself, so a reply (or the failure to
/// send) is routed by id without a round trip through the event loop.
#[derive(Debug)]
pub struct Link {
    next_id: u64,
    by_id: HashMap<u64, Purpose>,
}

impl Default for Link {
    fn default() -> Self {
        Self {
            next_id: 1,
            by_id: HashMap::new(),
        }
    }
}

impl Link {
    /// A new command id, remembered with why the command goes out.
    pub fn open(&mut self, purpose: Purpose) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.by_id.insert(id, purpose);
        id
    }

    /// Why the command with this id went out; a reply to an unknown id is only shown.
    pub fn close(&mut self, id: u64, command: &'static str) -> Purpose {
        self.by_id.remove(&id).unwrap_or(Purpose::Other(command))
    }
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

pub fn stop_reason(r: wire::StopReason) -> sup::StopReason {
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

pub fn compact_reason(r: wire::CompactReason) -> sup::CompactReason {
    match r {
        wire::CompactReason::Manual => sup::CompactReason::Manual,
        wire::CompactReason::Overflow => sup::CompactReason::Overflow,
        // An unknown reason is pi's own doing, not the user's: treat it as automatic.
        wire::CompactReason::Threshold | wire::CompactReason::Other => sup::CompactReason::Threshold,
    }
}

pub fn usage(u: &wire::ContextUsage) -> sup::ContextUsage {
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

pub fn message(m: &wire::MessageSummary) -> sup::Message {
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

pub fn tail(entries: &[wire::TailEntry]) -> Vec<sup::Message> {
    entries
        .iter()
        .filter_map(|e| match e {
            wire::TailEntry::Message(m) => Some(message(m)),
            wire::TailEntry::CustomMessage { custom_type, .. } => Some(sup::Message::custom(custom_type, "")),
            wire::TailEntry::Compaction { .. } => None,
        })
        .collect()
}

/// The most of the final message's text kept (characters): the bridge sends no more, and a bridge
/// that did is cut here again, keeping the end.
pub const FINAL_TEXT_MAX: usize = 2000;

/// The end of the final assistant message, at most [`FINAL_TEXT_MAX`] characters.
pub fn final_text(text: &str) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(FINAL_TEXT_MAX)).collect()
}

pub fn custom_entries(entries: &[wire::CustomEntry]) -> Vec<sup::CustomEntry> {
    entries
        .iter()
        .map(|e| sup::CustomEntry {
            custom_type: e.custom_type.clone(),
            data: e.data.clone(),
        })
        .collect()
}

/// The entries as pi stores them, for the settings' session restore.
pub fn entry_values(entries: &[wire::CustomEntry]) -> Vec<Value> {
    entries
        .iter()
        .map(|e| json!({"type": "custom", "customType": e.custom_type, "data": e.data}))
        .collect()
}

pub fn deliver_as(d: DeliverAs) -> wire::DeliverAs {
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

/// What a supervisor action asks of the world.
pub enum Wired {
    /// A bridge command, and why it goes out.
    Command(Command, Purpose),
    /// A message for the user.
    Notify {
        level: NotifyLevel,
        text: String,
        desktop: bool,
    },
    /// A record for the intervention ledger.
    Log(sup::LedgerRecord),
    /// pi did not settle after pokeshell's own abort (the supervisor's `Action::Unresponsive`).
    Unresponsive {
        aborted_mono_ms: u64,
    },
    /// For the server's core: a provider failure (GUARD-K1..K3), the answer to the day's pause.
    Breaker(sup::guard::circuit::BreakerNote),
    Daily(sup::guard::circuit::DailyAnswer),
}

/// A supervisor action in the wire's terms.
pub fn wire_action(action: Action) -> Wired {
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
            Wired::Command(command, Purpose::Send(send_id))
        }
        Action::Abort => Wired::Command(Command::Abort, Purpose::Other("abort")),
        Action::Compact { focus, save } => {
            let command = Command::Compact(wire::CompactRequest {
                custom_instructions: focus,
                handoff: true,
                save,
            });
            Wired::Command(command, Purpose::Compact)
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
            Wired::Command(command, Purpose::Other("tool reply"))
        }
        Action::AppendEntry { custom_type, data } => {
            let command = Command::AppendEntry {
                custom_type: custom_type.to_string(),
                data,
            };
            Wired::Command(command, Purpose::Other("saving to the session"))
        }
        Action::AskModel {
            ask_id,
            system,
            question,
            timeout_ms,
        } => Wired::Command(
            Command::AskModel {
                question,
                system,
                timeout_ms,
            },
            Purpose::Ask(ask_id),
        ),
        Action::Notify { level, text, desktop } => Wired::Notify { level, text, desktop },
        Action::Log(record) => Wired::Log(record),
        Action::Unresponsive { aborted_mono_ms } => Wired::Unresponsive { aborted_mono_ms },
        Action::Breaker(note) => Wired::Breaker(note),
        Action::Daily(answer) => Wired::Daily(answer),
    }
}

/// The bridge's reply to `ask_model`.
pub fn model_answer(result: Result<Value, String>) -> Result<sup::ModelAnswer, String> {
    let value = result?;
    let tokens = |key: &str| value.get(key).and_then(Value::as_u64);
    let text = value
        .get("answer")
        .and_then(Value::as_str)
        .ok_or_else(|| "the bridge's answer has no text".to_string())?;
    Ok(sup::ModelAnswer {
        text: text.chars().take(200).collect(),
        input_tokens: tokens("inputTokens"),
        output_tokens: tokens("outputTokens"),
    })
}

/// What a handoff report says, for the footer.
pub fn handoff_text(report: &wire::HandoffReport) -> (String, Tone) {
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
    (text, tone)
}

pub fn input_source(s: wire::InputSource) -> sup::InputSource {
    match s {
        wire::InputSource::Interactive => sup::InputSource::Interactive,
        wire::InputSource::Rpc => sup::InputSource::Rpc,
        wire::InputSource::Extension | wire::InputSource::Other => sup::InputSource::Extension,
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
    fn the_final_text_keeps_its_last_2000_characters() {
        assert_eq!(final_text("Now I'll run the tests:"), "Now I'll run the tests:");
        let long = format!("{}é the end", "x".repeat(3000));
        let kept = final_text(&long);
        assert_eq!(kept.chars().count(), FINAL_TEXT_MAX);
        assert!(kept.ends_with("é the end"));
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
