//! One client connection: read a request, record it, choose its step, play the step; repeat while
//! the client keeps the connection alive.

use std::io::{self, BufReader, BufWriter, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::error_reply::error_answer;
use super::http::{self, ReadError, Request};
use super::record::{self, AnsweredBy, RecordedRequest, RequestKind};
use super::sse::{self, Action, Encoder, Usage};
use super::step::{Reply, Step};
use super::{MODEL_IDS, Shared, directive};

/// How often a held connection checks whether its client went away.
const HOLD_POLL: Duration = Duration::from_millis(50);

enum Answer {
    Json {
        status: u16,
        body: Value,
    },
    Stream {
        step: Step,
        id: String,
        model: String,
        prompt_estimate: u64,
    },
}

pub(super) fn serve(shared: &Shared, stream: TcpStream, conn_id: u64) {
    let _ = serve_requests(shared, &stream);
    let _ = stream.shutdown(Shutdown::Both);
    shared.lock().conns.remove(&conn_id);
}

fn serve_requests(shared: &Shared, stream: &TcpStream) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = BufWriter::new(stream.try_clone()?);
    loop {
        let request = match http::read_request(&mut reader, &mut writer) {
            Ok(request) => request,
            Err(ReadError::Closed) => return Ok(()),
            Err(ReadError::Io(e)) => return Err(e),
            Err(ReadError::Malformed(why)) => {
                let body = json!({ "error": { "message": format!("mock: malformed request: {why}"),
                                              "type": "invalid_request_error" } });
                return http::write_json(&mut writer, 400, &body, false);
            }
        };
        let keep_alive = !request.wants_close();
        let flow = match answer(shared, &request) {
            Answer::Json { status, body } => {
                http::write_json(&mut writer, status, &body, keep_alive).map(|_| true)
            }
            Answer::Stream {
                step,
                id,
                model,
                prompt_estimate,
            } => play(shared, stream, &mut writer, &step, &id, &model, prompt_estimate),
        };
        if !flow? || !keep_alive {
            return Ok(());
        }
    }
}

/// Records the request and decides the answer.
fn answer(shared: &Shared, request: &Request) -> Answer {
    let path = request.path();
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let mut state = shared.lock();
    let seq = state.requests.len() + 1;
    let mut recorded = RecordedRequest {
        seq,
        method: request.method.clone(),
        path: path.to_string(),
        headers: request.headers.clone(),
        body: body.clone(),
        at: shared.started.elapsed(),
        kind: RequestKind::Unknown,
        answered_by: AnsweredBy::Fixed,
    };
    let is_chat = matches!(path, "/v1/chat/completions" | "/chat/completions");
    let is_models = matches!(path, "/v1/models" | "/models");
    let answer = if is_chat && request.method == "POST" {
        if !body.is_object() {
            recorded.kind = RequestKind::BadBody;
            Answer::Json {
                status: 400,
                body: error_body("mock: the request body is not a JSON object"),
            }
        } else {
            let summary = record::is_summary_request(&body);
            let chosen = state.policy.clone().and_then(|policy| policy(&body, summary));
            let (step, kind, answered_by) = if let Some(step) = chosen {
                let kind = if summary {
                    RequestKind::Summary
                } else {
                    RequestKind::Chat
                };
                (step, kind, AnsweredBy::Queue)
            } else if summary {
                match state.summaries.pop_front() {
                    Some(step) => (step, RequestKind::Summary, AnsweredBy::SummaryQueue),
                    None => (
                        state.default_summary.clone(),
                        RequestKind::Summary,
                        AnsweredBy::Default,
                    ),
                }
            } else if let Some(step) = record::trailing_user_text(&body).and_then(|t| directive::parse(&t)) {
                (step, RequestKind::Chat, AnsweredBy::Directive)
            } else {
                match state.steps.pop_front() {
                    Some(step) => (step, RequestKind::Chat, AnsweredBy::Queue),
                    None => (state.default_step.clone(), RequestKind::Chat, AnsweredBy::Default),
                }
            };
            recorded.kind = kind;
            recorded.answered_by = answered_by;
            let model = body["model"].as_str().unwrap_or(MODEL_IDS[0]).to_string();
            let prompt_chars = body["messages"].to_string().chars().count();
            Answer::Stream {
                step,
                id: format!("chatcmpl-mock-{seq}"),
                model,
                prompt_estimate: sse::estimate_tokens(prompt_chars),
            }
        }
    } else if is_models && request.method == "GET" {
        recorded.kind = RequestKind::ListModels;
        let data: Vec<Value> = MODEL_IDS
            .iter()
            .map(|id| json!({ "id": id, "object": "model", "created": 0, "owned_by": "pokeshell" }))
            .collect();
        Answer::Json {
            status: 200,
            body: json!({ "object": "list", "data": data }),
        }
    } else if is_chat || is_models {
        Answer::Json {
            status: 405,
            body: error_body(&format!("mock: {} is not allowed here", request.method)),
        }
    } else {
        Answer::Json {
            status: 404,
            body: error_body(&format!("mock: no such endpoint {path}")),
        }
    };
    state.requests.push(recorded);
    drop(state);
    shared.wake.notify_all();
    answer
}

