//! Real pi 1.6.0 against the scripted model: print and JSON modes for every step kind, the
//! compaction recipe of docs/pi-facts.md (Compactions), and pi's TUI in the PTY harness. Also the harness's
//! own guarantees (exit codes, isolated environment, nothing left running).

mod support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::pi::{PiEnv, RunOutput, submit_prompt, wait_for_tui};
use support::pty::Pty;
use support::{ModelServer, Scenario, Step, WAIT, model_server};

use pokeshell::demo::model::AnsweredBy;

/// Bound for one whole pi run without a terminal.
const RUN: Duration = Duration::from_secs(25);

fn json_run(env: &PiEnv, prompts: &[&str]) -> RunOutput {
    let mut args = vec!["--mode", "json"];
    args.extend_from_slice(prompts);
    env.run(&args, RUN)
}

/// Events of the given type.
fn events_of(out: &RunOutput, kind: &str) -> Vec<Value> {
    out.events().into_iter().filter(|e| e["type"] == kind).collect()
}

/// The final assistant messages (`message_end` with role assistant), in order.
fn assistant_messages(out: &RunOutput) -> Vec<Value> {
    events_of(out, "message_end")
        .into_iter()
        .map(|e| e["message"].clone())
        .filter(|m| m["role"] == "assistant")
        .collect()
}

/// Index of the first event matching `pred`; fails with the event list.
fn position(out: &RunOutput, what: &str, pred: impl Fn(&Value) -> bool) -> usize {
    out.events()
        .iter()
        .position(pred)
        .unwrap_or_else(|| panic!("no {what} event in:\n{:?}", out.event_types()))
}

fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Print and JSON modes

#[test]
fn print_mode_answer_and_request_carry_the_prompt() {
    let server = model_server();
    server.push(Step::text("Hello from the script"));
    let env = PiEnv::new(&server.base_url());
    let out = env.run(&["-p", "what is up"], RUN);
    assert_eq!(out.code, Some(0), "{out}");
    assert_eq!(out.stdout.trim(), "Hello from the script", "{out}");

    let reqs = server.wait_for_requests(1, WAIT).unwrap();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.last_user_text().as_deref(), Some("what is up"));
    assert!(
        req.system_text().is_some_and(|s| !s.is_empty()),
        "pi sends a system prompt first"
    );
    assert_eq!(req.model(), Some("mock-model"));
    assert_eq!(req.body["stream"], true);
    assert!(
        req.tool_names().contains(&"bash".to_string()),
        "{:?}",
        req.tool_names()
    );
    assert_eq!(req.header("authorization"), Some("Bearer dummy-not-a-key"));
}

#[test]
fn print_mode_directive_scripts_the_answer() {
    let server = model_server();
    server.push(Step::text("the queue must not be used"));
    let env = PiEnv::new(&server.base_url());
    let out = env.run(&["-p", "hello [[text:Hi from a directive]]"], RUN);
    assert_eq!(out.stdout.trim(), "Hi from a directive", "{out}");
    assert_eq!(server.requests()[0].answered_by, AnsweredBy::Directive);
    assert_eq!(server.pending(), (1, 0));
}

#[test]
fn json_tool_call_runs_bash_then_the_answer_follows() {
    let server = model_server();
    server.push_all([Step::bash("echo hi"), Step::text("the command said hi")]);
    let env = PiEnv::new(&server.base_url());
    let out = json_run(&env, &["run it"]);
    assert_eq!(out.code, Some(0), "{out}");

    let ends = events_of(&out, "tool_execution_end");
    assert_eq!(ends.len(), 1, "{:?}", out.event_types());
    assert_eq!(ends[0]["toolName"], "bash");
    assert_eq!(ends[0]["isError"], false);
    assert_eq!(ends[0]["result"]["content"][0]["text"], "hi\n");

    let reqs = server.wait_for_requests(2, WAIT).unwrap();
    assert_eq!(reqs.len(), 2);
    let results = reqs[1].tool_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_call_id"], "call_mock_1_0");
    assert!(results[0]["content"].to_string().contains("hi"), "{}", results[0]);

    let last = assistant_messages(&out).pop().unwrap();
    assert_eq!(last["stopReason"], "stop");
    assert_eq!(text_of(&last), "the command said hi");
}

