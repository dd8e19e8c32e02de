//! What the scripted model does for one request.
//!
//! A step is a JSON object with a `type` tag and the fields of that kind, plus fields every kind
//! accepts (`prompt_tokens`, `completion_tokens`, `delay_ms`). The format is documented for users in
//! `docs/scenario-format.md`; keep the two in step.

mod build;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One scripted reply plus the settings every kind of reply shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Value")]
pub struct Step {
    pub reply: Reply,
    /// Reported as `usage.prompt_tokens`; pi takes it as the context size, so this is how a test
    /// pushes pi over its compaction threshold. `None`: a rough estimate from the request size.
    pub prompt_tokens: Option<u64>,
    /// Reported as `usage.completion_tokens`. `None`: a rough estimate from the reply text.
    pub completion_tokens: Option<u64>,
    /// Wait this long before answering at all (before the status line).
    pub delay_ms: u64,
}

/// The kinds of reply the scripted model can give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// A streamed text answer (`finish_reason: "stop"`), optionally preceded by reasoning text.
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
        /// Characters per delta; 0: the whole text in one delta.
        #[serde(default, skip_serializing_if = "is_zero")]
        chunk_chars: usize,
        /// Pause before each delta after the first.
        #[serde(default, skip_serializing_if = "is_zero_u64")]
        chunk_delay_ms: u64,
    },
    /// One or more tool calls in one answer (`finish_reason: "tool_calls"`), optionally after text.
    ToolCalls {
        calls: Vec<ToolCall>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// An answer with no content at all.
    Empty,
    /// Only reasoning text (`reasoning_content`), no answer.
    Thinking {
        text: String,
        /// Characters per delta; 0: the whole text in one delta.
        #[serde(default, skip_serializing_if = "is_zero")]
        chunk_chars: usize,
        /// Pause before each delta after the first.
        #[serde(default, skip_serializing_if = "is_zero_u64")]
        chunk_delay_ms: u64,
    },
    /// Some text, then the stream ends without a finish reason. `abrupt`: the TCP connection is
    /// dropped mid-body instead of ending the body cleanly.
    Cut {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "is_false")]
        abrupt: bool,
    },
    /// An HTTP error answer: `{"error":{"message","type","param","code"}}` with the given status,
    /// or `body` verbatim when given; `headers` are added to the answer's head.
    Error {
        status: u16,
        /// Extra header lines (`retry-after`, `x-ratelimit-*` ...), names lower-case.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
        #[serde(default = "default_error_message")]
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Value>,
    },
    /// The 400 answer pi recognises as "context window exceeded".
    Overflow,
    /// Sends the stream's first chunk, then holds the connection until the client goes away, the
    /// server is told to release hangs, or it shuts down. On release it streams `text` as a normal
    /// answer when given, else it ends the stream without a finish reason.
    Hang {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A stalled stream behind keep-alives: streams `text` (the first tokens), then sends only SSE
    /// comment lines (`: keep-alive`) every `keep_alive_ms`, for `duration_ms` or, without it, until
    /// the client goes away, hangs are released or the server stops. Afterwards it streams `then`
    /// as a normal answer, or ends without a finish reason when there is none.
    Stall {
        #[serde(default)]
        text: String,
        /// Characters per delta of `text`; 0: one delta.
        #[serde(default, skip_serializing_if = "is_zero")]
        chunk_chars: usize,
        #[serde(default = "default_keep_alive_ms")]
        keep_alive_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        then: Option<String>,
    },
    /// A slow but steady answer: `tokens` deltas of `token`, the first at once and each next one
    /// `every_ms` later, then a normal finish.
    Slow {
        tokens: usize,
        every_ms: u64,
        #[serde(default = "default_slow_token")]
        token: String,
    },
}

/// The keep-alive period when a stall names none: often enough that an idle-read timeout of a few
/// seconds never fires, as with the providers that send them.
pub const DEFAULT_KEEP_ALIVE_MS: u64 = 1000;

/// Header names the server writes itself; a step may not set them.
const RESERVED_HEADERS: [&str; 4] = [
    "content-type",
    "content-length",
    "connection",
    "transfer-encoding",
];

/// A tool call the model asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub name: String,
    /// The arguments object (sent to pi as its JSON text).
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

/// Splits `text` into the deltas to send: at least one (possibly empty), `chunk_chars` characters
/// each; 0 means one delta.
pub fn split_chunks(text: &str, chunk_chars: usize) -> Vec<String> {
    if chunk_chars == 0 || text.is_empty() {
        return vec![text.to_string()];
    }
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(chunk_chars).map(|c| c.iter().collect()).collect()
}

const COMMON_KEYS: [&str; 3] = ["prompt_tokens", "completion_tokens", "delay_ms"];

impl TryFrom<Value> for Step {
    type Error = String;

    fn try_from(value: Value) -> Result<Step, String> {
        let Value::Object(mut map) = value else {
            return Err("a step must be a JSON object with a \"type\" field".to_string());
        };
        let prompt_tokens = take_u64(&mut map, "prompt_tokens")?;
        let completion_tokens = take_u64(&mut map, "completion_tokens")?;
        let delay_ms = take_u64(&mut map, "delay_ms")?.unwrap_or(0);
        let kind = map.get("type").and_then(Value::as_str).unwrap_or("?").to_string();
        let reply: Reply = serde_json::from_value(Value::Object(map))
            .map_err(|e| format!("step of type \"{kind}\": {e}"))?;
        check(&reply).map_err(|e| format!("step of type \"{kind}\": {e}"))?;
        Ok(Step {
            reply,
            prompt_tokens,
            completion_tokens,
            delay_ms,
        })
    }
}

