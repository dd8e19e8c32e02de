//! The replies pokeshell must recover from, as a client receives them: a stalled stream behind
//! keep-alives, its healthy twin (a slow but steady stream), and HTTP errors with headers.

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::client::{Client, chat};
use crate::support::{Step, WAIT, model_server};
use pokeshell::demo::model::ModelServer;

const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// Posts a chat request and reads the answer's head, leaving the body to the caller.
fn start_stream(server: &ModelServer) -> Client {
    let mut c = Client::connect(server.addr());
    let body = chat("go").to_string();
    c.send_raw(
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    let head = c.read_head();
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), Some("text/event-stream"));
    c
}

fn content_of(chunk: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(chunk).ok()?;
    let event: Value = serde_json::from_str(text.strip_prefix("data: ")?.trim_end()).ok()?;
    event["choices"][0]["delta"]["content"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn stall_sends_its_first_token_then_only_keep_alive_comments_until_the_client_leaves() {
    let server = model_server();
    server.push(Step::stall("Hel", 60));
    let start = Instant::now();
    // Measured from the request: the server cannot send the fourth comment any sooner.
    let mut c = start_stream(&server);
    let role = c.next_chunk().expect("the role chunk");
    assert!(String::from_utf8_lossy(&role).contains("\"role\":\"assistant\""));
    assert_eq!(
        content_of(&c.next_chunk().expect("the first token")).as_deref(),
        Some("Hel")
    );
    for _ in 0..4 {
        assert_eq!(
            c.next_chunk().as_deref(),
            Some(KEEP_ALIVE),
            "only comments after the first token"
        );
    }
    assert!(
        start.elapsed() >= Duration::from_millis(4 * 60),
        "four keep-alives 60 ms apart came in {:?}",
        start.elapsed()
    );
    assert_eq!(server.hanging(), 1, "a stall counts as a held connection");
    drop(c);
    server
        .wait_for_hanging(0, WAIT)
        .expect("the stall ends when its client leaves");
}

#[test]
fn dropping_the_server_ends_a_stall_promptly() {
    let server = model_server();
    server.push(Step::stall("Hel", 30));
    let mut c = start_stream(&server);
    server.wait_for_hanging(1, WAIT).unwrap();
    let role = c.next_chunk().expect("the role chunk");
    assert!(String::from_utf8_lossy(&role).contains("\"role\":\"assistant\""));
    let start = Instant::now();
    // Drop joins every connection thread: a stall that kept spinning would keep it waiting.
    drop(server);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "drop took {:?}",
        start.elapsed()
    );
    let mut rest = Vec::new();
    let _ = c.reader.read_to_end(&mut rest);
    let rest = String::from_utf8_lossy(&rest);
    assert!(
        !rest.ends_with("0\r\n\r\n"),
        "the body was cut, not ended: {rest:?}"
    );
    assert!(!rest.contains("finish_reason\":\"stop"), "{rest:?}");
}

#[test]
fn timed_stall_keeps_alive_for_its_duration_then_answers() {
    let server = model_server();
    server.push(Step::stall_for("Hel", 40, 300, "lo there"));
    let start = Instant::now();
    let answer = Client::connect(server.addr()).post("/v1/chat/completions", &chat("go"));
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "answered after {:?}",
        start.elapsed()
    );
    let body = String::from_utf8_lossy(&answer.body).into_owned();
    let comments = body.matches(": keep-alive\n\n").count();
    assert!(
        (3..=8).contains(&comments),
        "{comments} keep-alives in 300 ms at 40 ms: {body}"
    );
    let first_comment = body.find(": keep-alive").unwrap();
    assert!(body[..first_comment].contains("Hel") && body[first_comment..].contains("lo there"));
    assert_eq!(answer.streamed_text(), "Hello there");
    let events = answer.sse();
    assert!(events.iter().any(|e| e["choices"][0]["finish_reason"] == "stop"));
    assert_eq!(events.last().unwrap(), "[DONE]");
}

#[test]
fn released_stall_without_an_answer_ends_like_a_cut() {
    let server = model_server();
    server.push(Step::stall("Hel", 20));
    let addr = server.addr();
    let client = std::thread::spawn(move || Client::connect(addr).post("/v1/chat/completions", &chat("a")));
    server.wait_for_hanging(1, WAIT).unwrap();
    server.release_hangs();
    let answer = client.join().unwrap();
    assert_eq!(answer.streamed_text(), "Hel");
    assert!(
        !answer
            .sse()
            .iter()
            .any(|e| e == "[DONE]" || e["choices"][0]["finish_reason"].is_string())
    );
}

#[test]
fn slow_stream_sends_one_token_per_period_then_finishes() {
    let server = model_server();
    server.push(Step::slow(4, 80, "w "));
    let start = Instant::now();
    let mut c = start_stream(&server);
    let mut tokens = 0;
    let mut tail = Vec::new();
    while let Some(chunk) = c.next_chunk() {
        assert_ne!(chunk, KEEP_ALIVE, "a slow stream needs no keep-alives");
        match content_of(&chunk) {
            Some(t) if t == "w " => tokens += 1,
            _ => tail.push(String::from_utf8_lossy(&chunk).into_owned()),
        }
    }
    assert_eq!(tokens, 4, "one chunk per token");
    // Three pauses of 80 ms between the four tokens: the end cannot come sooner.
    assert!(
        start.elapsed() >= Duration::from_millis(3 * 80),
        "four tokens 80 ms apart came in {:?}",
        start.elapsed()
    );
    let tail = tail.join("");
    assert!(
        tail.contains("\"finish_reason\":\"stop\"") && tail.ends_with("data: [DONE]\n\n"),
        "{tail}"
    );
}

#[test]
fn error_replies_carry_status_headers_and_an_openai_error_body() {
    let server = model_server();
    let statuses = [429u16, 529, 503, 500, 400, 401];
    for status in statuses {
        server.push(Step::error_with_headers(
            status,
            format!("failure {status}"),
            [("retry-after", "7"), ("x-request-id", "req-1")],
        ));
    }
    let mut c = Client::connect(server.addr());
    for status in statuses {
        let answer = c.post("/v1/chat/completions", &chat("x"));
        assert_eq!(answer.status, status);
        assert_eq!(answer.header("retry-after"), Some("7"));
        assert_eq!(answer.header("x-request-id"), Some("req-1"));
        assert_eq!(answer.header("content-type"), Some("application/json"));
        let error = &answer.json()["error"];
        assert_eq!(error["message"], format!("failure {status}"));
        assert!(error.get("type").is_some() && error.get("code").is_some() && error.get("param").is_some());
    }
}

#[test]
fn rate_limit_reply_is_on_the_wire_byte_for_byte() {
    let server = model_server();
    server.push(Step::rate_limited(25));
    let mut c = Client::connect(server.addr());
    let body = chat("x").to_string();
    c.send_raw(
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    let mut head = String::new();
    loop {
        let line = c.line();
        head.push_str(&line);
        head.push_str("\r\n");
        if line.is_empty() {
            break;
        }
    }
    assert!(
        head.starts_with(
            "HTTP/1.1 429 Too Many Requests\r\nretry-after: 25\r\nx-ratelimit-reset-requests: 25s\r\n"
        ),
        "{head}"
    );
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|n| n.parse().ok())
        .expect("content-length");
    let mut body = vec![0; len];
    c.reader.read_exact(&mut body).unwrap();
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["error"]["code"], "rate_limit_exceeded");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Rate limit reached") && message.ends_with("Please try again in 25s."),
        "{message}"
    );
}