#[test]
fn json_empty_reply_ends_the_run_with_no_content() {
    let server = model_server();
    server.push(Step::empty());
    let env = PiEnv::new(&server.base_url());
    let out = json_run(&env, &["say nothing"]);
    let msgs = assistant_messages(&out);
    assert_eq!(msgs.len(), 1, "{out}");
    assert_eq!(msgs[0]["stopReason"], "stop");
    assert_eq!(msgs[0]["content"], serde_json::json!([]));
    assert_eq!(events_of(&out, "agent_settled").len(), 1);
    assert_eq!(server.model_requests().len(), 1);
}

#[test]
fn json_thinking_only_reply_has_only_thinking_content() {
    let server = model_server();
    server.push(Step::thinking("pondering quietly"));
    let env = PiEnv::new(&server.base_url());
    let out = json_run(&env, &["think"]);
    let msgs = assistant_messages(&out);
    assert_eq!(msgs.len(), 1, "{out}");
    assert_eq!(msgs[0]["stopReason"], "stop");
    let content = msgs[0]["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{content:?}");
    assert_eq!(content[0]["type"], "thinking");
    assert_eq!(content[0]["thinking"], "pondering quietly");
}

#[test]
fn json_cut_stream_is_retried_by_pi() {
    let server = model_server();
    server.push_all([Step::cut("half an ans"), Step::text("whole answer")]);
    let env = PiEnv::new(&server.base_url());
    let out = json_run(&env, &["go"]);
    let retries = events_of(&out, "auto_retry_start");
    assert_eq!(retries.len(), 1, "{out}");
    assert_eq!(retries[0]["errorMessage"], "Stream ended without finish_reason");
    assert_eq!(events_of(&out, "auto_retry_end")[0]["success"], true);
    let msgs = assistant_messages(&out);
    assert_eq!(msgs[0]["stopReason"], "error");
    assert_eq!(text_of(&msgs[1]), "whole answer");
    assert_eq!(server.model_requests().len(), 2);
}

#[test]
fn json_abrupt_cut_is_a_socket_error_and_retried() {
    let server = model_server();
    server.push_all([Step::cut_abrupt("half"), Step::text("second try")]);
    let env = PiEnv::new(&server.base_url());
    let out = json_run(&env, &["go"]);
    let msgs = assistant_messages(&out);
    assert_eq!(msgs[0]["stopReason"], "error", "{out}");
    assert_ne!(msgs[0]["errorMessage"], "Stream ended without finish_reason");
    assert_eq!(events_of(&out, "auto_retry_start").len(), 1);
    assert_eq!(text_of(&msgs[1]), "second try");
}

#[test]
fn json_http_503_is_retried_once_then_reported_with_its_status() {
    let server = model_server();
    server.push_all([
        Step::error(503, "overloaded, try later"),
        Step::error(503, "still overloaded"),
    ]);
    let env = PiEnv::new(&server.base_url());
    let out = json_run(&env, &["go"]);
    assert_eq!(events_of(&out, "auto_retry_start").len(), 1, "{out}");
    let end = &events_of(&out, "auto_retry_end")[0];
    assert_eq!(end["success"], false);
    let msgs = assistant_messages(&out);
    assert_eq!(msgs.len(), 2);
    let last_error = msgs[1]["errorMessage"].as_str().unwrap();
    assert!(
        last_error.starts_with("503: ") && last_error.contains("still overloaded"),
        "{last_error}"
    );
    assert_eq!(server.model_requests().len(), 2);
}

#[test]
fn print_mode_http_400_is_final_and_exits_1() {
    let server = model_server();
    server.push(Step::error(400, "this request is refused"));
    let env = PiEnv::new(&server.base_url());
    let out = env.run(&["-p", "go"], RUN);
    assert_eq!(out.code, Some(1), "{out}");
    assert!(
        out.stderr.contains("400") && out.stderr.contains("this request is refused"),
        "{out}"
    );
    assert_eq!(server.model_requests().len(), 1, "a 400 is not retried");
}

