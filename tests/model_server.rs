//! The scripted model server over real TCP, with a raw HTTP client (no pi): routing, keep-alive,
//! malformed input, every step kind on the wire, recording, hangs and shutdown. The stalled, slow
//! and failing replies pokeshell must recover from are in `model_server/stalls_and_errors.rs`.

mod support;

#[path = "model_server/client.rs"]
mod client;
#[path = "model_server/stalls_and_errors.rs"]
mod stalls_and_errors;

use std::io::Read;
use std::time::{Duration, Instant};

use client::{Client, chat, summary_request};
use serde_json::json;
use support::{Scenario, Step, WAIT, model_server};

use pokeshell::demo::model::{AnsweredBy, ModelServer, RequestKind};

#[test]
fn models_endpoint_lists_the_mock_models() {
    let server = model_server();
    let answer = Client::connect(server.addr()).get("/v1/models");
    assert_eq!(answer.status, 200);
    let ids: Vec<String> = answer.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["mock-model", "mock-tiny", "mock-reasoner"]);
    assert_eq!(server.requests()[0].kind, RequestKind::ListModels);
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection_and_unknown_paths_get_404() {
    let server = model_server();
    server.push_all([Step::text("one"), Step::text("two")]);
    let mut client = Client::connect(server.addr());
    assert_eq!(
        client.post("/v1/chat/completions", &chat("a")).streamed_text(),
        "one"
    );
    let missing = client.get("/v1/nothing");
    assert_eq!(missing.status, 404);
    assert!(
        missing.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/v1/nothing")
    );
    assert_eq!(
        client.post("/v1/chat/completions", &chat("b")).streamed_text(),
        "two"
    );
    assert_eq!(client.get("/v1/chat/completions").status, 405);
    let kinds: Vec<RequestKind> = server.requests().iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RequestKind::Chat,
            RequestKind::Unknown,
            RequestKind::Chat,
            RequestKind::Unknown
        ]
    );
}

#[test]
fn malformed_http_gets_400_then_close_and_the_server_keeps_serving() {
    let server = model_server();
    let mut bad = Client::connect(server.addr());
    bad.send_raw(b"this is not http\r\n\r\n");
    let answer = bad.read_answer();
    assert_eq!(answer.status, 400);
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("malformed")
    );
    assert!(bad.closed(), "a malformed request ends its connection");

    let mut bad_length = Client::connect(server.addr());
    bad_length.send_raw(b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: lots\r\n\r\n");
    assert_eq!(bad_length.read_answer().status, 400);

    server.push(Step::text("still here"));
    assert_eq!(
        Client::connect(server.addr())
            .post("/v1/chat/completions", &chat("x"))
            .streamed_text(),
        "still here"
    );
    assert!(
        server.requests().iter().all(|r| r.kind == RequestKind::Chat),
        "malformed requests are not recorded"
    );
}

#[test]
fn non_object_json_body_is_400_and_recorded_as_bad_body() {
    let server = model_server();
    let mut client = Client::connect(server.addr());
    let body = b"[1,2";
    client.send_raw(
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    client.send_raw(body);
    assert_eq!(client.read_answer().status, 400);
    assert_eq!(server.requests()[0].kind, RequestKind::BadBody);
    assert_eq!(server.pending(), (0, 0));
}

#[test]
fn chunked_request_body_is_decoded_and_recorded() {
    let server = model_server();
    server.push(Step::text("got it"));
    let body = chat("chunked prompt").to_string();
    let (a, b) = body.split_at(body.len() / 2);
    let mut client = Client::connect(server.addr());
    client.send_raw(b"POST /v1/chat/completions HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n");
    client.send_raw(format!("{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n", a.len(), b.len()).as_bytes());
    assert_eq!(client.read_answer().streamed_text(), "got it");
    assert_eq!(server.last_user_text().as_deref(), Some("chunked prompt"));
}

#[test]
fn text_step_streams_the_openai_chunk_shapes_with_the_scripted_usage() {
    let server = model_server();
    server.push(
        Step::text_chunked("Hi there", 3, 0)
            .with_prompt_tokens(9000)
            .with_completion_tokens(7),
    );
    let answer = Client::connect(server.addr()).post("/v1/chat/completions", &chat("hello"));
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let events = answer.sse();
    assert_eq!(events[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(answer.streamed_text(), "Hi there");
    assert_eq!(
        events
            .iter()
            .filter(|e| e["choices"][0]["delta"]["content"].is_string())
            .count(),
        4
    );
    let usage = events
        .iter()
        .find(|e| e["usage"].is_object())
        .expect("a usage chunk");
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 9000, "completion_tokens": 7, "total_tokens": 9007})
    );
    assert_eq!(events.last().unwrap(), "[DONE]");
}

