//! The OpenAI chat-completions stream: turns a scripted reply into the SSE events pi accepts
//! (the shapes in docs/pi-facts.md) and the pauses, holds and cuts between them.

use std::time::Duration;

use serde_json::{Value, json};

use super::step::{Reply, ToolCall, split_chunks};

/// What the connection does next while playing a streamed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// One SSE event, sent as one HTTP chunk.
    Send(Vec<u8>),
    Pause(Duration),
    /// Hold the connection until released (then go on) or the client leaves.
    Hold,
    /// Like `Hold`, sending a keep-alive comment every `every`; when `for_at_most` is given, the
    /// hold also ends (and the plan goes on) once that much time passed.
    KeepAlive {
        every: Duration,
        for_at_most: Option<Duration>,
    },
    /// End the body cleanly (the terminating zero chunk).
    EndBody,
    /// Close the TCP connection mid-body.
    Drop,
}

/// Encodes chunks of one completion.
pub struct Encoder {
    id: String,
    model: String,
}

impl Encoder {
    pub fn new(id: impl Into<String>, model: impl Into<String>) -> Encoder {
        Encoder {
            id: id.into(),
            model: model.into(),
        }
    }

    fn event(&self, choices: Value, usage: Option<Value>) -> Vec<u8> {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": self.model,
            "choices": choices,
        });
        if let Some(usage) = usage {
            chunk["usage"] = usage;
        }
        format!("data: {chunk}\n\n").into_bytes()
    }

    pub fn delta(&self, delta: Value, finish_reason: Option<&str>) -> Vec<u8> {
        self.event(
            json!([{ "index": 0, "delta": delta, "finish_reason": finish_reason }]),
            None,
        )
    }

    pub fn role(&self) -> Vec<u8> {
        self.delta(json!({ "role": "assistant", "content": "" }), None)
    }

    pub fn content(&self, text: &str) -> Vec<u8> {
        self.delta(json!({ "content": text }), None)
    }

    pub fn reasoning(&self, text: &str) -> Vec<u8> {
        self.delta(json!({ "reasoning_content": text }), None)
    }

    pub fn tool_call_start(&self, index: usize, call_id: &str, name: &str) -> Vec<u8> {
        self.delta(
            json!({ "tool_calls": [{
                "index": index, "id": call_id, "type": "function",
                "function": { "name": name, "arguments": "" }
            }]}),
            None,
        )
    }

    pub fn tool_call_arguments(&self, index: usize, fragment: &str) -> Vec<u8> {
        self.delta(
            json!({ "tool_calls": [{ "index": index, "function": { "arguments": fragment } }] }),
            None,
        )
    }

    pub fn finish(&self, reason: &str) -> Vec<u8> {
        self.delta(json!({}), Some(reason))
    }

    pub fn usage(&self, prompt_tokens: u64, completion_tokens: u64) -> Vec<u8> {
        let usage = json!({
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        });
        self.event(json!([]), Some(usage))
    }

    /// An SSE comment line: clients must ignore it, and it keeps idle-read timeouts from firing.
    pub fn keep_alive() -> Vec<u8> {
        b": keep-alive\n\n".to_vec()
    }

    pub fn done() -> Vec<u8> {
        b"data: [DONE]\n\n".to_vec()
    }
}

