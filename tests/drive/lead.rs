//! An agent drives agents, end to end on real pi against the scripted model, in one server: a lead
//! agent (its model scripted to do so) starts two workers in worktrees of their own, gives them
//! work, waits for them and reads both answers, first with the commands through its bash tool, then
//! through `pokeshell mcp` (added with `pi mcp add`). What it started and sent is in the ledger,
//! naming it. docs/driving.md. (A module of `tests/drive.rs`: one test binary for both.)

use std::process::Command;

use serde_json::{Value, json};

use crate::support::{self, Step, ToolCall};
use crate::world::{self, SLOW, World, said, stdout};

#[track_caller]
fn ok(out: &std::process::Output, what: &str) {
    assert!(out.status.success(), "{what}: {}", said(out));
}

/// The text of every tool result the model was given, in the order it got them.
fn tool_results(w: &World) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for request in w.model.chat_requests() {
        for m in request.messages().iter().filter(|m| m["role"] == "tool") {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                _ => String::new(),
            };
            if !out.contains(&text) {
                out.push(text);
            }
        }
    }
    out
}

/// Waits for the lead's run (its first prompt) to be over; its last reply.
#[track_caller]
fn lead_done(w: &World, lead: &str) -> String {
    let out = w.run(&["wait", lead, "--timeout", &SLOW.as_secs().to_string()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\nthe tool results: {:#?}",
        said(&out),
        tool_results(w)
    );
    stdout(&w.run(&["read", lead]))
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        name: format!("mcp__pokeshell__{name}"),
        arguments,
    }
}

#[test]
fn a_lead_agent_delegates_to_two_workers_through_the_commands_and_through_mcp() {
    let w = World::new(json!({}));
    let (tmp, repo) = world::repo();
    let p = world::exe();

    // Through the commands, in the lead's bash tool.
    w.model.push_all([
        Step::bash(format!(
            "{p} new -d --worktree feat/a && {p} new -d --worktree feat/b"
        )),
        Step::bash(format!(
            "{p} send feat/a 'Write the parser. [[text:A: the parser is done]]' && \
             {p} send feat/b 'Write the tests. [[text:B: the tests pass]]'"
        )),
        Step::bash(format!(
            "{p} wait feat/a && {p} wait feat/b && {p} read feat/a && {p} read feat/b"
        )),
        Step::text("Both workers finished."),
    ]);
    ok(
        &w.new_session(Some(&repo), "lead", &["Split the work in two."]),
        "new lead",
    );
    assert_eq!(lead_done(&w, "lead"), "Both workers finished.\n");
    let results = tool_results(&w);
    assert!(
        results
            .iter()
            .any(|r| r.contains("A: the parser is done\nB: the tests pass")),
        "the lead read both answers: {results:#?}"
    );
    let trees = tmp.path().join("app-worktrees");
    assert!(trees.join("feat/a/README").is_file() && trees.join("feat/b/README").is_file());
    let started = w.records("DRIVE-N1");
    assert_eq!(
        started,
        ["started by the agent of session lead"; 2],
        "{:?}",
        w.ledger()
    );
    let sent = w.records("DRIVE-S1");
    assert_eq!(sent.len(), 2, "{:?}", w.ledger());
    assert!(
        sent.iter()
            .all(|r| r.starts_with("a message from the agent of session lead"))
    );

    // Through MCP: another agent dir, with pokeshell's MCP server added the way the docs say.
    let mcp = World::pi_env(&w.home, &w.model, json!({}));
    let added = Command::new(support::pi::pi_path())
        .args(["mcp", "add", "pokeshell", "--exposure", "direct", "--", p, "mcp"])
        .env_clear()
        .envs(mcp.env_vars())
        .output()
        .expect("pi mcp add");
    assert!(added.status.success(), "pi mcp add: {added:?}");
    let dir = repo.to_string_lossy().into_owned();
    w.model.push_all([
        Step::tools(vec![
            call(
                "new_session",
                json!({"directory": dir, "worktree": "feat/c", "prompt": "Write the docs. [[text:C: the docs are written]]"}),
            ),
            call(
                "new_session",
                json!({"directory": dir, "worktree": "feat/d", "prompt": "Write the changelog. [[text:D: the changelog is written]]"}),
            ),
        ]),
        Step::tools(vec![
            call("wait_for", json!({"session": "feat/c", "timeout_seconds": 55})),
            call("wait_for", json!({"session": "feat/d", "timeout_seconds": 55})),
        ]),
        Step::tools(vec![
            call("read_reply", json!({"session": "feat/c"})),
            call("read_reply", json!({"session": "feat/d"})),
            call("send_message", json!({"session": "mcp-lead", "text": "hi"})),
        ]),
        Step::tools(vec![call("kill_session", json!({"session": "feat/c"}))]),
        Step::text("The MCP workers finished."),
    ]);
    ok(
        &w.new_session_env(&mcp, Some(&repo), "mcp-lead", &["Split the docs in two."]),
        "new mcp-lead",
    );
    assert_eq!(lead_done(&w, "mcp-lead"), "The MCP workers finished.\n");
    let results = tool_results(&w);
    for expected in [
        "C: the docs are written",
        "D: the changelog is written",
        "feat/c is idle",
        "mcp-lead cannot send a message to itself",
        "ending session",
    ] {
        assert!(
            results.iter().any(|r| r.contains(expected)),
            "no tool result with {expected:?}: {results:#?}"
        );
    }
    let started = w.records("DRIVE-N1");
    assert_eq!(started.len(), 4, "{:?}", w.ledger());
    assert!(
        started[2..]
            .iter()
            .all(|r| r == "started by the agent of session mcp-lead")
    );
    assert_eq!(w.records("DRIVE-K1"), ["ended by the agent of session mcp-lead"]);
}