#[test]
fn queue_then_default_and_directives_win_only_when_the_user_spoke_last() {
    let server = model_server();
    server.push(Step::text("queued"));
    server.set_default(Step::text("fallback"));
    let mut c = Client::connect(server.addr());
    assert_eq!(
        c.post("/v1/chat/completions", &chat("say [[text:directed]]"))
            .streamed_text(),
        "directed"
    );
    assert_eq!(
        c.post("/v1/chat/completions", &chat("plain")).streamed_text(),
        "queued"
    );
    assert_eq!(
        c.post("/v1/chat/completions", &chat("plain again"))
            .streamed_text(),
        "fallback"
    );

    let mut after_tool = chat("run [[bash:ls]]");
    after_tool["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role":"tool","tool_call_id":"c","content":"out"}));
    assert_eq!(
        c.post("/v1/chat/completions", &after_tool).streamed_text(),
        "fallback"
    );

    let answered_by: Vec<AnsweredBy> = server.requests().iter().map(|r| r.answered_by).collect();
    use AnsweredBy::*;
    assert_eq!(answered_by, [Directive, Queue, Default, Default]);
}

#[test]
fn replace_drops_what_was_left_queued_and_loads_the_new_script() {
    let server = model_server();
    server.push_all([Step::text("old one"), Step::text("old two")]);
    server.push_summary(Step::text("old summary"));
    let mut c = Client::connect(server.addr());
    assert_eq!(
        c.post("/v1/chat/completions", &chat("a")).streamed_text(),
        "old one"
    );
    server.replace(Scenario {
        steps: vec![Step::text("new one")],
        summaries: Vec::new(),
        default: Some(Step::text("new default")),
    });
    assert_eq!(server.pending(), (1, 0), "the old step and summary are gone");
    assert_eq!(
        c.post("/v1/chat/completions", &chat("b")).streamed_text(),
        "new one"
    );
    assert_eq!(
        c.post("/v1/chat/completions", &chat("c")).streamed_text(),
        "new default"
    );
}

#[test]
fn tool_call_directive_streams_every_call() {
    let server = model_server();
    let answer = Client::connect(server.addr()).post(
        "/v1/chat/completions",
        &chat(r#"[[bash:echo hi]] [[tool:read {"path":"a.txt"}]] [[tokens:42]]"#),
    );
    let events = answer.sse();
    let names: Vec<&str> = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["tool_calls"][0]["function"]["name"].as_str())
        .collect();
    assert_eq!(names, ["bash", "read"]);
    assert!(
        events
            .iter()
            .any(|e| e["choices"][0]["finish_reason"] == "tool_calls")
    );
    assert!(events.iter().any(|e| e["usage"]["prompt_tokens"] == 42));
}

#[test]
fn summary_requests_use_their_own_queue() {
    let server = model_server();
    server.push(Step::text("ordinary"));
    server.push_summary(Step::text("the summary"));
    let mut c = Client::connect(server.addr());
    assert_eq!(
        c.post("/v1/chat/completions", &summary_request()).streamed_text(),
        "the summary"
    );
    assert!(
        c.post("/v1/chat/completions", &summary_request())
            .streamed_text()
            .contains("## Goal")
    );
    assert_eq!(
        c.post("/v1/chat/completions", &chat("x")).streamed_text(),
        "ordinary"
    );
    assert_eq!(server.summary_requests().len(), 2);
    assert_eq!(server.chat_requests().len(), 1);
    assert!(server.summary_requests()[0].is_summary());
}

#[test]
fn error_and_overflow_steps_answer_with_status_and_json_error() {
    let server = model_server();
    server.push_all([
        Step::error(503, "busy now"),
        Step::overflow(),
        Step::text("after"),
    ]);
    let mut c = Client::connect(server.addr());
    let err = c.post("/v1/chat/completions", &chat("a"));
    assert_eq!(err.status, 503);
    assert_eq!(err.json()["error"]["message"], "busy now");
    let overflow = c.post("/v1/chat/completions", &chat("b"));
    assert_eq!(overflow.status, 400);
    assert_eq!(overflow.json()["error"]["code"], "context_length_exceeded");
    assert_eq!(
        c.post("/v1/chat/completions", &chat("c")).streamed_text(),
        "after",
        "keep-alive after errors"
    );
}

