//! pi's session file on the simulated disk: the conversation (what reached the model), pokeshell's
//! custom entries, and the task the scripted model works through. It outlives every pi and server
//! that used it, as the file does.

use pokeshell_core::bridge::{Block, CustomEntry, MessageSummary, Role, StopReason, TailEntry};
use serde_json::{Value, json};

use super::history::{Ending, Task};

#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Text,
    Empty,
    Promise,
    Tool { id: String, name: String },
    Error(String),
    Aborted,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    User {
        prompt: u64,
    },
    Custom {
        custom_type: String,
        display: bool,
    },
    Assistant(Reply),
    ToolResult {
        id: String,
        name: String,
        is_error: bool,
    },
}

/// What the model is working on: turns still to do, and how the task's last reply ends.
#[derive(Clone, Debug, Default)]
pub struct Work {
    pub remaining: u8,
    pub ending: Option<Ending>,
}

#[derive(Clone, Debug, Default)]
pub struct Conv {
    pub messages: Vec<Msg>,
    pub entries: Vec<CustomEntry>,
    pub work: Work,
    /// Context use in percent; `None` right after a compaction.
    pub percent: Option<f64>,
    pub calls: u64,
}

impl Conv {
    pub fn take_task(&mut self, prompt: u64, task: Task) {
        self.messages.push(Msg::User { prompt });
        self.work = Work {
            remaining: task.turns,
            ending: Some(task.ending),
        };
    }

    /// How many times the prompt is in the conversation (what the model was given).
    pub fn count_prompt(&self, prompt: u64) -> usize {
        self.messages
            .iter()
            .filter(|m| matches!(m, Msg::User { prompt: p } if *p == prompt))
            .count()
    }

    pub fn grow(&mut self) {
        self.percent = Some((self.percent.unwrap_or(20.0) + 4.0).min(99.0));
    }

    pub fn new_call_id(&mut self) -> String {
        self.calls += 1;
        format!("call_{}", self.calls)
    }

    /// The branch's last entries, as the bridge sends them at a settle.
    pub fn tail(&self) -> Vec<TailEntry> {
        let from = self.messages.len().saturating_sub(8);
        self.messages[from..].iter().map(tail_entry).collect()
    }

    /// The end of the last assistant text, as the bridge sends it.
    pub fn final_text(&self) -> Option<String> {
        self.messages.iter().rev().find_map(|m| match m {
            Msg::Assistant(Reply::Text) => Some("Done: the change is in and the tests pass.".to_string()),
            Msg::Assistant(Reply::Promise) => Some("Now I'll run the tests:".to_string()),
            Msg::Assistant(_) => Some(String::new()),
            _ => None,
        })
    }

    pub fn append_entry(&mut self, custom_type: String, data: Value) {
        self.entries.push(CustomEntry {
            id: Some(format!("e{}", self.entries.len())),
            custom_type,
            data,
            timestamp: None,
        });
    }
}

fn summary(role: Role) -> MessageSummary {
    MessageSummary {
        id: None,
        role,
        stop_reason: None,
        error_message: None,
        content: Vec::new(),
        tool_call_id: None,
        tool_name: None,
        is_error: None,
        custom_type: None,
    }
}

pub fn assistant(reply: &Reply) -> MessageSummary {
    let mut m = summary(Role::Assistant);
    let (stop, content) = match reply {
        Reply::Text | Reply::Promise => (StopReason::Stop, vec![Block::Text { non_blank: true }]),
        Reply::Empty => (StopReason::Stop, vec![]),
        Reply::Tool { id, name } => (
            StopReason::ToolUse,
            vec![Block::ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: json!({ "command": format!("step {id}") }),
            }],
        ),
        Reply::Error(e) => {
            m.error_message = Some(e.clone());
            (StopReason::Error, vec![])
        }
        Reply::Aborted => (StopReason::Aborted, vec![]),
    };
    m.stop_reason = Some(stop);
    m.content = content;
    m
}

fn tail_entry(m: &Msg) -> TailEntry {
    match m {
        Msg::User { .. } => {
            let mut s = summary(Role::User);
            s.content = vec![Block::Text { non_blank: true }];
            TailEntry::Message(s)
        }
        Msg::Custom { custom_type, display } => TailEntry::CustomMessage {
            id: None,
            custom_type: custom_type.clone(),
            display: *display,
        },
        Msg::Assistant(reply) => TailEntry::Message(assistant(reply)),
        Msg::ToolResult { id, name, is_error } => {
            let mut s = summary(Role::ToolResult);
            s.tool_call_id = Some(id.clone());
            s.tool_name = Some(name.clone());
            s.is_error = Some(*is_error);
            s.content = vec![Block::Text { non_blank: true }];
            TailEntry::Message(s)
        }
    }
}