#[test]
fn json_usage_tokens_reach_pi() {
    let server = model_server();
    server.push(
        Step::text("counted")
            .with_prompt_tokens(4321)
            .with_completion_tokens(12),
    );
    let env = PiEnv::new(&server.base_url());
    let out = json_run(&env, &["count"]);
    let msg = assistant_messages(&out).pop().expect("an assistant message");
    assert_eq!(msg["usage"]["input"], 4321, "{}", msg["usage"]);
    assert_eq!(msg["usage"]["output"], 12);
}

#[test]
fn json_hang_holds_pi_until_released() {
    let server = model_server();
    server.push(Step::hang_then("sorry for the wait"));
    let env = PiEnv::new(&server.base_url());
    let out = std::thread::scope(|s| {
        let run = s.spawn(|| json_run(&env, &["go"]));
        server.wait_for_hanging(1, WAIT).expect("pi's request is held");
        assert!(!run.is_finished(), "pi waits while the stream hangs");
        server.release_hangs();
        run.join().expect("the pi run")
    });
    let msg = assistant_messages(&out).pop().expect("an assistant message");
    assert_eq!(text_of(&msg), "sorry for the wait", "{out}");
}

/// The context-overflow error (docs/pi-facts.md): pi recognises it, compacts (reason "overflow") and
/// retries.
#[test]
fn json_overflow_is_recognised_compacted_and_retried() {
    let server = model_server();
    let long = "lorem ipsum dolor sit amet ".repeat(60);
    server.push_all([
        Step::text(long).with_prompt_tokens(2000),
        Step::overflow(),
        Step::text("recovered"),
    ]);
    let env = PiEnv::builder(&server.base_url()).model("mock/mock-tiny").build();
    let out = json_run(&env, &["first", "second"]);

    let overflow_msg = assistant_messages(&out)[1].clone();
    assert!(
        overflow_msg["errorMessage"]
            .as_str()
            .unwrap()
            .contains("context window"),
        "{out}"
    );
    let start = events_of(&out, "compaction_start");
    assert_eq!(start.len(), 1, "{:?}", out.event_types());
    assert_eq!(start[0]["reason"], "overflow");
    assert_eq!(text_of(assistant_messages(&out).last().unwrap()), "recovered");
    assert!(!server.summary_requests().is_empty());
    assert!(
        events_of(&out, "auto_retry_start").is_empty(),
        "overflow is not an ordinary retry"
    );
}

/// The stall of docs/pi-facts.md (Compactions): a tool call reports tokens past the threshold, pi
/// compacts after the tool batch, and the next request fails: the run ends with an error right after
/// the compaction.
#[test]
fn json_midrun_compaction_then_failing_request() {
    let server = model_server();
    let long = "lorem ipsum dolor sit amet ".repeat(60);
    server.push_all([
        Step::text(long.clone()).with_prompt_tokens(2000),
        Step::text(long).with_prompt_tokens(4000),
        Step::bash("echo hi").with_prompt_tokens(9000),
        Step::error(400, "request after compaction rejected"),
    ]);
    server.push_summary(Step::text("SUMMARY-MARKER: earlier turns"));
    let env = PiEnv::builder(&server.base_url()).model("mock/mock-tiny").build();
    let out = json_run(&env, &["--tools", "bash", "first", "second", "third"]);

    let tool_end = position(&out, "tool_execution_end", |e| e["type"] == "tool_execution_end");
    let compact_start = position(&out, "compaction_start", |e| e["type"] == "compaction_start");
    let compact_end = position(&out, "compaction_end", |e| e["type"] == "compaction_end");
    let failed = position(&out, "failed assistant message", |e| {
        e["type"] == "message_end" && e["message"]["stopReason"] == "error"
    });
    let settled = out
        .event_types()
        .iter()
        .rposition(|t| t == "agent_settled")
        .expect("agent_settled");
    assert!(
        tool_end < compact_start && compact_start < compact_end && compact_end < failed && failed < settled
    );
    let events = out.events();
    assert_eq!(events[compact_start]["reason"], "threshold");
    assert_eq!(events[compact_end]["aborted"], false);
    assert!(
        events[failed]["message"]["errorMessage"]
            .as_str()
            .unwrap()
            .contains("rejected")
    );

    let chats = server.chat_requests();
    let after = chats.last().unwrap();
    assert!(
        after.user_texts().iter().any(|t| t.contains("SUMMARY-MARKER")),
        "the request after compaction carries the summary: {:?}",
        after.user_texts()
    );
    assert_eq!(server.pending(), (0, 0));
}