fn error_body(message: &str) -> Value {
    json!({ "error": { "message": message, "type": "invalid_request_error" } })
}

/// Plays one step. Ok(true): the connection can serve another request.
fn play(
    shared: &Shared,
    stream: &TcpStream,
    w: &mut impl Write,
    step: &Step,
    id: &str,
    model: &str,
    prompt_estimate: u64,
) -> io::Result<bool> {
    if step.delay_ms > 0 && !shared.pause(Duration::from_millis(step.delay_ms)) {
        return Ok(false);
    }
    if let Some(answer) = error_answer(&step.reply) {
        http::write_json_with(w, answer.status, &answer.headers, &answer.body, true)?;
        return Ok(true);
    }
    let usage = Usage {
        prompt_tokens: step.prompt_tokens.unwrap_or(prompt_estimate),
        completion_tokens: step
            .completion_tokens
            .unwrap_or_else(|| sse::estimate_tokens(reply_chars(&step.reply))),
    };
    let encoder = Encoder::new(id, model);
    let call_prefix = id.replace("chatcmpl-mock-", "call_mock_");
    http::write_sse_head(w)?;
    for action in sse::plan(&step.reply, &encoder, usage, &call_prefix) {
        match action {
            Action::Send(bytes) => http::write_chunk(w, &bytes)?,
            Action::Pause(d) => {
                if !shared.pause(d) {
                    return Ok(false);
                }
            }
            Action::Hold => {
                if hold(shared, stream, w, None, None) != HoldEnd::Released {
                    return Ok(false);
                }
            }
            Action::KeepAlive { every, for_at_most } => {
                if hold(shared, stream, w, Some(every), for_at_most) == HoldEnd::Left {
                    return Ok(false);
                }
            }
            Action::EndBody => http::end_chunks(w)?,
            Action::Drop => {
                w.flush()?;
                let _ = stream.shutdown(Shutdown::Both);
                return Ok(false);
            }
        }
    }
    Ok(true)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HoldEnd {
    /// `release_hangs` was called.
    Released,
    /// The hold's time limit passed.
    TimeUp,
    /// The client went away or the server is stopping: the connection is done.
    Left,
}

/// Holds the connection, counted in `hanging`, sending a keep-alive comment every `keep_alive`
/// when given, until released, until `limit` passed, or until the client leaves or the server
/// stops.
fn hold(
    shared: &Shared,
    stream: &TcpStream,
    w: &mut impl Write,
    keep_alive: Option<Duration>,
    limit: Option<Duration>,
) -> HoldEnd {
    let mut state = shared.lock();
    let generation = state.release_generation;
    state.hanging += 1;
    drop(state);
    shared.wake.notify_all();
    let end = hold_until(shared, stream, w, generation, keep_alive, limit);
    shared.lock().hanging -= 1;
    shared.wake.notify_all();
    end
}

fn hold_until(
    shared: &Shared,
    stream: &TcpStream,
    w: &mut impl Write,
    generation: u64,
    keep_alive: Option<Duration>,
    limit: Option<Duration>,
) -> HoldEnd {
    let start = Instant::now();
    let end = limit.map(|l| start + l);
    let mut next_beat = keep_alive.map(|k| start + k);
    loop {
        let now = Instant::now();
        let wake_at = [Some(now + HOLD_POLL), next_beat, end]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(now);
        let state = shared.wait(shared.lock(), wake_at.saturating_duration_since(now));
        if state.shutdown {
            return HoldEnd::Left;
        }
        if state.release_generation != generation {
            return HoldEnd::Released;
        }
        drop(state);
        if client_gone(stream) {
            return HoldEnd::Left;
        }
        let now = Instant::now();
        if end.is_some_and(|end| now >= end) {
            return HoldEnd::TimeUp;
        }
        if let (Some(beat), Some(every)) = (next_beat, keep_alive)
            && now >= beat
        {
            if http::write_chunk(w, &Encoder::keep_alive()).is_err() {
                return HoldEnd::Left;
            }
            // From now, not from the missed beat: a late wake-up never sends a burst.
            next_beat = Some(now + every);
        }
    }
}

/// True when the peer closed its side (or the socket failed). Nothing is consumed.
fn client_gone(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let mut byte = [0u8; 1];
    let gone = match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != io::ErrorKind::WouldBlock,
    };
    let _ = stream.set_nonblocking(false);
    gone
}

fn reply_chars(reply: &Reply) -> usize {
    match reply {
        Reply::Text { text, thinking, .. } => text.len() + thinking.as_ref().map_or(0, String::len),
        Reply::Thinking { text, .. } | Reply::Cut { text, .. } => text.len(),
        Reply::ToolCalls { calls, text } => {
            calls.iter().map(|c| c.arguments.to_string().len()).sum::<usize>()
                + text.as_ref().map_or(0, String::len)
        }
        Reply::Hang { text } => text.as_ref().map_or(0, String::len),
        Reply::Stall { text, then, .. } => text.len() + then.as_ref().map_or(0, String::len),
        Reply::Slow { tokens, token, .. } => tokens.saturating_mul(token.len()),
        Reply::Empty | Reply::Error { .. } | Reply::Overflow => 0,
    }
}
