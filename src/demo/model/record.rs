//! What the scripted model received: one record per request, with helpers for test assertions.

use std::time::Duration;

use serde_json::Value;

/// How the server classified a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// `POST /v1/chat/completions` answered from the step queue, a directive or the default.
    Chat,
    /// A chat request that asks for a compaction summary; answered from the summary queue.
    Summary,
    /// `GET /v1/models`.
    ListModels,
    /// Any other path or method (answered 404 or 405).
    Unknown,
    /// A chat request whose body is not a JSON object (answered 400).
    BadBody,
}

/// What chose the answer to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredBy {
    /// The next step of the ordinary queue.
    Queue,
    /// The next step of the summary queue.
    SummaryQueue,
    /// Directives in the prompt.
    Directive,
    /// The default step (or the default summary).
    Default,
    /// No step: a fixed answer (model list, 404, 400).
    Fixed,
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// 1 for the first request the server saw, then 2, 3, ...
    pub seq: usize,
    pub method: String,
    /// The path without the query string.
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The parsed JSON body; `Value::Null` when there was none or it was not JSON.
    pub body: Value,
    /// When it arrived, from the server's start.
    pub at: Duration,
    pub kind: RequestKind,
    /// What chose the answer.
    pub answered_by: AnsweredBy,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn messages(&self) -> &[Value] {
        messages(&self.body)
    }

    /// The text of every user message, in order.
    pub fn user_texts(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| content_text(&m["content"]))
            .collect()
    }

    pub fn last_user_text(&self) -> Option<String> {
        self.user_texts().pop()
    }

    /// The first message's text when it is a system (or developer) message.
    pub fn system_text(&self) -> Option<String> {
        let first = self.messages().first()?;
        matches!(first["role"].as_str(), Some("system" | "developer"))
            .then(|| content_text(&first["content"]))
    }

    /// Names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        let Some(tools) = self.body["tools"].as_array() else {
            return Vec::new();
        };
        tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .collect()
    }

    /// Messages with role `tool` (tool results sent back to the model).
    pub fn tool_results(&self) -> Vec<&Value> {
        self.messages().iter().filter(|m| m["role"] == "tool").collect()
    }

    pub fn model(&self) -> Option<&str> {
        self.body["model"].as_str()
    }

    pub fn is_summary(&self) -> bool {
        self.kind == RequestKind::Summary
    }
}

pub(crate) fn messages(body: &Value) -> &[Value] {
    body["messages"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The text of a message content: a string, or the text parts of an array, joined.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| {
                if p["type"] == "text" {
                    p["text"].as_str()
                } else {
                    None
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// pi's compaction requests carry no tools and open with its summarization system prompt.
pub(crate) fn is_summary_request(body: &Value) -> bool {
    let no_tools = body["tools"].as_array().is_none_or(Vec::is_empty);
    let first = messages(body).first();
    let system = first.filter(|m| matches!(m["role"].as_str(), Some("system" | "developer")));
    no_tools
        && system.is_some_and(|m| content_text(&m["content"]).contains("context summarization assistant"))
}

/// The text of the last message when it is a user message: directives are read from it only then,
/// so that a tool call scripted by a directive is not repeated after its result comes back.
pub(crate) fn trailing_user_text(body: &Value) -> Option<String> {
    let last = messages(body).last()?;
    (last["role"] == "user").then(|| content_text(&last["content"]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summary_detection_needs_no_tools_and_the_prompt() {
        let sys = json!({"role":"system","content":"You are a context summarization assistant. Do it."});
        assert!(is_summary_request(
            &json!({"messages":[sys, {"role":"user","content":"<conversation>"}]})
        ));
        assert!(!is_summary_request(
            &json!({"messages":[sys], "tools":[{"type":"function"}]})
        ));
        assert!(!is_summary_request(
            &json!({"messages":[{"role":"system","content":"You are a coding assistant"}]})
        ));
        assert!(!is_summary_request(&json!("nonsense")));
    }

    #[test]
    fn trailing_user_text_only_when_the_user_spoke_last() {
        let body = json!({"messages":[
            {"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}
        ]});
        assert_eq!(trailing_user_text(&body).as_deref(), Some("a\nb"));
        let after_tool = json!({"messages":[{"role":"user","content":"go"},{"role":"tool","content":"out"}]});
        assert_eq!(trailing_user_text(&after_tool), None);
    }
}
