//! Constructors for steps, as the tests and the built-in tour write them.

use serde_json::Value;

use super::{Reply, Step, ToolCall};

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
            headers: Default::default(),
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

    /// An error answer with extra header lines; `headers` names are lower-case.
    pub fn error_with_headers<'a>(
        status: u16,
        message: impl Into<String>,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Step {
        let mut step = Step::error(status, message);
        if let Reply::Error { headers: h, .. } = &mut step.reply {
            h.extend(headers.into_iter().map(|(n, v)| (n.to_string(), v.to_string())));
        }
        step
    }

    /// A 429 in the shape an OpenAI-compatible provider gives when a rate limit is hit: its
    /// message names the wait, `retry-after` and `x-ratelimit-reset-requests` say it too.
    pub fn rate_limited(retry_after_secs: u64) -> Step {
        let message = format!(
            "Rate limit reached for mock-model on requests per minute: limit 3, used 3, \
             requested 1. Please try again in {retry_after_secs}s."
        );
        let secs = retry_after_secs.to_string();
        let reset = format!("{retry_after_secs}s");
        let mut step = Step::error_with_headers(
            429,
            message,
            [
                ("retry-after", secs.as_str()),
                ("x-ratelimit-reset-requests", reset.as_str()),
            ],
        );
        if let Reply::Error { error_type, code, .. } = &mut step.reply {
            *error_type = Some("requests".into());
            *code = Some("rate_limit_exceeded".into());
        }
        step
    }

    /// Streams `first`, then only keep-alive comments every `keep_alive_ms`, until the client
    /// leaves, hangs are released or the server stops.
    pub fn stall(first: impl Into<String>, keep_alive_ms: u64) -> Step {
        Step::new(Reply::Stall {
            text: first.into(),
            chunk_chars: 0,
            keep_alive_ms,
            duration_ms: None,
            then: None,
        })
    }

    /// A stall that lasts `duration_ms`, then answers `then` normally.
    pub fn stall_for(
        first: impl Into<String>,
        keep_alive_ms: u64,
        duration_ms: u64,
        then: impl Into<String>,
    ) -> Step {
        Step::new(Reply::Stall {
            text: first.into(),
            chunk_chars: 0,
            keep_alive_ms,
            duration_ms: Some(duration_ms),
            then: Some(then.into()),
        })
    }

    /// `tokens` deltas of `token`, one every `every_ms`, then a normal finish.
    pub fn slow(tokens: usize, every_ms: u64, token: impl Into<String>) -> Step {
        Step::new(Reply::Slow {
            tokens,
            every_ms,
            token: token.into(),
        })
    }
}
