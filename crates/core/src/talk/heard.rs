//! From what a session's loop sees to the conversation's items.

use serde_json::Value;

use super::{By, CALL_MAX, Ending, RESULT_MAX, Said, TEXT_MAX, ToolUse, bounded};
use crate::bridge::{Block, MessageEnd, PiEvent, Role, StopReason};
use crate::supervisor::{LedgerKind, LedgerRecord};

/// What a run has said so far that its end reports (its cost, how it stopped), and who wrote the
/// next prompt.
#[derive(Debug, Default)]
pub struct Heard {
    next_by: By,
    cost_usd: f64,
    priced: bool,
    tokens_out: u64,
    stop: Option<StopReason>,
    error: Option<String>,
}

impl Heard {
    /// The item a bridge event adds to the conversation, if any.
    pub fn event(&mut self, event: &PiEvent) -> Option<Said> {
        match event {
            PiEvent::Input(input) => {
                self.next_by = match input.source {
                    crate::bridge::InputSource::Extension => By::Pokeshell,
                    _ => By::You,
                };
                None
            }
            PiEvent::AgentStart => {
                (self.cost_usd, self.priced, self.tokens_out) = (0.0, false, 0);
                (self.stop, self.error) = (None, None);
                None
            }
            PiEvent::AgentEnd(end) => {
                self.stop = end.stop_reason;
                self.error = end.error_message.clone();
                None
            }
            PiEvent::MessageEnd(m) => self.message(m),
            PiEvent::AgentSettled(settled) => {
                let ending = if settled.aborted || self.stop == Some(StopReason::Aborted) {
                    Ending::Aborted
                } else if self.stop == Some(StopReason::Error) {
                    Ending::Failed
                } else {
                    Ending::Done
                };
                let said = Said::RunEnd {
                    ending,
                    error: (ending == Ending::Failed)
                        .then(|| self.error.as_deref().map(|e| bounded(e, RESULT_MAX)))
                        .flatten(),
                    cost_usd: self.priced.then_some(self.cost_usd),
                    tokens_out: self.tokens_out,
                };
                (self.cost_usd, self.priced, self.tokens_out) = (0.0, false, 0);
                (self.stop, self.error) = (None, None);
                Some(said)
            }
            _ => None,
        }
    }

    /// The item an intervention record adds: pokeshell's actions (a decision not to act is for the
    /// log, not for a person reading on a phone).
    pub fn record(&mut self, record: &LedgerRecord) -> Option<Said> {
        (record.kind == LedgerKind::Action).then(|| Said::Intervention {
            rule: record.rule.to_string(),
            text: bounded(&record.reason, RESULT_MAX),
        })
    }

    fn message(&mut self, m: &MessageEnd) -> Option<Said> {
        if let Some(usage) = m.usage {
            self.tokens_out += usage.output;
            if let Some(cost) = usage.cost_usd {
                self.cost_usd += cost;
                self.priced |= cost > 0.0;
            }
        }
        let text = m.text.as_deref().map(str::trim).unwrap_or_default();
        let msg = &m.message;
        match msg.role {
            Role::User => {
                let by = std::mem::take(&mut self.next_by);
                (!text.is_empty()).then(|| Said::Prompt {
                    by,
                    text: bounded(text, TEXT_MAX),
                })
            }
            // pokeshell's own messages (`pi.sendMessage`) reach the model as custom ones.
            Role::Custom => (!text.is_empty()
                && msg
                    .custom_type
                    .as_deref()
                    .is_some_and(|t| t.starts_with("pokeshell")))
            .then(|| Said::Prompt {
                by: By::Pokeshell,
                text: bounded(text, TEXT_MAX),
            }),
            Role::Assistant => {
                let tools: Vec<ToolUse> = msg
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolCall { id, name, arguments } => Some(ToolUse {
                            id: bounded(id, 100),
                            name: bounded(name, 100),
                            call: call_line(arguments),
                        }),
                        _ => None,
                    })
                    .collect();
                (!text.is_empty() || !tools.is_empty()).then(|| Said::Reply {
                    text: bounded(text, TEXT_MAX),
                    tools,
                })
            }
            Role::ToolResult => Some(Said::Result {
                id: bounded(msg.tool_call_id.as_deref().unwrap_or_default(), 100),
                name: bounded(msg.tool_name.as_deref().unwrap_or_default(), 100),
                ok: msg.is_error != Some(true),
                text: bounded(text, RESULT_MAX),
            }),
            _ => None,
        }
    }
}

/// Keys whose value says what a call does, in the order they are looked for.
const TELLING_KEYS: &[&str] = &[
    "command",
    "cmd",
    "path",
    "file_path",
    "filePath",
    "pattern",
    "query",
    "url",
    "prompt",
];

/// A tool call's arguments in one line: the telling one when there is one, else all of them.
pub fn call_line(arguments: &Value) -> String {
    let picked = TELLING_KEYS
        .iter()
        .find_map(|k| arguments.get(*k).and_then(Value::as_str));
    let text = match picked {
        Some(s) => s.to_string(),
        None if arguments.as_object().is_some_and(|o| o.is_empty()) => String::new(),
        None => arguments.to_string(),
    };
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= CALL_MAX {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(CALL_MAX - 1).collect();
    cut.push('…');
    cut
}
