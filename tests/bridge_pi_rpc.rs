//! The bridge extension inside real pi 1.6.0 in rpc mode, against the project's scripted model
//! server: handoff compactions, and the runtime pi replaces on `/new` and on a resume. The set-up
//! is the one of `bridge_pi.rs` (tests/support/bridge.rs).

mod support;

use std::path::{Path, PathBuf};

use pokeshell::pi::bridge::BridgeEvent;
use pokeshell_core::bridge::{
    Command, CompactReason, CompactRequest, HandoffOutcome, NotifyLevel, PiEvent, SessionReason, ToolReply,
};
use serde_json::{Value, json};
use support::Step;
use support::bridge::*;

const HANDOFF_DOC: &str = "## Goal\nFinish the parser.\n\n## Next Steps\n1. Run the parser tests.";

/// A compaction pokeshell asks for with the handoff flag is
/// written by the active model as a handoff document, framed as working memory, saved next to the
/// session file, and reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_compaction_writes_and_saves_the_document() {
    let answer = || Step::text("Answer with some words about the parser work.");
    let model = scripted([answer(), answer(), Step::text(HANDOFF_DOC), answer()]);
    let pi = Pi::new(&model);
    let (handle, mut events, _dir) = start_server();
    let mut rpc = Rpc::start(&pi, &handle.env());
    let hello = connected(&mut events).await;
    assert_eq!(hello.mode.as_deref(), Some("rpc"));
    prompt_and_settle(&mut rpc, &mut events, "first: write the parser").await;
    prompt_and_settle(&mut rpc, &mut events, "second: test the parser").await;

    let id = handle
        .send(Command::Compact(CompactRequest {
            custom_instructions: Some("the parser edge cases".into()),
            handoff: true,
            save: true,
        }))
        .unwrap();
    let (before, _) = until(&mut events, "session_before_compact", |e| match pi_event(e) {
        Some(PiEvent::SessionBeforeCompact(b)) => Some(b.clone()),
        _ => None,
    })
    .await;
    assert_eq!((before.reason, before.handoff), (CompactReason::Manual, true));
    let (report, _) = until(&mut events, "handoff", |e| match pi_event(e) {
        Some(PiEvent::Handoff(h)) => Some(h.clone()),
        _ => None,
    })
    .await;
    assert_eq!(report.outcome, HandoffOutcome::Written, "{report:?}");
    let path = PathBuf::from(report.path.clone().expect("saved path"));
    let (compact, _) = until(&mut events, "session_compact", |e| match pi_event(e) {
        Some(PiEvent::SessionCompact(c)) => Some(c.clone()),
        _ => None,
    })
    .await;
    assert!(compact.from_extension);
    let (result, _) = until(&mut events, "compact reply", |e| match e {
        BridgeEvent::Reply { id: i, result, .. } if *i == id => Some(result.clone()),
        _ => None,
    })
    .await;
    let result = result.expect("compaction succeeded");
    assert_eq!(result["handoff"]["outcome"], "written");

    // Saved next to the session file, named handoff-<timestamp>.md.
    let session_dir = Path::new(hello.session_file.as_deref().expect("a session file"))
        .parent()
        .unwrap()
        .to_owned();
    assert_eq!(path.parent().unwrap(), session_dir);
    let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        file_name.starts_with("handoff-") && file_name.ends_with(".md"),
        "{file_name}"
    );
    assert!(std::fs::read_to_string(&path).unwrap().starts_with(HANDOFF_DOC));

    // The model was asked with our instructions, the conversation and the focus line.
    let handoff = model
        .model_requests()
        .into_iter()
        .find(is_handoff_request)
        .expect("a handoff request");
    let handoff = request_text(&handoff);
    assert!(
        handoff.contains("<conversation>") && handoff.contains("first: write the parser"),
        "{handoff}"
    );
    assert!(handoff.contains("Additional focus: the parser edge cases"));

    // The next request carries the framed document as the summary.
    prompt_and_settle(&mut rpc, &mut events, "third: go on").await;
    assert_eq!(
        asked(&model),
        [
            "user: first: write the parser",
            "user: second: test the parser",
            "handoff",
            "user: third: go on"
        ]
    );
    let last = request_text(model.model_requests().last().unwrap());
    assert!(
        last.contains("<handoff>") && last.contains("Finish the parser."),
        "{last}"
    );
    assert!(last.contains("own working memory"));
}

