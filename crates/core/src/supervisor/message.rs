//! The branch tail the bridge sends with `agent_settled`: what the stalled-agent recovery reads.
//!
//! The bridge sends the branch's message entries from the last genuine user message (inclusive) to the
//! leaf. Custom messages (`role: "custom"`, pi's `custom_message` entries) may be included; the
//! supervisor ignores them, as the original extension never saw them (docs/supervision.md, "A tool call that keeps failing the
//! same way").

use serde_json::Value;

/// An assistant message's `stopReason`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Pending,
    Deferred,
    /// A value pi 1.6 does not produce; kept so nothing is lost.
    Other(String),
}

impl StopReason {
    /// Maps pi's wire spelling (`"stop"`, `"toolUse"`, ...).
    pub fn from_wire(text: &str) -> Self {
        match text {
            "stop" => Self::Stop,
            "length" => Self::Length,
            "toolUse" => Self::ToolUse,
            "error" => Self::Error,
            "aborted" => Self::Aborted,
            "pending" => Self::Pending,
            "deferred" => Self::Deferred,
            other => Self::Other(other.to_string()),
        }
    }

    /// error or length: the run ended without finishing its work (aborted is the user's choice).
    pub fn is_failure(&self) -> bool {
        matches!(self, Self::Error | Self::Length)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    /// A `custom_message` entry (pokes, recovery follow-ups, wakeups, other extensions' messages).
    Custom {
        custom_type: String,
    },
    /// Any other role, e.g. `bashExecution` from a `!cmd`.
    Other {
        name: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
    },
    ToolCall {
        id: String,
        name: String,
        args: Value,
    },
    /// Images and anything else: present, but neither text nor a tool call.
    Other,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub role: Role,
    pub stop_reason: Option<StopReason>,
    pub error_message: Option<String>,
    pub content: Vec<Block>,
    /// For a tool result: the id of the call it answers.
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    /// For a tool result: whether the tool failed.
    pub is_error: bool,
}

impl Message {
    fn with_role(role: Role) -> Self {
        Self {
            role,
            stop_reason: None,
            error_message: None,
            content: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
        }
    }

    pub fn user(text: &str) -> Self {
        let mut message = Self::with_role(Role::User);
        message.content.push(Block::Text {
            text: text.to_string(),
        });
        message
    }

    pub fn assistant(stop_reason: StopReason, content: Vec<Block>) -> Self {
        let mut message = Self::with_role(Role::Assistant);
        message.stop_reason = Some(stop_reason);
        message.content = content;
        message
    }

    pub fn tool_result(tool_call_id: &str, tool_name: &str, is_error: bool) -> Self {
        let mut message = Self::with_role(Role::ToolResult);
        message.tool_call_id = Some(tool_call_id.to_string());
        message.tool_name = Some(tool_name.to_string());
        message.is_error = is_error;
        message
    }

    pub fn custom(custom_type: &str, text: &str) -> Self {
        let mut message = Self::with_role(Role::Custom {
            custom_type: custom_type.to_string(),
        });
        message.content.push(Block::Text {
            text: text.to_string(),
        });
        message
    }

    pub fn other(role_name: &str) -> Self {
        Self::with_role(Role::Other {
            name: role_name.to_string(),
        })
    }

    pub fn with_error(mut self, error_message: &str) -> Self {
        self.error_message = Some(error_message.to_string());
        self
    }

    pub fn is_custom(&self) -> bool {
        matches!(self.role, Role::Custom { .. })
    }

    pub fn is_assistant(&self) -> bool {
        self.role == Role::Assistant
    }

    /// Some text block holds more than whitespace.
    pub fn has_text(&self) -> bool {
        self.content
            .iter()
            .any(|block| matches!(block, Block::Text { text } if !text.trim().is_empty()))
    }

    pub fn has_tool_call(&self) -> bool {
        self.content
            .iter()
            .any(|block| matches!(block, Block::ToolCall { .. }))
    }

    pub fn has_thinking(&self) -> bool {
        self.content
            .iter()
            .any(|block| matches!(block, Block::Thinking { thinking } if !thinking.trim().is_empty()))
    }

    pub fn is_aborted_assistant(&self) -> bool {
        self.is_assistant() && self.stop_reason == Some(StopReason::Aborted)
    }

    /// A failed tool result that pi or its tool wrote because the run was aborted (the user's Esc, or
    /// pokeshell's auto-abort): its text ends with the abort notice ("Operation aborted", bash's
    /// "Command aborted", or a bare "aborted").
    pub fn is_aborted_tool_result(&self) -> bool {
        if self.role != Role::ToolResult || !self.is_error {
            return false;
        }
        let last_text = self.content.iter().rev().find_map(|block| match block {
            Block::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        });
        let last_line = last_text
            .and_then(|text| text.trim_end().lines().last())
            .map(str::trim);
        matches!(
            last_line,
            Some("aborted" | "Operation aborted" | "Command aborted")
        )
    }
}

/// Block constructors, for tests and for the bridge mapping.
impl Block {
    pub fn text(text: &str) -> Self {
        Self::Text {
            text: text.to_string(),
        }
    }

    pub fn thinking(thinking: &str) -> Self {
        Self::Thinking {
            thinking: thinking.to_string(),
        }
    }

    pub fn tool_call(id: &str, name: &str, args: Value) -> Self {
        Self::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            args,
        }
    }
}

/// The last message the original extension could see: custom messages are not in its list.
pub fn last_visible(tail: &[Message]) -> Option<&Message> {
    tail.iter().rev().find(|message| !message.is_custom())
}
