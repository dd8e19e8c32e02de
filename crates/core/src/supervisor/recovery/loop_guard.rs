//! SAR-L2, SAR-L3: counting identical failing tool calls at the end of the branch, and deciding what to
//! say about them.

use std::collections::HashMap;

use serde_json::Value;

use super::signature::tool_signature;
use crate::supervisor::message::{Block, Message, Role};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolLoop {
    pub signature: String,
    pub tool_name: String,
    /// Identical failing calls in the current run of them, the last one included.
    pub count: u32,
}

/// `None` unless the last visible message is a failing tool result whose call can be found.
///
/// Walking back from the failure: assistant messages and other tools' results are skipped; a user
/// message, any other role, an unknown call, the same tool with other arguments, or a success of the
/// same call ends the run. Custom messages are invisible (they are not message entries in pi).
pub fn detect_tool_loop(messages: &[Message]) -> Option<ToolLoop> {
    let visible: Vec<&Message> = messages.iter().filter(|message| !message.is_custom()).collect();
    let (last, earlier) = visible.split_last()?;
    if last.role != Role::ToolResult || !last.is_error {
        return None;
    }
    let calls = calls_by_id(&visible);
    let (tool_name, args) = calls.get(last.tool_call_id.as_deref()?)?;
    let signature = tool_signature(tool_name, args);
    let mut count = 1;
    for message in earlier.iter().rev() {
        match message.role {
            Role::Assistant | Role::Custom { .. } => continue,
            Role::ToolResult => {}
            Role::User | Role::Other { .. } => break,
        }
        let Some((name, args)) = message.tool_call_id.as_deref().and_then(|id| calls.get(id)) else {
            break;
        };
        if name != tool_name {
            continue;
        }
        if tool_signature(name, args) != signature || !message.is_error {
            break;
        }
        count += 1;
    }
    Some(ToolLoop {
        signature,
        tool_name: tool_name.to_string(),
        count,
    })
}

/// Every tool call of the assistant messages by id; a later call with the same id wins, as when
/// searching from the end.
fn calls_by_id<'a>(messages: &[&'a Message]) -> HashMap<&'a str, (&'a str, &'a Value)> {
    let mut calls = HashMap::new();
    for message in messages.iter().filter(|message| message.is_assistant()) {
        for block in &message.content {
            if let Block::ToolCall { id, name, args } = block {
                calls.insert(id.as_str(), (name.as_str(), args));
            }
        }
    }
    calls
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopDecision {
    /// No nudge due; `crossing` = count / threshold.
    None { crossing: u32 },
    /// Send nudge number `number`.
    Nudge { number: u32 },
    /// Past the last nudge: give up on this loop.
    GiveUp { crossing: u32 },
}

/// SAR-L3. `threshold` and `max_nudges` must be ≥ 1 (the config helpers guarantee it).
pub fn decide_loop_action(count: u32, threshold: u32, max_nudges: u32, last_nudge: u32) -> LoopDecision {
    let crossing = count / threshold.max(1);
    if crossing < 1 {
        LoopDecision::None { crossing: 0 }
    } else if crossing > max_nudges {
        if last_nudge <= max_nudges {
            LoopDecision::GiveUp { crossing }
        } else {
            LoopDecision::None { crossing }
        }
    } else if crossing > last_nudge {
        LoopDecision::Nudge { number: crossing }
    } else {
        LoopDecision::None { crossing }
    }
}