/// When the model call for the document fails, the bridge returns nothing and pi writes its
/// default summary; the fallback and its reason are reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_falls_back_to_the_default_summary_when_the_model_fails() {
    let model = scripted([
        Step::text("Some answer."),
        Step::text("Some answer."),
        Step::error(400, "mock: no handoff today"),
    ]);
    // pi's own compaction: the history, then the prefix of the turn it splits.
    model.push_summary(Step::text("Default summary."));
    model.push_summary(Step::text("Default summary of the turn's start."));
    let pi = Pi::new(&model);
    let (handle, mut events, _dir) = start_server();
    let mut rpc = Rpc::start(&pi, &handle.env());
    connected(&mut events).await;
    prompt_and_settle(&mut rpc, &mut events, "one").await;
    prompt_and_settle(&mut rpc, &mut events, "two").await;

    let id = handle
        .send(Command::Compact(CompactRequest {
            custom_instructions: None,
            handoff: true,
            save: true,
        }))
        .unwrap();
    let (report, _) = until(&mut events, "handoff", |e| match pi_event(e) {
        Some(PiEvent::Handoff(h)) => Some(h.clone()),
        _ => None,
    })
    .await;
    assert_eq!(report.outcome, HandoffOutcome::Fallback);
    assert!(
        report
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("no handoff today"),
        "{report:?}"
    );
    assert_eq!(report.path, None);
    let (compact, _) = until(&mut events, "session_compact", |e| match pi_event(e) {
        Some(PiEvent::SessionCompact(c)) => Some(c.clone()),
        _ => None,
    })
    .await;
    assert!(!compact.from_extension);
    let (result, _) = until(&mut events, "compact reply", |e| match e {
        BridgeEvent::Reply { id: i, result, .. } if *i == id => Some(result.clone()),
        _ => None,
    })
    .await;
    assert_eq!(
        result.expect("the default compaction succeeded")["handoff"]["outcome"],
        "fallback"
    );
    assert_eq!(
        asked(&model),
        ["user: one", "user: two", "handoff", "summary", "summary"]
    );
    let saved: Vec<_> = std::fs::read_dir(pi.env.session_dir())
        .unwrap()
        .flatten()
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with("handoff-"))
        .collect();
    assert!(
        saved.is_empty(),
        "no document should be saved on fallback: {saved:?}"
    );
}

/// pi replaces the extension runtime on /new and on a resume: the old connection closes, a new instance
/// connects and announces the session, and session_start carries pokeshell's own persisted entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_replacement_reconnects_and_restores_own_entries() {
    let model = scripted([Step::text("ok")]);
    let pi = Pi::new(&model);
    let (handle, mut events, _dir) = start_server();
    let mut rpc = Rpc::start(&pi, &handle.env());
    let first = connected(&mut events).await;
    prompt_and_settle(&mut rpc, &mut events, "make the session file exist").await;

    let wakeup = json!({"id": "w1", "fireAtMs": 1234});
    let own = Command::AppendEntry {
        custom_type: "pokeshell-wakeup".into(),
        data: wakeup.clone(),
    };
    call(&handle, &mut events, own).await.unwrap();
    let other = Command::AppendEntry {
        custom_type: "other-extension".into(),
        data: json!(1),
    };
    call(&handle, &mut events, other).await.unwrap();
    let listed = Command::GetEntries {
        custom_type_prefix: Some("pokeshell".into()),
        scope: pokeshell_core::bridge::EntryScope::Branch,
        limit: None,
    };
    let listed = call(&handle, &mut events, listed).await.unwrap();
    assert_eq!(listed["entries"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["entries"][0]["data"], wakeup);

    rpc.send(json!({"type": "new_session"}));
    let (reason, _) = until(&mut events, "session_shutdown", |e| match pi_event(e) {
        Some(PiEvent::SessionShutdown(s)) => Some(s.reason),
        _ => None,
    })
    .await;
    assert_eq!(reason, SessionReason::New);
    let (second, skipped) = until(&mut events, "Connected", |e| match e {
        BridgeEvent::Connected { hello, .. } => Some(hello.clone()),
        _ => None,
    })
    .await;
    assert!(
        skipped
            .iter()
            .any(|e| matches!(e, BridgeEvent::Disconnected { .. })),
        "{skipped:?}"
    );
    assert_ne!(first.instance, second.instance);
    assert_ne!(first.session_id, second.session_id);
    let (start, _) = until(&mut events, "session_start", |e| match pi_event(e) {
        Some(PiEvent::SessionStart(s)) => Some(s.clone()),
        _ => None,
    })
    .await;
    assert_eq!(start.reason, SessionReason::New);
    assert!(start.custom_entries.is_empty(), "{:?}", start.custom_entries);
    let idle = call(&handle, &mut events, Command::IsIdle).await.unwrap();
    assert_eq!(idle["idle"], json!(true));
    let usage = call(&handle, &mut events, Command::ContextUsage).await.unwrap();
    assert_eq!(usage["usage"]["contextWindow"], json!(128000), "{usage}");
    assert!(call(&handle, &mut events, Command::Abort).await.is_ok());
    let notify = Command::Notify {
        message: "hello from pokeshell".into(),
        level: NotifyLevel::Info,
    };
    assert_eq!(
        call(&handle, &mut events, notify).await.unwrap(),
        json!({"shown": true})
    );
    // Bad commands get error replies; the bridge keeps working.
    let stray = Command::ToolReply(ToolReply {
        call_id: "nope".into(),
        text: "x".into(),
        is_error: false,
        details: None,
    });
    let error = call(&handle, &mut events, stray).await.unwrap_err();
    assert!(error.contains("no tool call nope"), "{error}");
    let empty = Command::AppendEntry {
        custom_type: String::new(),
        data: Value::Null,
    };
    assert!(
        call(&handle, &mut events, empty)
            .await
            .unwrap_err()
            .contains("customType")
    );

    let first_file = first.session_file.clone().expect("a session file");
    rpc.send(json!({"type": "switch_session", "sessionPath": first_file}));
    let (start, _) = until(
        &mut events,
        "session_start after the resume",
        |e| match pi_event(e) {
            Some(PiEvent::SessionStart(s)) => Some(s.clone()),
            _ => None,
        },
    )
    .await;
    assert_eq!(start.reason, SessionReason::Resume);
    assert_eq!(start.session_id, first.session_id);
    let restored: Vec<_> = start
        .custom_entries
        .iter()
        .map(|e| (e.custom_type.as_str(), e.data.clone()))
        .collect();
    assert_eq!(restored, vec![("pokeshell-wakeup", wakeup)]);
}

