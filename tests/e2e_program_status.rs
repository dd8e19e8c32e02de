//! pi's program-status reports (OSC 7501) with real pi 1.6.0 in a PTY: answered by pokeshell's
//! mirror, pi reports `working` while it runs and `done` once it settled; the mirror reads every
//! report; pokeshell passes them on to a host terminal that asked for them, and only to such a host.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use pokeshell::term::screen::{HostCaps, Mirror, ProgramState, ProgramStatus};
use support::pi::{PiEnv, submit_prompt};
use support::pty::Pty;
use support::shell::{quit, submit, wait_ready};
use support::{START_WAIT, Step, WAIT, model_server};

const REPORT: &[u8] = b"\x1b]7501;state=";

/// The bodies of every OSC 7501 report in `raw`, in order (`state=...`, up to the terminator).
fn reports(raw: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = raw;
    while let Some(at) = find(rest, REPORT) {
        let body = &rest[at + b"\x1b]7501;".len()..];
        let end = body
            .iter()
            .position(|b| *b == 0x1b || *b == 0x07)
            .unwrap_or(body.len());
        out.push(body[..end].to_vec());
        rest = &body[end..];
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn states(raw: &[u8]) -> Vec<String> {
    reports(raw)
        .iter()
        .map(|body| {
            let text = String::from_utf8_lossy(body);
            text.trim_start_matches("state=")
                .split(':')
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// Waits until the states reported so far (in `raw`) hold `working` and, after it, `done`.
fn wait_for_working_then_done(pty: &Pty, what: &str) -> Vec<String> {
    let deadline = Instant::now() + WAIT;
    loop {
        let raw = pty.raw_output();
        let seen = states(&raw);
        if let Some(w) = seen.iter().position(|s| s == "working")
            && seen[w..].iter().any(|s| s == "done")
        {
            return seen;
        }
        let now = Instant::now();
        if now >= deadline {
            pty.fail(&format!(
                "{what}: no working then done report; states seen: {seen:?}"
            ));
        }
        pty.wait_for_output(raw.len(), deadline - now);
    }
}

#[test]
fn pi_reports_its_state_once_the_mirror_answered_its_query() {
    let server = model_server();
    server.push(Step::slow(4, 200, "w "));
    let env = PiEnv::new(&server.base_url());
    let mirror = Arc::new(Mutex::new(Mirror::new(30, 100, HostCaps::default())));
    let answering = Arc::clone(&mirror);
    let mut pty = Pty::spawn_answering(env.pty_command(&[]), 30, 100, move |chunk| {
        let mut m = answering.lock().unwrap_or_else(|p| p.into_inner());
        m.process(chunk);
        m.take_replies()
    });
    submit_prompt(&mut pty, &server, "hello", WAIT);
    let seen = wait_for_working_then_done(&pty, "pi behind the mirror");

    // The mirror read the same reports, the last one as pi wrote it.
    let raw = pty.raw_output();
    let mut m = mirror.lock().unwrap_or_else(|p| p.into_inner());
    assert_eq!(m.program_status_seq(), seen.len() as u64, "states: {seen:?}");
    let last = m.program_status().cloned();
    assert!(
        matches!(
            &last,
            Some(ProgramStatus { state: ProgramState::Done, app: Some(app), .. }) if app == "pi"
        ),
        "{last:?}"
    );
    assert!(
        find(&m.take_host_output(), b"7501").is_none(),
        "a host that never asked gets no report"
    );

    // Replaying the recorded bytes into a fresh mirror gives the same reading.
    let mut replay = Mirror::new(30, 100, HostCaps::default());
    replay.process(&raw);
    assert_eq!(replay.program_status_seq(), m.program_status_seq());
    assert_eq!(replay.program_status(), m.program_status());
}

#[test]
fn pi_sends_no_report_when_nobody_answers_its_query() {
    let server = model_server();
    server.push(Step::slow(3, 200, "w "));
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn(env.pty_command(&[]), 30, 100);
    submit_prompt(&mut pty, &server, "hello", START_WAIT);
    pty.wait_for_text("w w w", WAIT);
    let raw = pty.raw_output();
    assert!(find(&raw, b"\x1b]7501;?").is_some(), "pi asked");
    assert_eq!(states(&raw), Vec::<String>::new());
}

/// A host that reads program-status reports: it answers that query and DA1, nothing else.
fn status_host(chunk: &[u8]) -> Vec<u8> {
    let mut reply = Vec::new();
    if find(chunk, b"\x1b]7501;?").is_some() {
        reply.extend_from_slice(b"\x1b]7501;?\x1b\\");
    }
    if find(chunk, b"\x1b[c").is_some() {
        reply.extend_from_slice(b"\x1b[?62;22c");
    }
    reply
}

#[test]
fn pokeshell_passes_pis_reports_to_a_host_that_asked_for_them() {
    let server = model_server();
    server.push(Step::slow(4, 200, "w "));
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn_answering(env.pokeshell_command(&[], &[]), 40, 140, status_host);
    wait_ready(&pty);
    submit(&mut pty, &server, "hello");
    let seen = wait_for_working_then_done(&pty, "pokeshell on a host that reads reports");
    assert!(
        seen.iter()
            .all(|s| ["working", "done", "idle", "clear"].contains(&s.as_str())),
        "{seen:?}"
    );
    assert_eq!(quit(&mut pty), 0);
    let all = states(&pty.raw_output());
    assert_eq!(
        all.last().map(String::as_str),
        Some("clear"),
        "pi withdraws its status as it stops: {all:?}"
    );
}

#[test]
fn pokeshell_keeps_pis_reports_from_a_host_that_did_not_ask() {
    let server = model_server();
    server.push(Step::slow(3, 200, "w "));
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn(env.pokeshell_command(&[], &[]), 40, 140);
    wait_ready(&pty);
    submit(&mut pty, &server, "hello");
    pty.wait_for_text("w w w", WAIT);
    // After the session ended every report pi ever wrote (its last, `clear`, as it stops) is past.
    assert_eq!(quit(&mut pty), 0);
    assert_eq!(states(&pty.raw_output()), Vec::<String>::new());
}

/// pi hosted without the bridge (`--command`): the side pane and the footer show pi's state from its
/// own reports, and the status overlay names that source.
#[test]
fn without_the_bridge_the_side_pane_and_footer_show_pis_own_reports() {
    use support::shell::{footer, side};
    let server = model_server();
    server.push(Step::slow(12, 250, "w "));
    let env = PiEnv::new(&server.base_url());
    let line = std::iter::once(env.pi().to_string_lossy().into_owned())
        .chain(env.pi_args(&[]))
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let Some(exe) = option_env!("CARGO_BIN_EXE_pokeshell") else {
        panic!("cargo builds pokeshell for integration tests");
    };
    let mut cmd = portable_pty::CommandBuilder::new(exe);
    cmd.args(["--command", &line]);
    env.apply(&mut cmd);
    let mut pty = Pty::spawn(cmd, 40, 140);
    pty.wait_for_text("mock-", WAIT);
    submit(&mut pty, &server, "hello");
    pty.wait_until("pi's own 'working' in the side pane and footer", WAIT, |s| {
        side(s).contains("● working (pi's report)") && footer(s).contains("pi: working")
    });
    pty.send("\x1di");
    pty.wait_for_text("pi's status reports (OSC 7501)", WAIT);
    pty.send("q");
    pty.wait_until("pi's own 'done' once it settled", WAIT, |s| {
        side(s).contains("● done (pi's report)")
    });
    assert_eq!(quit(&mut pty), 0);
}
