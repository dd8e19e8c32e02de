//! What the terminal around pokeshell is told: pi's reports merged with pokeshell's own knowledge,
//! as `StatusReport` effects, and the window title as the `windowTitle` setting allows.

use serde_json::json;

use super::restart_tests::{at, event, pi, tick};
use super::*;
use crate::config::{Change, KeyId, SettingValue};
use crate::screen::program_status::{Osc7501, parse};
use crate::screen::{ProgramState, ProgramStatus};
use crate::spec::SessionSpec;

/// The reports among `fx`, decoded.
fn reports(fx: &[Effect]) -> Vec<ProgramStatus> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::StatusReport(bytes) => {
                let body = bytes.strip_prefix(b"\x1b]7501;")?.strip_suffix(b"\x1b\\")?;
                match parse(body) {
                    Osc7501::Report(r) => Some(r),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

fn titles(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::ToHost(b) => {
                let text = String::from_utf8_lossy(b);
                Some(text.strip_prefix("\x1b]2;")?.strip_suffix('\x07')?.to_string())
            }
            _ => None,
        })
        .collect()
}

fn report(state: ProgramState, msg: &str) -> ProgramStatus {
    ProgramStatus {
        state,
        app: Some("pi".into()),
        kind: None,
        msg: Some(msg.into()),
    }
}

#[test]
fn pis_own_reports_go_up_unchanged_and_once() {
    let mut s = pi();
    let working = report(ProgramState::Working, "fixing");
    let fx = s.handle(Input::ProgramStatus(Some(working.clone())), at(1000));
    assert_eq!(reports(&fx), [working]);
    assert!(
        reports(&tick(&mut s, 2000)).is_empty(),
        "nothing new, nothing sent"
    );
    let fx = s.handle(Input::ProgramStatus(None), at(3000));
    assert_eq!(reports(&fx)[0].state, ProgramState::Clear, "withdrawn upward too");
}

#[test]
fn a_provider_limit_is_blocked_with_a_countdown_that_moves() {
    let mut s = pi();
    let error = "429: Rate limit reached for mock-model. Please try again in 25s.";
    event(&mut s, json!({"type": "agent_start"}), 1000);
    s.handle(
        Input::ProgramStatus(Some(report(ProgramState::Working, "run"))),
        at(1100),
    );
    event(
        &mut s,
        json!({"type": "agent_end", "stopReason": "error", "errorMessage": error}),
        2000,
    );
    let failed = json!({"kind": "message", "role": "assistant", "stopReason": "error",
        "errorMessage": error, "content": []});
    let user = json!({"kind": "message", "role": "user", "content": [{"type": "text", "nonBlank": true}]});
    let fx = event(
        &mut s,
        json!({"type": "agent_settled", "aborted": false, "idle": true, "tail": [user, failed]}),
        2100,
    );
    let sent = reports(&fx);
    let limit = sent.last().expect("the limit reported");
    assert_eq!(limit.state, ProgramState::Blocked);
    assert_eq!(limit.kind.as_deref(), Some("limit"));
    assert_eq!(limit.app.as_deref(), Some("pokeshell"));
    let msg = limit.msg.clone().unwrap_or_default();
    assert!(msg.starts_with("rate limit: resuming in 0:"), "{msg}");
    let later = reports(&tick(&mut s, 7100));
    let msg_later = later.last().and_then(|r| r.msg.clone()).unwrap_or_default();
    assert!(
        msg_later.starts_with("rate limit: resuming in 0:") && msg_later != msg,
        "{msg_later}"
    );
}

#[test]
fn a_supervisor_that_gave_up_is_an_error() {
    let mut s = pi();
    super::restart_tests::without_stall_watch(&mut s);
    let off = Change {
        key: KeyId::PokeMaxRestartsPerHour,
        value: SettingValue::Int(0),
    };
    s.handle(Input::ApplySettings(vec![off]), at(0));
    event(&mut s, json!({"type": "agent_start"}), 1000);
    let sent = reports(&tick(&mut s, 91_000));
    let last = sent.last().expect("a report");
    assert_eq!(last.state, ProgramState::Error);
    assert!(
        last.msg.as_deref().unwrap_or_default().starts_with("gave up:"),
        "{last:?}"
    );
}