/// Token counts to report at the end of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// The actions that play `reply` as a stream. `call_id_prefix` makes tool-call ids unique per
/// request. Error and overflow replies are not streams: they give an empty plan.
pub fn plan(reply: &Reply, enc: &Encoder, usage: Usage, call_id_prefix: &str) -> Vec<Action> {
    let mut out = vec![Action::Send(enc.role())];
    match reply {
        Reply::Text {
            text,
            thinking,
            chunk_chars,
            chunk_delay_ms,
        } => {
            if let Some(thinking) = thinking {
                push_deltas(&mut out, thinking, *chunk_chars, *chunk_delay_ms, |t| {
                    enc.reasoning(t)
                });
            }
            push_deltas(&mut out, text, *chunk_chars, *chunk_delay_ms, |t| enc.content(t));
            finish(&mut out, enc, "stop", usage);
        }
        Reply::Thinking {
            text,
            chunk_chars,
            chunk_delay_ms,
        } => {
            push_deltas(&mut out, text, *chunk_chars, *chunk_delay_ms, |t| {
                enc.reasoning(t)
            });
            finish(&mut out, enc, "stop", usage);
        }
        Reply::ToolCalls { calls, text } => {
            if let Some(text) = text {
                out.push(Action::Send(enc.content(text)));
            }
            for (index, call) in calls.iter().enumerate() {
                push_tool_call(&mut out, enc, index, &format!("{call_id_prefix}_{index}"), call);
            }
            finish(&mut out, enc, "tool_calls", usage);
        }
        Reply::Empty => finish(&mut out, enc, "stop", usage),
        Reply::Cut { text, abrupt } => {
            if !text.is_empty() {
                out.push(Action::Send(enc.content(text)));
            }
            out.push(if *abrupt { Action::Drop } else { Action::EndBody });
        }
        Reply::Hang { text } => {
            out.push(Action::Hold);
            match text {
                Some(text) => {
                    out.push(Action::Send(enc.content(text)));
                    finish(&mut out, enc, "stop", usage);
                }
                None => out.push(Action::EndBody),
            }
        }
        Reply::Stall {
            text,
            chunk_chars,
            keep_alive_ms,
            duration_ms,
            then,
        } => {
            push_deltas(&mut out, text, *chunk_chars, 0, |t| enc.content(t));
            out.push(Action::KeepAlive {
                every: Duration::from_millis(*keep_alive_ms),
                for_at_most: duration_ms.map(Duration::from_millis),
            });
            match then {
                Some(then) => {
                    out.push(Action::Send(enc.content(then)));
                    finish(&mut out, enc, "stop", usage);
                }
                None => out.push(Action::EndBody),
            }
        }
        Reply::Slow {
            tokens,
            every_ms,
            token,
        } => {
            for i in 0..*tokens {
                if i > 0 {
                    out.push(Action::Pause(Duration::from_millis(*every_ms)));
                }
                out.push(Action::Send(enc.content(token)));
            }
            finish(&mut out, enc, "stop", usage);
        }
        Reply::Error { .. } | Reply::Overflow => return Vec::new(),
    }
    out
}

fn push_deltas(
    out: &mut Vec<Action>,
    text: &str,
    chunk_chars: usize,
    delay_ms: u64,
    enc: impl Fn(&str) -> Vec<u8>,
) {
    for (i, piece) in split_chunks(text, chunk_chars).iter().enumerate() {
        if i > 0 && delay_ms > 0 {
            out.push(Action::Pause(Duration::from_millis(delay_ms)));
        }
        out.push(Action::Send(enc(piece)));
    }
}

/// The arguments go out in two fragments so that the client has to join them, as real models do.
fn push_tool_call(out: &mut Vec<Action>, enc: &Encoder, index: usize, call_id: &str, call: &ToolCall) {
    out.push(Action::Send(enc.tool_call_start(index, call_id, &call.name)));
    let args = call.arguments.to_string();
    let mid = args
        .char_indices()
        .map(|(i, _)| i)
        .find(|&i| i >= args.len() / 2)
        .unwrap_or(args.len());
    for fragment in [&args[..mid], &args[mid..]] {
        if !fragment.is_empty() {
            out.push(Action::Send(enc.tool_call_arguments(index, fragment)));
        }
    }
}

fn finish(out: &mut Vec<Action>, enc: &Encoder, reason: &str, usage: Usage) {
    out.push(Action::Send(enc.finish(reason)));
    out.push(Action::Send(
        enc.usage(usage.prompt_tokens, usage.completion_tokens),
    ));
    out.push(Action::Send(Encoder::done()));
    out.push(Action::EndBody);
}

/// Rough token count of a text (about four characters a token), at least 1.
pub fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4).max(1)
}

#[cfg(test)]
mod tests;
