//! The soak's scripted model: each session's first prompt, `SOAK <tag> tasks=<n>`, gives it a list
//! of tasks; every answer is worked out from the conversation alone (which task results came back),
//! so a resumed, relaunched or restored pi goes on where its conversation stands, as a real model
//! would. Task k is `echo soak-<tag>-task-<k> >> done.log`, a real command pi runs. Faults the
//! injector asks for (a stalled stream, a provider error) answer a session's next requests instead.
//! Afterwards the model's log is the history: each task's result must have reached the model
//! through exactly one tool call, and each session's prompt exactly once.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use pokeshell::demo::model::{RecordedRequest, Step};
use serde_json::Value;

/// A model fault waiting for a session's next requests.
#[derive(Clone, Debug)]
pub enum Pending {
    Stall,
    Error {
        status: u16,
        reset_s: Option<u64>,
        left: u32,
    },
}

#[derive(Default)]
pub struct Board {
    pub pending: BTreeMap<String, Pending>,
    /// When each session's tasks last moved on (a new result reached the model), by tag.
    pub progress: BTreeMap<String, Vec<Instant>>,
    seen: BTreeMap<String, BTreeSet<u32>>,
    pub finished: BTreeSet<String>,
    delay: u64,
}

pub type Shared = Arc<Mutex<Board>>;

fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// `(tag, tasks)` of the session whose conversation this is.
fn whose(messages: &[Value]) -> Option<(String, u32)> {
    messages.iter().find_map(|m| {
        let text = text_of(m);
        let rest = &text[text.find("SOAK ")? + 5..];
        let mut words = rest.split_whitespace();
        let tag = words.next()?.to_string();
        let n = words.next()?.strip_prefix("tasks=")?.parse().ok()?;
        Some((tag, n))
    })
}

/// The task each tool call was for, and the calls whose results came back: `(task, call id)`.
pub fn results(messages: &[Value], tag: &str) -> BTreeSet<(u32, String)> {
    let marker = format!("soak-{tag}-task-");
    let mut calls = BTreeMap::new();
    let mut out = BTreeSet::new();
    for m in messages {
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            let args = call["function"]["arguments"].as_str().unwrap_or_default();
            if let Some(i) = args.find(&marker) {
                let digits: String = args[i + marker.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let (Ok(k), Some(id)) = (digits.parse::<u32>(), call["id"].as_str()) {
                    calls.insert(id.to_string(), k);
                }
            }
        }
        if m["role"] == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or_default();
            let text = text_of(m).to_lowercase();
            if let Some(k) = calls.get(id)
                && !text.contains("aborted")
            {
                out.insert((*k, id.to_string()));
            }
        }
    }
    out
}

/// Tasks a compaction summary says were done (`done: 1,2,5`).
fn summarized(messages: &[Value], tag: &str) -> BTreeSet<u32> {
    let marker = format!("SOAK {tag} done:");
    messages
        .iter()
        .flat_map(|m| {
            let text = text_of(m);
            text.find(&marker)
                .map(|i| {
                    text[i + marker.len()..]
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .filter_map(|w| w.parse().ok())
                        .collect::<Vec<u32>>()
                })
                .unwrap_or_default()
        })
        .collect()
}

/// The model's answer to a request (`None`: not a soak conversation).
pub fn answer(board: &Shared, body: &Value, summary: bool) -> Option<Step> {
    let messages = body["messages"].as_array()?;
    let (tag, n) = whose(messages)?;
    let mut done: BTreeSet<u32> = results(messages, &tag).into_iter().map(|(k, _)| k).collect();
    done.extend(summarized(messages, &tag));
    let mut b = board.lock().unwrap_or_else(|p| p.into_inner());
    let seen = b.seen.entry(tag.clone()).or_default();
    let moved = done.iter().any(|k| !seen.contains(k));
    seen.extend(done.iter().copied());
    if moved {
        b.progress.entry(tag.clone()).or_default().push(Instant::now());
    }
    if summary {
        let list: Vec<String> = done.iter().map(u32::to_string).collect();
        return Some(Step::text(format!(
            "SOAK {tag} tasks={n} — SOAK {tag} done: {}",
            list.join(",")
        )));
    }
    if let Some(fault) = b.pending.get_mut(&tag) {
        let step = match fault {
            Pending::Stall => Step::stall("", 1000),
            Pending::Error { status, reset_s, .. } => {
                let wait = reset_s
                    .map(|s| format!(" Please try again in {s}s."))
                    .unwrap_or_default();
                let kind = if *status == 429 {
                    "Rate limit reached"
                } else {
                    "Overloaded"
                };
                Step::error(*status, format!("{kind} for this model.{wait}"))
            }
        };
        let over = match fault {
            Pending::Stall => true,
            Pending::Error { left, .. } => {
                *left = left.saturating_sub(1);
                *left == 0
            }
        };
        if over {
            b.pending.remove(&tag);
        }
        return Some(step);
    }
    let Some(next) = (1..=n).find(|k| !done.contains(k)) else {
        b.finished.insert(tag.clone());
        return Some(Step::text(format!("SOAK {tag}: all {n} tasks are done.")));
    };
    b.delay = (b.delay * 7 + 13) % 3_000;
    let delay = 1_500 + b.delay;
    Some(Step::bash(format!("echo soak-{tag}-task-{next} >> done.log")).with_delay_ms(delay))
}

/// What the model's log says of each session's tasks: lost (never done), doubled (done by more than
/// one call), and prompts that reached it more than once.
pub struct Verdict {
    pub done: usize,
    pub lost: Vec<String>,
    pub doubled: Vec<String>,
    pub prompts_doubled: Vec<String>,
}

pub fn verdict(requests: &[RecordedRequest], sessions: &[(String, u32)]) -> Verdict {
    let mut calls: BTreeMap<(String, u32), BTreeSet<String>> = BTreeMap::new();
    let mut prompts_doubled = BTreeSet::new();
    for r in requests {
        let Some(messages) = r.body["messages"].as_array() else {
            continue;
        };
        let Some((tag, _)) = whose(messages) else { continue };
        for (k, id) in results(messages, &tag) {
            calls.entry((tag.clone(), k)).or_default().insert(id);
        }
        let prompt = format!("SOAK {tag} tasks=");
        let copies = messages
            .iter()
            .filter(|m| m["role"] == "user" && text_of(m).starts_with(&prompt))
            .count();
        if copies > 1 {
            prompts_doubled.insert(tag);
        }
    }
    let mut v = Verdict {
        done: 0,
        lost: Vec::new(),
        doubled: Vec::new(),
        prompts_doubled: prompts_doubled.into_iter().collect(),
    };
    for (tag, n) in sessions {
        for k in 1..=*n {
            match calls.get(&(tag.clone(), k)).map_or(0, BTreeSet::len) {
                0 => v.lost.push(format!("{tag} task {k}")),
                1 => v.done += 1,
                c => v.doubled.push(format!("{tag} task {k} ({c} calls)")),
            }
        }
    }
    v
}
