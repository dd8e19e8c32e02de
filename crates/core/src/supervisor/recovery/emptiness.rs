//! SAR-D1: does a message count as "the agent produced nothing"?

use crate::supervisor::message::{Message, Role, StopReason};
use crate::supervisor::texts;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyReply {
    /// An assistant reply with thinking but no text and no tool call.
    ThinkingOnly,
    /// An assistant reply with nothing in it.
    Empty,
    /// The run stopped on a tool result, with no assistant reply after it.
    BareToolResult,
}

impl EmptyReply {
    pub fn reason(self) -> &'static str {
        match self {
            Self::ThinkingOnly => texts::empty_reason(true, false),
            Self::Empty => texts::empty_reason(false, false),
            Self::BareToolResult => texts::empty_reason(false, true),
        }
    }
}

/// `None` when the message is not empty (or there is no message).
pub fn evaluate_empty(message: Option<&Message>) -> Option<EmptyReply> {
    let message = message?;
    match message.role {
        Role::ToolResult => Some(EmptyReply::BareToolResult),
        Role::Assistant => {
            // An API error is not an empty reply: pi reports it, and retrying blind would hide it.
            if message.error_message.is_some() {
                return None;
            }
            let finished = matches!(
                message.stop_reason,
                None | Some(StopReason::Stop) | Some(StopReason::Aborted)
            );
            if !finished || message.has_text() || message.has_tool_call() {
                return None;
            }
            Some(if message.has_thinking() {
                EmptyReply::ThinkingOnly
            } else {
                EmptyReply::Empty
            })
        }
        _ => None,
    }
}
