//! What the scripted model does for one request, and the scenario file that lists such steps.
//!
//! A step is a JSON object with a `type` tag and the fields of that kind, plus fields every kind
//! accepts (`prompt_tokens`, `completion_tokens`, `delay_ms`). The format is documented for users in
//! `docs/scenario-format.md`; keep the two in step.

use std::path::Path;

use anyhow::Context;
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
    /// An HTTP error answer: `{"error":{"message","type","code"}}` with the given status, or `body`
    /// verbatim when given.
    Error {
        status: u16,
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
}

/// A tool call the model asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub name: String,
    /// The arguments object (sent to pi as its JSON text).
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

/// A scenario file: the queues and the default reply of one scripted-model run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Replies to ordinary requests, one per request, in order.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Replies to compaction-summary requests, one per request, in order.
    #[serde(default)]
    pub summaries: Vec<Step>,
    /// The reply when `steps` is used up and the prompt carries no directive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Step>,
}

impl Scenario {
    /// Parses a scenario from JSON text; the error names what is wrong and where.
    pub fn from_json(text: &str) -> Result<Scenario, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Reads a scenario file (`pokeshell demo --script FILE`); the error names the file.
    pub fn from_file(path: &Path) -> anyhow::Result<Scenario> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the scenario file {}", path.display()))?;
        Scenario::from_json(&text).with_context(|| format!("{} is not a valid scenario", path.display()))
    }
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

impl Step {
    pub fn new(reply: Reply) -> Step {
        Step {
            reply,
            prompt_tokens: None,
            completion_tokens: None,
            delay_ms: 0,
        }
    }

    pub fn text(text: impl Into<String>) -> Step {
        Step::new(Reply::Text {
            text: text.into(),
            thinking: None,
            chunk_chars: 0,
            chunk_delay_ms: 0,
        })
    }

    /// A text answer streamed `chunk_chars` characters at a time, `chunk_delay_ms` apart.
    pub fn text_chunked(text: impl Into<String>, chunk_chars: usize, chunk_delay_ms: u64) -> Step {
        Step::new(Reply::Text {
            text: text.into(),
            thinking: None,
            chunk_chars,
            chunk_delay_ms,
        })
    }

    pub fn tool(name: impl Into<String>, arguments: Value) -> Step {
        Step::tools(vec![ToolCall {
            name: name.into(),
            arguments,
        }])
    }

    pub fn tools(calls: Vec<ToolCall>) -> Step {
        Step::new(Reply::ToolCalls { calls, text: None })
    }

    /// A `bash` tool call running `command`.
    pub fn bash(command: impl Into<String>) -> Step {
        Step::tool("bash", serde_json::json!({ "command": command.into() }))
    }

    pub fn empty() -> Step {
        Step::new(Reply::Empty)
    }

    pub fn thinking(text: impl Into<String>) -> Step {
        Step::new(Reply::Thinking {
            text: text.into(),
            chunk_chars: 0,
            chunk_delay_ms: 0,
        })
    }

    pub fn cut(text: impl Into<String>) -> Step {
        Step::new(Reply::Cut {
            text: text.into(),
            abrupt: false,
        })
    }

    pub fn cut_abrupt(text: impl Into<String>) -> Step {
        Step::new(Reply::Cut {
            text: text.into(),
            abrupt: true,
        })
    }

    pub fn error(status: u16, message: impl Into<String>) -> Step {
        Step::new(Reply::Error {
            status,
            message: message.into(),
            error_type: None,
            code: None,
            body: None,
        })
    }

    pub fn overflow() -> Step {
        Step::new(Reply::Overflow)
    }

    pub fn hang() -> Step {
        Step::new(Reply::Hang { text: None })
    }

    /// Hangs, and answers `text` normally once released.
    pub fn hang_then(text: impl Into<String>) -> Step {
        Step::new(Reply::Hang {
            text: Some(text.into()),
        })
    }

    pub fn with_prompt_tokens(mut self, tokens: u64) -> Step {
        self.prompt_tokens = Some(tokens);
        self
    }

    pub fn with_completion_tokens(mut self, tokens: u64) -> Step {
        self.completion_tokens = Some(tokens);
        self
    }

    pub fn with_delay_ms(mut self, ms: u64) -> Step {
        self.delay_ms = ms;
        self
    }

    /// Reasoning text streamed before a text answer (ignored by other kinds).
    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Step {
        if let Reply::Text { thinking: t, .. } = &mut self.reply {
            *t = Some(thinking.into());
        }
        self
    }
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
    fn scenario_parses_all_kinds() {
        let text = r#"{
          "steps": [
            {"type":"text","text":"hi","thinking":"hmm"},
            {"type":"tool_calls","calls":[{"name":"bash","arguments":{"command":"ls"}},{"name":"read","arguments":{"path":"a"}}]},
            {"type":"empty","prompt_tokens":9000},
            {"type":"thinking","text":"..."},
            {"type":"cut","text":"par","abrupt":true},
            {"type":"error","status":503,"message":"busy"},
            {"type":"overflow"},
            {"type":"hang","text":"late"}
          ],
          "summaries": [{"type":"text","text":"summary"}],
          "default": {"type":"text","text":"ok"}
        }"#;
        let scenario = Scenario::from_json(text).unwrap();
        assert_eq!(scenario.steps.len(), 8);
        assert_eq!(scenario.steps[2].prompt_tokens, Some(9000));
        assert!(matches!(&scenario.steps[1].reply, Reply::ToolCalls { calls, .. } if calls.len() == 2));
        assert!(matches!(
            &scenario.steps[5].reply,
            Reply::Error { status: 503, .. }
        ));
        assert_eq!(scenario.summaries.len(), 1);
        assert!(scenario.default.is_some());
        assert!(Scenario::from_json(r#"{"stepz":[]}"#).is_err());
    }

    #[test]
    fn scenario_file_errors_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let err = format!("{:#}", Scenario::from_file(&missing).unwrap_err());
        assert!(err.contains("missing.json"), "{err}");

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, r#"{"steps":[{"type":"text","txt":"x"}]}"#).unwrap();
        let err = format!("{:#}", Scenario::from_file(&bad).unwrap_err());
        assert!(
            err.contains("bad.json") && err.contains("txt") && err.contains("line 1"),
            "{err}"
        );

        let good = dir.path().join("good.json");
        std::fs::write(&good, r#"{"steps":[{"type":"empty"}]}"#).unwrap();
        assert_eq!(Scenario::from_file(&good).unwrap().steps, vec![Step::empty()]);
    }
}
