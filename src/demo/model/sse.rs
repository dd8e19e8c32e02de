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

/// The JSON error body of an HTTP error reply, and its status.
pub fn error_answer(reply: &Reply) -> Option<(u16, Value)> {
    match reply {
        Reply::Error {
            status,
            message,
            error_type,
            code,
            body,
        } => {
            let body = body.clone().unwrap_or_else(|| {
                json!({ "error": {
                    "message": message,
                    "type": error_type.as_deref().unwrap_or("mock_error"),
                    "code": code,
                }})
            });
            Some((*status, body))
        }
        Reply::Overflow => Some((
            400,
            json!({ "error": {
                "message": "Your input exceeds the context window of this model.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }}),
        )),
        _ => None,
    }
}

/// Rough token count of a text (about four characters a token), at least 1.
pub fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::model::step::Step;

    const USAGE: Usage = Usage {
        prompt_tokens: 13,
        completion_tokens: 10,
    };

    /// The JSON of every `data:` event in the plan, `[DONE]` as a string, and markers for the rest.
    fn events(actions: &[Action]) -> Vec<Value> {
        actions
            .iter()
            .map(|a| match a {
                Action::Send(bytes) => {
                    let text = std::str::from_utf8(bytes).unwrap();
                    let data = text
                        .strip_prefix("data: ")
                        .and_then(|t| t.strip_suffix("\n\n"))
                        .unwrap();
                    serde_json::from_str(data).unwrap_or(Value::String(data.to_string()))
                }
                other => Value::String(format!("{other:?}")),
            })
            .collect()
    }

    fn enc() -> Encoder {
        Encoder::new("chatcmpl-mock-4", "mock-model")
    }

    #[test]
    fn text_stream_has_the_shape_pi_accepts() {
        let step = Step::text_chunked("Hi there", 3, 0);
        let ev = events(&plan(&step.reply, &enc(), USAGE, "call"));
        assert_eq!(
            ev[0]["choices"][0]["delta"],
            json!({"role":"assistant","content":""})
        );
        assert_eq!(ev[0]["object"], "chat.completion.chunk");
        assert_eq!(ev[0]["id"], "chatcmpl-mock-4");
        let text: String = ev[1..4]
            .iter()
            .map(|e| e["choices"][0]["delta"]["content"].as_str().unwrap())
            .collect();
        assert_eq!(text, "Hi there");
        assert_eq!(ev[4]["choices"][0]["finish_reason"], "stop");
        assert_eq!(ev[5]["choices"], json!([]));
        assert_eq!(
            ev[5]["usage"],
            json!({"prompt_tokens":13,"completion_tokens":10,"total_tokens":23})
        );
        assert_eq!(ev[6], "[DONE]");
        assert_eq!(ev[7], "EndBody");
        assert_eq!(ev.len(), 8);
    }

    #[test]
    fn thinking_before_text_streams_reasoning_first() {
        let step = Step::text("answer").with_thinking("first I think");
        let ev = events(&plan(&step.reply, &enc(), USAGE, "c"));
        assert_eq!(
            ev[1]["choices"][0]["delta"],
            json!({"reasoning_content": "first I think"})
        );
        assert_eq!(ev[2]["choices"][0]["delta"], json!({"content": "answer"}));
        assert_eq!(ev[3]["choices"][0]["finish_reason"], "stop");
    }

    #[test]
    fn chunk_delays_sit_between_deltas() {
        let actions = plan(&Step::text_chunked("abcd", 2, 30).reply, &enc(), USAGE, "c");
        assert_eq!(actions[2], Action::Pause(Duration::from_millis(30)));
        assert_eq!(
            actions.iter().filter(|a| matches!(a, Action::Pause(_))).count(),
            1
        );
    }

    #[test]
    fn tool_calls_stream_ids_names_and_joined_arguments() {
        let step = Step::tools(vec![
            ToolCall {
                name: "bash".into(),
                arguments: json!({"command":"echo hi"}),
            },
            ToolCall {
                name: "read".into(),
                arguments: json!({"path":"é.txt"}),
            },
        ]);
        let ev = events(&plan(&step.reply, &enc(), USAGE, "call_mock_5"));
        let calls: Vec<&Value> = ev
            .iter()
            .filter_map(|e| e["choices"][0]["delta"].get("tool_calls"))
            .collect();
        assert_eq!(calls[0][0]["id"], "call_mock_5_0");
        assert_eq!(calls[0][0]["function"]["name"], "bash");
        let mut args = [String::new(), String::new()];
        for c in &calls {
            let i = c[0]["index"].as_u64().unwrap() as usize;
            args[i] += c[0]["function"]["arguments"].as_str().unwrap();
        }
        assert_eq!(
            serde_json::from_str::<Value>(&args[0]).unwrap(),
            json!({"command":"echo hi"})
        );
        assert_eq!(
            serde_json::from_str::<Value>(&args[1]).unwrap(),
            json!({"path":"é.txt"})
        );
        assert!(
            ev.iter()
                .any(|e| e["choices"][0]["finish_reason"] == "tool_calls")
        );
    }

    #[test]
    fn thinking_only_and_empty_and_cut() {
        let ev = events(&plan(&Step::thinking("hmm").reply, &enc(), USAGE, "c"));
        assert_eq!(ev[1]["choices"][0]["delta"]["reasoning_content"], "hmm");
        assert!(
            !ev.iter()
                .any(|e| e["choices"][0]["delta"].get("content").is_some_and(|c| c != ""))
        );

        let ev = events(&plan(&Step::empty().reply, &enc(), USAGE, "c"));
        assert_eq!(ev.len(), 5);
        assert_eq!(ev[1]["choices"][0]["finish_reason"], "stop");

        let ev = events(&plan(&Step::cut("par").reply, &enc(), USAGE, "c"));
        assert_eq!(ev.last().unwrap(), "EndBody");
        assert!(
            !ev.iter()
                .any(|e| e == "[DONE]" || e["choices"][0]["finish_reason"].is_string())
        );
        let abrupt = plan(&Step::cut_abrupt("par").reply, &enc(), USAGE, "c");
        assert_eq!(abrupt.last(), Some(&Action::Drop));
    }

    #[test]
    fn hang_holds_after_the_first_chunk() {
        let actions = plan(&Step::hang_then("late").reply, &enc(), USAGE, "c");
        assert_eq!(actions[1], Action::Hold);
        assert_eq!(actions.last(), Some(&Action::EndBody));
        let bare = plan(&Step::hang().reply, &enc(), USAGE, "c");
        assert_eq!(bare[1..], [Action::Hold, Action::EndBody]);
    }

    #[test]
    fn error_and_overflow_bodies() {
        let (status, body) = error_answer(&Step::error(503, "busy").reply).unwrap();
        assert_eq!((status, body["error"]["message"].as_str()), (503, Some("busy")));
        let (status, body) = error_answer(&Step::overflow().reply).unwrap();
        assert_eq!(status, 400);
        assert_eq!(body["error"]["code"], "context_length_exceeded");
        assert!(error_answer(&Step::empty().reply).is_none());
        assert!(plan(&Step::overflow().reply, &enc(), USAGE, "c").is_empty());
    }
}