/// The example of docs/scenario-format.md does what the doc says.
#[test]
fn documented_example_scenario_plays_the_compaction_stall() {
    let doc = include_str!("../docs/scenario-format.md");
    let start = doc.find("```json\n").unwrap() + "```json\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let server = ModelServer::with_scenario(Scenario::from_json(&doc[start..end]).unwrap()).unwrap();
    let env = PiEnv::builder(&server.base_url()).model("mock/mock-tiny").build();
    let out = json_run(&env, &["build it", "go on"]);
    let compact_end = position(&out, "compaction_end", |e| e["type"] == "compaction_end");
    let failed = position(&out, "failed assistant message", |e| {
        e["type"] == "message_end" && e["message"]["stopReason"] == "error"
    });
    assert!(compact_end < failed);
    let answered_by: Vec<AnsweredBy> = server.requests().iter().map(|r| r.answered_by).collect();
    use AnsweredBy::*;
    assert_eq!(answered_by, [Queue, Queue, SummaryQueue, Default, Queue]);
}

// ---------------------------------------------------------------------------------------------
// pi's TUI in the PTY harness

#[test]
fn tui_shows_editor_and_footer() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let pty = Pty::spawn(env.pty_command(&[]), 30, 100);
    wait_for_tui(&pty, WAIT);
    let rows: Vec<String> = pty.with_screen(|s| s.rows(0, 100).collect());
    let footer = &rows[29];
    assert!(
        footer.contains("/128k") && footer.contains("mock-model"),
        "{}",
        pty.dump()
    );
    let rules = rows
        .iter()
        .filter(|r| r.chars().count() == 100 && r.chars().all(|c| c == '─'))
        .count();
    assert_eq!(
        rules,
        2,
        "the editor is framed by two full-width rules\n{}",
        pty.dump()
    );
    assert!(
        rows.iter()
            .any(|r| r.contains(&*env.work_dir().to_string_lossy())),
        "{}",
        pty.dump()
    );
}

#[test]
fn tui_prompt_and_enter_bring_the_scripted_answer() {
    let server = model_server();
    server.push(Step::text("An answer from the scripted model"));
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn(env.pty_command(&[]), 30, 100);
    submit_prompt(&mut pty, &server, "hello there pi", WAIT);
    pty.wait_for_text("An answer from the scripted model", WAIT);
    assert_eq!(server.last_user_text().as_deref(), Some("hello there pi"));
    pty.signal(libc::SIGTERM);
    assert_eq!(pty.wait_exit(WAIT), 0, "pi quits cleanly on SIGTERM");
}

#[test]
fn tui_relays_after_a_resize() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn(env.pty_command(&[]), 30, 100);
    wait_for_tui(&pty, WAIT);
    pty.resize(24, 80);
    pty.wait_until("footer on row 24 and 80-column rules", WAIT, |s| {
        let rows: Vec<String> = s.rows(0, 80).collect();
        rows[23].contains("mock-model")
            && rows
                .iter()
                .filter(|r| r.chars().count() == 80 && r.chars().all(|c| c == '─'))
                .count()
                == 2
    });
}