#[test]
fn another_session_waiting_for_the_user_is_a_question_here() {
    let mut s = pi();
    let brief = |number: u32, name: &str, attention: Attention, state: &str| {
        SessionBrief::new(number, name, "/w", attention, state)
    };
    let fx = s.handle(
        Input::Sessions(vec![
            brief(0, "me", Attention::Idle, "idle"),
            brief(2, "api", Attention::Question, "waiting for you: Allow?"),
        ]),
        at(1000),
    );
    let sent = reports(&fx);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].state, ProgramState::Blocked);
    assert_eq!(sent[0].kind.as_deref(), Some("question"));
    assert_eq!(
        sent[0].msg.as_deref(),
        Some("session api needs you: waiting for you: Allow?")
    );
    let fx = s.handle(
        Input::Sessions(vec![brief(2, "api", Attention::Idle, "idle")]),
        at(2000),
    );
    assert_eq!(reports(&fx)[0].state, ProgramState::Clear);
}

#[test]
fn the_title_is_pis_by_default_and_pokeshells_when_on() {
    let mut s = pi();
    assert!(
        titles(&event(&mut s, json!({"type": "agent_start"}), 1000)).is_empty(),
        "auto: pi names it"
    );
    let on = Change {
        key: KeyId::WindowTitle,
        value: SettingValue::Choice("on"),
    };
    let fx = s.handle(Input::ApplySettings(vec![on]), at(2000));
    assert_eq!(titles(&fx), ["pi — working"]);
    assert_eq!(
        titles(&event(&mut s, json!({"type": "agent_end"}), 3000)),
        Vec::<String>::new(),
        "still working until settled"
    );
    let off = Change {
        key: KeyId::WindowTitle,
        value: SettingValue::Choice("off"),
    };
    s.handle(Input::ApplySettings(vec![off]), at(4000));
    assert!(titles(&event(&mut s, json!({"type": "agent_start"}), 5000)).is_empty());
}

#[test]
fn a_hosted_program_gets_a_title_until_it_names_its_window_itself() {
    let opts = SessionOptions {
        label: "htop".into(),
        spec: SessionSpec {
            name: "top".into(),
            ..SessionSpec::default()
        },
        ..SessionOptions::default()
    };
    let mut s = Session::new(opts, super::tests::settings(), 120, 40, at(0));
    let fx = s.handle(Input::ChildStarted { pid: 9 }, at(0));
    assert_eq!(titles(&fx), ["top — idle"]);
    let fx = s.handle(
        Input::ChildOutput {
            modes: Default::default(),
            host_bytes: b"\x1b]2;htop\x07".to_vec(),
        },
        at(500),
    );
    assert_eq!(titles(&fx), ["htop"], "its own title passes, pokeshell's stops");
    let fx = s.handle(
        Input::ChildExited {
            code: 0,
            signal: None,
        },
        at(1000),
    );
    assert!(titles(&fx).is_empty(), "{fx:?}");
}

/// The bytes for the host terminal among `fx`, joined.
fn to_host(fx: &[Effect]) -> Vec<u8> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::ToHost(bytes) => Some(bytes.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Issue 34, low 11: a hosted program's clipboard write (OSC 52) reached every attached terminal.
/// `pokeshell.clipboard` is off by default and drops it (the rest of the output goes on); on, it
/// passes.
#[test]
fn a_clipboard_write_reaches_the_terminal_only_when_the_setting_allows_it() {
    let mut s = pi();
    let output = |s: &mut Session, ms| {
        let fx = s.handle(
            Input::ChildOutput {
                modes: Default::default(),
                host_bytes: b"\x07\x1b]52;c;cm0gLXJmIH4K\x07\x1b]2;t\x07".to_vec(),
            },
            at(ms),
        );
        to_host(&fx)
    };
    assert_eq!(
        output(&mut s, 1000),
        b"\x07\x1b]2;t\x07",
        "off by default: dropped, the rest goes"
    );
    let on = Change {
        key: KeyId::Clipboard,
        value: SettingValue::Bool(true),
    };
    s.handle(Input::ApplySettings(vec![on]), at(2000));
    assert_eq!(
        output(&mut s, 3000),
        b"\x07\x1b]52;c;cm0gLXJmIH4K\x07\x1b]2;t\x07"
    );
}

#[test]
fn clipboard_writes_are_cut_out_whole() {
    use super::upward::without_clipboard_writes as cut;
    assert_eq!(cut(b"plain"), None);
    assert_eq!(
        cut(b"a\x1b]52;c;eA==\x07b\x1b]52;p;eQ==\x07c").as_deref(),
        Some(&b"abc"[..])
    );
    assert_eq!(cut(b"a\x1b]52;c;unended").as_deref(), Some(&b"a"[..]));
}
