//! Inline directives: `[[kind:argument]]` markers in a prompt that script the reply to that prompt,
//! for quick manual use (`pi -p "hello [[text:Hi]]"`). Unknown markers are left alone as plain text.

use serde_json::Value;

use super::step::{DEFAULT_KEEP_ALIVE_MS, Reply, Step, ToolCall};

/// Reads the directives in `text`. `None` when it holds none.
pub fn parse(text: &str) -> Option<Step> {
    let mut found = Found::default();
    let mut rest = text;
    while let Some(start) = rest.find("[[") {
        let body = &rest[start + 2..];
        match found.take(body) {
            Some(used) => rest = &body[used..],
            None => rest = body,
        }
    }
    found.into_step()
}

#[derive(Default)]
struct Found {
    any: bool,
    reply: Option<Reply>,
    calls: Vec<ToolCall>,
    prompt_tokens: Option<u64>,
    delay_ms: u64,
}

impl Found {
    /// Reads one directive at the start of `body` (just after `[[`); returns the bytes it used,
    /// including the closing `]]`, or `None` when this is not a directive we know.
    fn take(&mut self, body: &str) -> Option<usize> {
        let name_len = body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
        let (name, after) = body.split_at(name_len);
        if let Some(args) = after.strip_prefix(':') {
            if name == "tool" {
                return self.take_tool(args).map(|n| name_len + 1 + n);
            }
            let end = args.find("]]")?;
            self.apply(name, Some(&args[..end]))?;
            Some(name_len + 1 + end + 2)
        } else if after.starts_with("]]") {
            self.apply(name, None)?;
            Some(name_len + 2)
        } else {
            None
        }
    }

    /// `tool:NAME {json}]]`: the JSON may itself contain `]]`, so it is parsed, not searched.
    fn take_tool(&mut self, args: &str) -> Option<usize> {
        let name_len = args
            .find(|c: char| c.is_whitespace() || c == ']')
            .unwrap_or(args.len());
        let name = &args[..name_len];
        if name.is_empty() {
            return None;
        }
        let after_name = &args[name_len..];
        let trimmed = after_name.trim_start();
        let skipped = name_len + (after_name.len() - trimmed.len());
        let (arguments, used) = if trimmed.starts_with("]]") {
            (Value::Object(Default::default()), 0)
        } else {
            let mut values = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
            let value = values.next()?.ok()?;
            (value, values.byte_offset())
        };
        let tail = &trimmed[used..];
        let tail_trimmed = tail.trim_start();
        if !tail_trimmed.starts_with("]]") {
            return None;
        }
        self.any = true;
        self.calls.push(ToolCall {
            name: name.to_string(),
            arguments,
        });
        Some(skipped + used + (tail.len() - tail_trimmed.len()) + 2)
    }

    fn apply(&mut self, name: &str, arg: Option<&str>) -> Option<()> {
        let arg_text = || arg.unwrap_or("").to_string();
        match name {
            "text" => self.set(Step::text(arg_text()).reply),
            "thinking" => self.set(Step::thinking(arg_text()).reply),
            "empty" => self.set(Reply::Empty),
            "cut" => self.set(Step::cut(arg_text()).reply),
            "overflow" => self.set(Reply::Overflow),
            "hang" => self.set(Reply::Hang {
                text: arg.map(str::to_string),
            }),
            "stall" => self.set(Step::stall(arg.unwrap_or("Let me"), DEFAULT_KEEP_ALIVE_MS).reply),
            "ratelimit" => self.set(Step::rate_limited(arg?.trim().parse().ok()?).reply),
            "bash" => {
                let call = ToolCall {
                    name: "bash".into(),
                    arguments: serde_json::json!({ "command": arg? }),
                };
                self.calls.push(call);
            }
            "error" => {
                let arg = arg?.trim();
                let (status, message) = arg.split_once(' ').unwrap_or((arg, "scripted failure"));
                self.set(Step::error(status.parse().ok()?, message.trim()).reply);
            }
            "tokens" => self.prompt_tokens = Some(arg?.trim().parse().ok()?),
            "delay" => self.delay_ms = arg?.trim().parse().ok()?,
            _ => return None,
        }
        self.any = true;
        Some(())
    }

    fn set(&mut self, reply: Reply) {
        if self.reply.is_none() {
            self.reply = Some(reply);
        }
    }

    fn into_step(self) -> Option<Step> {
        if !self.any {
            return None;
        }
        let reply = if self.calls.is_empty() {
            self.reply.unwrap_or_else(|| Step::text("OK.").reply)
        } else {
            let text = match self.reply {
                Some(Reply::Text { text, .. }) => Some(text),
                _ => None,
            };
            Reply::ToolCalls {
                calls: self.calls,
                text,
            }
        };
        let mut step = Step::new(reply);
        step.prompt_tokens = self.prompt_tokens;
        step.delay_ms = self.delay_ms;
        Some(step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_directive() {
        assert_eq!(parse("hello [[text:Hi there]] bye"), Some(Step::text("Hi there")));
    }

    #[test]
    fn no_directive_gives_none() {
        assert_eq!(parse("plain prompt"), None);
        assert_eq!(parse("a [[wiki link]] and [[unclosed"), None);
    }

    #[test]
    fn several_tool_calls_in_one_reply_with_json_holding_brackets() {
        let step =
            parse(r#"go [[tool:bash {"command":"sleep 3"}]] [[tool:read {"path":"[[x]]"}]] [[bash:ls -l]]"#)
                .unwrap();
        let Reply::ToolCalls { calls, text } = step.reply else {
            panic!("not tool calls")
        };
        assert_eq!(text, None);
        let got: Vec<_> = calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("bash", json!({"command":"sleep 3"})),
                ("read", json!({"path":"[[x]]"})),
                ("bash", json!({"command":"ls -l"})),
            ]
        );
    }

    #[test]
    fn modifiers_combine_with_a_kind() {
        let step = parse("[[tokens:9000]] [[delay:15]] [[error:503 overloaded now]]").unwrap();
        assert_eq!(step.prompt_tokens, Some(9000));
        assert_eq!(step.delay_ms, 15);
        assert_eq!(step.reply, Step::error(503, "overloaded now").reply);
    }

    #[test]
    fn bare_kinds() {
        assert_eq!(parse("[[empty]]").unwrap().reply, Reply::Empty);
        assert_eq!(parse("[[overflow]]").unwrap().reply, Reply::Overflow);
        assert_eq!(parse("[[hang]]").unwrap().reply, Reply::Hang { text: None });
        assert_eq!(
            parse("[[thinking:hmm]]").unwrap().reply,
            Step::thinking("hmm").reply
        );
        assert_eq!(parse("[[cut:par]]").unwrap().reply, Step::cut("par").reply);
        assert_eq!(
            parse("[[stall:Hel]]").unwrap().reply,
            Step::stall("Hel", DEFAULT_KEEP_ALIVE_MS).reply
        );
        assert_eq!(
            parse("[[ratelimit:25]]").unwrap().reply,
            Step::rate_limited(25).reply
        );
    }

    #[test]
    fn bad_arguments_are_plain_text() {
        assert_eq!(
            parse("[[error:abc]] [[tokens:many]] [[tool:bash {oops]] [[ratelimit:soon]]"),
            None
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_prompts_never_panic(text in "([a-z ]{0,4}(\\[\\[|\\]\\]|:|\\{|\\}|\"|[a-z_]{1,8}|[0-9]{1,4}|é)){0,16}") {
            let step = parse(&text);
            if !text.contains("[[") {
                proptest::prop_assert!(step.is_none());
            }
        }
    }
}