impl From<Step> for Value {
    fn from(step: Step) -> Value {
        let mut value = serde_json::to_value(&step.reply).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            if let Some(n) = step.prompt_tokens {
                map.insert(COMMON_KEYS[0].into(), n.into());
            }
            if let Some(n) = step.completion_tokens {
                map.insert(COMMON_KEYS[1].into(), n.into());
            }
            if step.delay_ms > 0 {
                map.insert(COMMON_KEYS[2].into(), step.delay_ms.into());
            }
        }
        value
    }
}

/// What serde cannot say: values that would break the wire or never end a loop.
fn check(reply: &Reply) -> Result<(), String> {
    match reply {
        Reply::Error { headers, .. } => headers
            .iter()
            .try_for_each(|(name, value)| check_header(name, value)),
        Reply::Stall { keep_alive_ms: 0, .. } => Err("\"keep_alive_ms\" must be at least 1".to_string()),
        Reply::Slow { tokens: 0, .. } => Err("\"tokens\" must be at least 1".to_string()),
        _ => Ok(()),
    }
}

fn check_header(name: &str, value: &str) -> Result<(), String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(format!("{name:?} is not a valid header name"));
    }
    if name.chars().any(|c| c.is_ascii_uppercase()) {
        return Err(format!("header name {name:?} must be lower-case"));
    }
    if RESERVED_HEADERS.contains(&name) {
        return Err(format!("header {name:?} is set by the server"));
    }
    if value.chars().any(|c| c.is_control()) {
        return Err(format!("the value of header {name:?} holds a control character"));
    }
    Ok(())
}

fn take_u64(map: &mut Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("\"{key}\" must be a non-negative integer, got {v}")),
    }
}

fn default_error_message() -> String {
    "scripted failure".to_string()
}

fn default_keep_alive_ms() -> u64 {
    DEFAULT_KEEP_ALIVE_MS
}

fn default_slow_token() -> String {
    "tick ".to_string()
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn step_with_common_fields_round_trips() {
        let step = Step::bash("echo hi").with_prompt_tokens(9000).with_delay_ms(20);
        let value = Value::from(step.clone());
        assert_eq!(value["type"], "tool_calls");
        assert_eq!(value["prompt_tokens"], 9000);
        assert_eq!(value["calls"][0]["arguments"]["command"], "echo hi");
        let back: Step = serde_json::from_value(value).unwrap();
        assert_eq!(back, step);
    }

    #[test]
    fn chunked_text_parses_from_flat_fields() {
        let step: Step =
            serde_json::from_value(json!({"type":"text","text":"abcdef","chunk_chars":4,"chunk_delay_ms":5}))
                .unwrap();
        let Reply::Text {
            chunk_chars,
            chunk_delay_ms,
            ..
        } = &step.reply
        else {
            panic!("not text: {step:?}")
        };
        assert_eq!((*chunk_chars, *chunk_delay_ms), (4, 5));
        assert_eq!(split_chunks("abcdef", *chunk_chars), vec!["abcd", "ef"]);
        assert_eq!(split_chunks("", 4), vec![""]);
        assert_eq!(split_chunks("héllo", 0), vec!["héllo"]);
    }

    #[test]
    fn unknown_field_is_rejected_with_the_step_kind() {
        let err =
            serde_json::from_value::<Step>(json!({"type":"text","text":"x","colour":"red"})).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("text") && msg.contains("colour"), "{msg}");
    }

    #[test]
    fn unknown_kind_and_bad_tokens_are_rejected() {
        assert!(serde_json::from_value::<Step>(json!({"type":"dance"})).is_err());
        assert!(serde_json::from_value::<Step>(json!({"type":"empty","prompt_tokens":-3})).is_err());
        assert!(serde_json::from_value::<Step>(json!("text")).is_err());
    }

    #[test]
    fn stall_slow_and_error_headers_parse_with_defaults() {
        let stall: Step = serde_json::from_value(json!({"type":"stall","text":"Hel"})).unwrap();
        assert_eq!(
            stall.reply,
            Reply::Stall {
                text: "Hel".into(),
                chunk_chars: 0,
                keep_alive_ms: DEFAULT_KEEP_ALIVE_MS,
                duration_ms: None,
                then: None
            }
        );
        let slow: Step = serde_json::from_value(json!({"type":"slow","tokens":3,"every_ms":20})).unwrap();
        assert!(matches!(slow.reply, Reply::Slow { tokens: 3, every_ms: 20, ref token } if token == "tick "));
        let err: Step =
            serde_json::from_value(json!({"type":"error","status":429,"headers":{"retry-after":"25"}}))
                .unwrap();
        let Reply::Error { headers, .. } = &err.reply else {
            panic!("not an error: {err:?}")
        };
        assert_eq!(headers.get("retry-after").map(String::as_str), Some("25"));
        let back: Step = serde_json::from_value(Value::from(err.clone())).unwrap();
        assert_eq!(back, err);
    }

    #[test]
    fn values_that_would_break_the_wire_are_rejected() {
        let bad = [
            json!({"type":"error","status":429,"headers":{"retry after":"1"}}),
            json!({"type":"error","status":429,"headers":{"Retry-After":"1"}}),
            json!({"type":"error","status":429,"headers":{"content-length":"1"}}),
            json!({"type":"error","status":429,"headers":{"x-a":"1\r\nx-b: 2"}}),
            json!({"type":"stall","keep_alive_ms":0}),
            json!({"type":"slow","tokens":0,"every_ms":5}),
            json!({"type":"slow","tokens":2}),
        ];
        for value in bad {
            let err = serde_json::from_value::<Step>(value.clone());
            assert!(err.is_err(), "accepted {value}");
        }
    }
}