/// The file lists in a handoff summary are cumulative. The second handoff no longer sees the
/// first step's write in the messages it summarizes; the file still appears because the bridge merges
/// the previous compaction's lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_file_lists_accumulate_across_compactions() {
    let handoff = || Step::text(HANDOFF_DOC);
    let model = scripted([
        Step::tool("write", json!({"path": "notes.txt", "content": "first notes\n"})),
        Step::text("Step finished."),
        Step::tool("read", json!({"path": "spec.md"})),
        Step::text("Step finished."),
        Step::text("ok"),
        handoff(),
        Step::tool("write", json!({"path": "other.txt", "content": "more\n"})),
        Step::text("Step finished."),
        Step::text("ok"),
        handoff(),
        Step::text("ok"),
    ]);
    let pi = Pi::new(&model);
    std::fs::write(pi.env.work_dir().join("spec.md"), "# spec\n").unwrap();
    let (handle, mut events, _dir) = start_server();
    let mut rpc = Rpc::start(&pi, &handle.env());
    connected(&mut events).await;
    prompt_and_settle(&mut rpc, &mut events, "step-one").await;
    prompt_and_settle(&mut rpc, &mut events, "step-two").await;
    prompt_and_settle(&mut rpc, &mut events, "filler").await;
    let handoff = || {
        Command::Compact(CompactRequest {
            custom_instructions: None,
            handoff: true,
            save: false,
        })
    };
    let first = call(&handle, &mut events, handoff())
        .await
        .expect("first handoff");
    assert_eq!(first["handoff"]["outcome"], "written", "{first}");
    assert_eq!(first["handoff"]["path"], Value::Null);

    prompt_and_settle(&mut rpc, &mut events, "step-three").await;
    prompt_and_settle(&mut rpc, &mut events, "filler again").await;
    let second = call(&handle, &mut events, handoff())
        .await
        .expect("second handoff");
    assert_eq!(second["handoff"]["outcome"], "written", "{second}");
    assert_eq!(second["handoff"]["modifiedFiles"], json!(2), "{second}");

    prompt_and_settle(&mut rpc, &mut events, "after").await;
    assert_eq!(
        asked(&model),
        [
            "user: step-one",
            "tool result",
            "user: step-two",
            "tool result",
            "user: filler",
            "handoff",
            "user: step-three",
            "tool result",
            "user: filler again",
            "handoff",
            "user: after"
        ]
    );
    let text = request_text(model.model_requests().last().unwrap()).replace("\\n", "\n");
    let modified = text
        .split("<modified-files>")
        .nth(1)
        .and_then(|s| s.split("</modified-files>").next());
    let modified = modified.expect("a modified-files block");
    assert!(
        modified.contains("notes.txt") && modified.contains("other.txt"),
        "{modified}"
    );
    let read = text
        .split("<read-files>")
        .nth(1)
        .and_then(|s| s.split("</read-files>").next());
    assert!(read.expect("a read-files block").contains("spec.md"), "{text}");
}
