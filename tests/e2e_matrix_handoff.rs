//! The stall matrix, handoff: a settle with the context at or
//! above `handoff.percent` compacts with a handoff document the model writes; the document is saved
//! next to the session file and becomes the summary the model works from. When the model call for
//! the document fails, pi's own summary is used. Real pi 1.6.0 inside pokeshell, mock-tiny's 16k window.

mod support;

use std::path::{Path, PathBuf};

use serde_json::json;
use support::matrix::{Matrix, long_text};
use support::{Step, model_server};

const DOCUMENT: &str = "## Goal\nShip the parser rewrite.\n\n## Progress\n### Done\n- [x] Tokenizer \
                        (MARKER-HANDOFF-DOC)\n\n## Next Steps\n1. Wire the parser into main.";
const PI_SUMMARY: &str = "## Goal\nShip the parser rewrite (MARKER-PI-SUMMARY).";

/// Two exchanges; the second answer reports 6000 of 16000 tokens (37.5 %), past a 30 % limit and
/// below pi's own compaction threshold (8000).
fn start_full_context(server: support::ModelServer) -> Matrix {
    server.push_all([
        Step::text(long_text("Notes", 1600)).with_prompt_tokens(2000),
        Step::text(long_text("Plan", 1600)).with_prompt_tokens(6000),
    ]);
    let mut m = Matrix::builder()
        .tiny()
        .settings(json!({"handoff": {"percent": 30}}))
        .start(server);
    m.submit("take some notes");
    m.wait_text("line 3 of the scripted notes");
    m.submit("make a plan");
    m
}

fn handoff_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("handoff-") && n.ends_with(".md"))
            {
                found.push(path);
            }
        }
    }
    found
}

fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn ho_t1_context_past_the_percent_hands_off_with_a_saved_document_used_as_the_summary() {
    let server = model_server();
    let mut m = start_full_context(server);
    // The bridge asks the model for the document: the next queued answer.
    m.server.push(Step::text(DOCUMENT));
    m.wait_record(
        "HO-T1",
        "action",
        "(limit 30%): compacting with a handoff document",
    );
    m.wait_record("HO-T1", "outcome", "the handoff compaction finished");
    m.wait_side("compacting with a handoff document");
    let asked = m
        .chat()
        .iter()
        .any(|r| r.system_text().is_some_and(|t| t.contains("handoff document")));
    assert!(asked, "the model was asked for the handoff document");

    let files = handoff_files(m.env.session_dir());
    assert_eq!(files.len(), 1, "one handoff document saved: {files:?}");
    let saved = std::fs::read_to_string(&files[0]).unwrap_or_default();
    assert!(saved.contains("MARKER-HANDOFF-DOC"), "{saved}");
    let sessions = session_files(m.env.session_dir());
    assert!(
        sessions.iter().any(|s| s.parent() == files[0].parent()),
        "saved next to the session file: {files:?} vs {sessions:?}"
    );

    // The next request works from the handoff.
    m.server.push(Step::text("Wiring the parser in now."));
    m.submit("carry on");
    m.wait_text("Wiring the parser in now.");
    let last = m.chat().pop().expect("a request");
    let context = last.body["messages"].to_string();
    assert!(
        context.contains("MARKER-HANDOFF-DOC"),
        "the summary is the document: {context}"
    );
    assert!(context.contains("<handoff>"), "{context}");
    assert!(
        m.server.summary_requests().is_empty(),
        "pi's own summary was not needed"
    );
}

#[test]
fn ho_g3_a_failing_handoff_model_call_falls_back_to_pis_own_summary() {
    let server = model_server();
    server.push_summary(Step::text(PI_SUMMARY));
    server.set_default_summary(Step::text(PI_SUMMARY));
    let mut m = start_full_context(server);
    m.server.push(Step::error(400, "no handoff today"));
    m.wait_footer("handoff fell back to pi's own summary");
    m.wait_record("HO-T1", "outcome", "the handoff compaction finished");
    assert!(
        !m.server.summary_requests().is_empty(),
        "pi wrote its own summary"
    );
    assert!(
        handoff_files(m.env.session_dir()).is_empty(),
        "no document was saved"
    );

    m.server.push(Step::text("Continuing from pi's summary."));
    m.submit("carry on");
    m.wait_text("Continuing from pi's summary.");
    let last = m.chat().pop().expect("a request");
    let context = last.body["messages"].to_string();
    assert!(context.contains("MARKER-PI-SUMMARY"), "{context}");
    assert!(!context.contains("<handoff>"), "{context}");
}