#[test]
fn tui_escape_abandons_a_hanging_stream() {
    let server = model_server();
    server.push(Step::hang());
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn(env.pty_command(&[]), 30, 100);
    submit_prompt(&mut pty, &server, "wait for me", WAIT);
    server.wait_for_hanging(1, WAIT).expect("the stream hangs");
    pty.send("\x1b");
    server
        .wait_for_hanging(0, WAIT)
        .expect("pi drops the connection on Escape");
    pty.wait_for_text("aborted", WAIT);
}

// ---------------------------------------------------------------------------------------------
// The harness itself

#[test]
fn pty_reports_exit_codes_and_signal_deaths() {
    let mut exit7 = portable_pty::CommandBuilder::new("sh");
    exit7.args(["-c", "exit 7"]);
    assert_eq!(Pty::spawn(exit7, 10, 40).wait_exit(WAIT), 7);
    let mut killed = portable_pty::CommandBuilder::new("sh");
    killed.args(["-c", "kill -TERM $$"]);
    assert_eq!(Pty::spawn(killed, 10, 40).wait_exit(WAIT), 128 + libc::SIGTERM);
}

#[test]
fn pty_child_environment_is_isolated() {
    let env = PiEnv::builder("http://127.0.0.1:9/v1")
        .env("EXTRA_FOR_TEST", "1")
        .build();
    let mut cmd = portable_pty::CommandBuilder::new("sh");
    cmd.args(["-c", "env; echo END-OF-ENV"]);
    env.apply(&mut cmd);
    let mut pty = Pty::spawn(cmd, 50, 200);
    pty.wait_exit(WAIT);
    let text = String::from_utf8_lossy(&pty.raw_output()).replace('\r', "");
    assert!(text.contains("END-OF-ENV"), "{text}");
    let vars: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('=')).collect();
    let get = |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    assert_eq!(get("TERM"), Some("xterm-256color"));
    assert_eq!(get("PI_OFFLINE"), Some("1"));
    assert_eq!(get("PI_SKIP_VERSION_CHECK"), Some("1"));
    assert_eq!(get("PI_TELEMETRY"), Some("0"));
    assert_eq!(
        get("PI_CODING_AGENT_DIR"),
        Some(&*env.agent_dir().to_string_lossy())
    );
    assert_eq!(get("EXTRA_FOR_TEST"), Some("1"));
    assert_ne!(
        get("HOME"),
        std::env::var("HOME").ok().as_deref(),
        "HOME is private to the test"
    );
    let allowed = [
        "PATH",
        "TMPDIR",
        "USER",
        "LOGNAME",
        "SHELL",
        "HOME",
        "TERM",
        "LANG",
        "PI_CODING_AGENT_DIR",
        "PI_OFFLINE",
        "PI_SKIP_VERSION_CHECK",
        "PI_TELEMETRY",
        "EXTRA_FOR_TEST",
        // set by sh itself
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
    ];
    let unexpected: Vec<&str> = vars
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !allowed.contains(k))
        .collect();
    assert!(
        unexpected.is_empty(),
        "inherited variables reach pi: {unexpected:?}"
    );
    let settings = env.settings();
    assert_eq!(settings["quietStartup"], true);
    assert_eq!(settings["fullscreenExitOutput"], "resume-hint");
    assert!(
        !env.work_dir().join(".pi").exists(),
        "no .pi/ in the work dir (trust dialog)"
    );
}

#[test]
fn pty_drop_kills_the_whole_process_group() {
    let mut cmd = portable_pty::CommandBuilder::new("sh");
    cmd.args(["-c", "sleep 60 & echo BG=$!; wait"]);
    let pty = Pty::spawn(cmd, 10, 40);
    pty.wait_for_text("BG=", WAIT);
    let mut bg: Option<i32> = None;
    pty.wait_until("the background pid", WAIT, |s| {
        bg = s
            .contents()
            .split("BG=")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok());
        bg.is_some()
    });
    let (bg, leader) = (bg.unwrap(), pty.pid() as i32);
    drop(pty);
    let deadline = Instant::now() + WAIT;
    for pid in [leader, bg] {
        while alive(pid) {
            assert!(Instant::now() < deadline, "process {pid} survived the harness");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// True while `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
