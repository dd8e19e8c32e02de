//! The streams `plan` builds, event by event.

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
fn stall_sends_its_first_tokens_then_keeps_alive() {
    let actions = plan(&Step::stall("Hel", 250).reply, &enc(), USAGE, "c");
    let ev = events(&actions);
    assert_eq!(ev[1]["choices"][0]["delta"]["content"], "Hel");
    assert_eq!(
        actions[2..],
        [
            Action::KeepAlive {
                every: Duration::from_millis(250),
                for_at_most: None
            },
            Action::EndBody
        ]
    );
    let timed = plan(&Step::stall_for("a", 10, 500, "done").reply, &enc(), USAGE, "c");
    assert_eq!(
        timed[2],
        Action::KeepAlive {
            every: Duration::from_millis(10),
            for_at_most: Some(Duration::from_millis(500))
        }
    );
    let ev = events(&timed);
    assert_eq!(ev[3]["choices"][0]["delta"]["content"], "done");
    assert_eq!(ev[4]["choices"][0]["finish_reason"], "stop");
    assert_eq!(Encoder::keep_alive(), b": keep-alive\n\n");
}

#[test]
fn slow_sends_one_token_per_period_then_finishes() {
    let actions = plan(&Step::slow(3, 40, "w ").reply, &enc(), USAGE, "c");
    let pauses = actions
        .iter()
        .filter(|a| **a == Action::Pause(Duration::from_millis(40)))
        .count();
    assert_eq!(pauses, 2, "between the three tokens");
    let ev = events(&actions);
    let text: String = ev
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "w w w ");
    assert!(ev.iter().any(|e| e["choices"][0]["finish_reason"] == "stop"));
    assert_eq!(actions.last(), Some(&Action::EndBody));
}