#[test]
fn cut_stream_has_no_finish_reason_and_abrupt_cut_drops_the_connection() {
    let server = model_server();
    server.push_all([Step::cut("partial"), Step::cut_abrupt("half")]);
    let mut c = Client::connect(server.addr());
    let cut = c.post("/v1/chat/completions", &chat("a"));
    assert_eq!(cut.streamed_text(), "partial");
    assert!(
        !cut.sse()
            .iter()
            .any(|e| e == "[DONE]" || e["choices"][0]["finish_reason"].is_string())
    );

    c.send_raw(b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}");
    assert!(c.line().starts_with("HTTP/1.1 200"));
    let mut rest = Vec::new();
    let _ = c.reader.read_to_end(&mut rest);
    let rest = String::from_utf8_lossy(&rest);
    assert!(rest.contains("half"), "{rest}");
    assert!(
        !rest.ends_with("0\r\n\r\n"),
        "an abrupt cut never ends the chunked body"
    );
}

#[test]
fn delay_holds_the_answer_back() {
    let server = model_server();
    server.push(Step::text("late").with_delay_ms(300));
    let start = Instant::now();
    let answer = Client::connect(server.addr()).post("/v1/chat/completions", &chat("a"));
    assert_eq!(answer.streamed_text(), "late");
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "answered after {:?}",
        start.elapsed()
    );
}

#[test]
fn hang_is_released_into_its_text() {
    let server = model_server();
    server.push(Step::hang_then("finally"));
    let addr = server.addr();
    let client = std::thread::spawn(move || Client::connect(addr).post("/v1/chat/completions", &chat("a")));
    server.wait_for_hanging(1, WAIT).unwrap();
    assert!(!client.is_finished());
    server.release_hangs();
    let answer = client.join().unwrap();
    assert_eq!(answer.streamed_text(), "finally");
    assert!(
        answer
            .sse()
            .iter()
            .any(|e| e["choices"][0]["finish_reason"] == "stop")
    );
    server.wait_for_hanging(0, WAIT).unwrap();
}

#[test]
fn hang_ends_when_the_client_goes_away() {
    let server = model_server();
    server.push(Step::hang());
    let mut c = Client::connect(server.addr());
    c.send_raw(b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}");
    server.wait_for_hanging(1, WAIT).unwrap();
    drop(c);
    server
        .wait_for_hanging(0, WAIT)
        .expect("the server notices the client left");
}

#[test]
fn wait_for_requests_times_out_with_what_it_saw() {
    let server = model_server();
    Client::connect(server.addr()).post("/v1/chat/completions", &chat("only one"));
    let got = server.wait_for_requests(1, WAIT).unwrap();
    assert_eq!(got[0].last_user_text().as_deref(), Some("only one"));
    let err = server
        .wait_for_requests(2, Duration::from_millis(100))
        .unwrap_err();
    assert_eq!(err.seen, 1);
    assert!(err.to_string().contains("2 model requests"), "{err}");
}

#[test]
fn drop_closes_held_connections_promptly() {
    let server = model_server();
    server.push(Step::hang());
    let mut c = Client::connect(server.addr());
    c.send_raw(b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}");
    server.wait_for_hanging(1, WAIT).unwrap();
    let start = Instant::now();
    drop(server);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "drop took {:?}",
        start.elapsed()
    );
    let mut rest = Vec::new();
    let _ = c.reader.read_to_end(&mut rest);
    assert!(!String::from_utf8_lossy(&rest).ends_with("0\r\n\r\n"));
}

#[test]
fn only_loopback_addresses_are_accepted() {
    let err = ModelServer::start_on("0.0.0.0:0".parse().unwrap())
        .err()
        .expect("refused");
    assert!(err.to_string().contains("loopback"), "{err}");
    let server = ModelServer::start_on("127.0.0.1:0".parse().unwrap()).unwrap();
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    assert!(server.base_url().ends_with("/v1"));
}

/// The example in docs/scenario-format.md must stay a valid scenario.
#[test]
fn documented_example_scenario_parses() {
    let doc = include_str!("../docs/scenario-format.md");
    let start = doc.find("```json\n").expect("a json block in the doc") + "```json\n".len();
    let end = start + doc[start..].find("```").expect("end of the json block");
    let scenario = Scenario::from_json(&doc[start..end]).expect("the documented example parses");
    assert_eq!(scenario.steps.len(), 12);
    assert_eq!(scenario.summaries.len(), 1);
    assert!(scenario.default.is_some());
}
