//! The watch and the relaunch command line.
use super::*;

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_new_session_in_pi_moves_the_file_a_relaunch_resumes() {
    let mut w = Watch::default();
    w.session_started(Some("/s/one.jsonl"));
    assert_eq!(w.session_file.as_deref(), Some("/s/one.jsonl"));
    w.session_started(Some("/s/two.jsonl"));
    assert_eq!(w.session_file.as_deref(), Some("/s/two.jsonl"));
    w.session_started(None);
    assert_eq!(
        w.session_file.as_deref(),
        Some("/s/two.jsonl"),
        "an in-memory session keeps the last file"
    );
}

#[test]
fn a_relaunch_keeps_options_and_drops_sessions_and_messages() {
    let args = strings(&[
        "-e",
        "/b/bridge.ts",
        "--model",
        "m",
        "-c",
        "--session",
        "/old.jsonl",
        "--thinking",
        "high",
        "fix the bug",
        "@notes.md",
        "--verbose",
        "--fork=/x",
        "-r",
    ]);
    assert_eq!(
        relaunch_args(&args, "/s.jsonl"),
        strings(&[
            "-e",
            "/b/bridge.ts",
            "--model",
            "m",
            "--thinking",
            "high",
            "--verbose",
            "--session",
            "/s.jsonl"
        ])
    );
}

#[test]
fn time_away_is_not_silence() {
    let mut w = Watch::default();
    let at = |ms| Now::new(ms, ms);
    w.child_started(at(0));
    w.heartbeats = true;
    assert_eq!(w.due(4000, at(3999)), None);
    w.away(10_000, at(12_000));
    assert_eq!(w.due(4000, at(12_000)), None, "the away time is not counted");
    // pi may have been blocked on a terminal nobody read: the whole limit starts again.
    assert_eq!(w.due(4000, at(15_999)), None);
    assert_eq!(
        w.due(4000, at(16_000)),
        Some(RestartCause::Frozen { silent_ms: 4000 })
    );
}
