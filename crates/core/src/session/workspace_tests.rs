//! The session among several: the keys that detach, switch and start sessions, the switcher, the
//! new-session prompt, and the side pane's session list.

use super::tests::{numbered, t};
use super::*;

fn brief(number: u32, name: &str, attention: Attention, state: &str) -> SessionBrief {
    SessionBrief {
        attached: 1,
        ..SessionBrief::new(number, name, &format!("/src/{name}"), attention, state)
    }
}

fn three() -> Vec<SessionBrief> {
    vec![
        brief(1, "api", Attention::Idle, "idle"),
        brief(2, "web", Attention::Question, "waiting for you: Allow the edit?"),
        brief(3, "docs", Attention::Working, "working"),
    ]
}

/// Session 1 with the server's list of three sessions.
fn among_three() -> Session {
    let mut s = numbered();
    s.handle(Input::Sessions(three()), t());
    s
}

fn stdin(s: &mut Session, bytes: &[u8]) -> Vec<Effect> {
    s.handle(
        Input::Stdin {
            client: 1,
            bytes: bytes.to_vec(),
        },
        t(),
    )
}

fn requests(fx: &[Effect]) -> Vec<WorkspaceRequest> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Workspace { req, .. } => Some(req.clone()),
            _ => None,
        })
        .collect()
}

fn footer(s: &Session) -> String {
    s.footer_view(t(), Some(1))
        .message
        .map(|m| m.0)
        .unwrap_or_default()
}

fn side_text(s: &Session) -> String {
    let view = s.supervisor_view(t());
    format!("{:?}", s.side_from(&view, s.pane(), t(), None))
}

#[test]
fn prefix_d_detaches() {
    let mut s = among_three();
    let fx = stdin(&mut s, b"\x1dd");
    assert_eq!(requests(&fx), [WorkspaceRequest::Detach]);
    assert!(child_bytes(&fx).is_empty());
}

#[test]
fn prefix_and_a_digit_switch_to_that_session_and_a_missing_one_is_said() {
    let mut s = among_three();
    assert_eq!(
        requests(&stdin(&mut s, b"\x1d3")),
        [WorkspaceRequest::SwitchTo(3)]
    );
    let fx = stdin(&mut s, b"\x1d7");
    assert!(requests(&fx).is_empty(), "{fx:?}");
    assert!(child_bytes(&fx).is_empty());
    assert_eq!(footer(&s), "no session 7");
}

#[test]
fn prefix_n_asks_for_a_directory_prefilled_with_this_sessions_own() {
    let mut s = among_three();
    stdin(&mut s, b"\x1dn");
    assert_eq!(s.overlay(1), Some(OverlayKind::NewSession));
    let fx = stdin(&mut s, b"\r");
    assert_eq!(
        requests(&fx),
        [WorkspaceRequest::NewSession {
            dir: "/src/api".into()
        }]
    );
    assert_eq!(s.overlay(1), None);
}

#[test]
fn the_new_session_prompt_edits_clears_and_submits_and_never_types_into_pi() {
    let mut s = among_three();
    stdin(&mut s, b"\x1dn");
    // Backspace twice, then more: "/src/api" → "/src/a" → "/src/app".
    let fx = stdin(&mut s, b"\x7f\x7fpp");
    assert!(child_bytes(&fx).is_empty());
    assert!(requests(&fx).is_empty());
    // Ctrl+U clears; an empty line starts nothing and keeps the prompt open.
    stdin(&mut s, b"\x15");
    let fx = stdin(&mut s, b"\r");
    assert!(requests(&fx).is_empty());
    assert_eq!(s.overlay(1), Some(OverlayKind::NewSession));
    assert!(footer(&s).contains("directory"), "{}", footer(&s));
    let fx = stdin(&mut s, b"/tmp/new\r");
    assert_eq!(
        requests(&fx),
        [WorkspaceRequest::NewSession {
            dir: "/tmp/new".into()
        }]
    );
}

#[test]
fn the_new_session_prompt_keeps_an_edit_until_enter() {
    let mut s = among_three();
    stdin(&mut s, b"\x1dn");
    stdin(&mut s, b"\x7f\x7fpp");
    let fx = stdin(&mut s, b"\r");
    assert_eq!(
        requests(&fx),
        [WorkspaceRequest::NewSession {
            dir: "/src/app".into()
        }]
    );
}

#[test]
fn esc_cancels_the_prompt_and_the_switcher() {
    let mut s = among_three();
    stdin(&mut s, b"\x1dn");
    let fx = stdin(&mut s, b"x\x1b");
    assert!(requests(&fx).is_empty());
    assert_eq!(s.overlay(1), None);
    stdin(&mut s, b"\x1dw");
    assert_eq!(s.overlay(1), Some(OverlayKind::Switcher));
    let fx = stdin(&mut s, b"\x1b");
    assert!(requests(&fx).is_empty());
    assert_eq!(s.overlay(1), None);
}

#[test]
fn the_switcher_filters_as_typed_and_enter_switches_to_the_chosen_number() {
    let mut s = among_three();
    stdin(&mut s, b"\x1dw");
    let fx = stdin(&mut s, b"doc");
    assert!(child_bytes(&fx).is_empty(), "typing filters, pi gets nothing");
    let fx = stdin(&mut s, b"\r");
    assert_eq!(requests(&fx), [WorkspaceRequest::SwitchTo(3)]);
    assert_eq!(s.overlay(1), None);

    // Unfiltered, the one needing the user comes first; Down goes to the next.
    stdin(&mut s, b"\x1dw");
    let fx = stdin(&mut s, b"\x1b[B\r");
    assert_eq!(requests(&fx), [WorkspaceRequest::SwitchTo(3)]);
    stdin(&mut s, b"\x1dw");
    let fx = stdin(&mut s, b"\r");
    assert_eq!(requests(&fx), [WorkspaceRequest::SwitchTo(2)]);
}

#[test]
fn the_side_pane_lists_the_sessions_when_there_are_several() {
    let mut s = numbered();
    s.handle(
        Input::Sessions(vec![brief(1, "api", Attention::Idle, "idle")]),
        t(),
    );
    assert!(!side_text(&s).contains("sessions"), "one session: no list");
    let fx = s.handle(Input::Sessions(three()), t());
    assert!(fx.contains(&Effect::Redraw));
    let text = side_text(&s);
    assert!(text.contains("\"sessions\""), "{text}");
    let web = text.find("web").expect("web is listed");
    let docs = text.find("docs").expect("docs is listed");
    assert!(web < docs, "the question comes first: {text}");
    assert!(text.contains("▸1 "), "this session is marked: {text}");
}

#[test]
fn another_sessions_running_tool_ticks_every_second_while_listed() {
    let mut s = numbered();
    assert_eq!(
        s.next_deadline(Now::new(1_500, 0)),
        Some(60_000),
        "the uptime only"
    );
    let mut briefs = three();
    briefs[2].tool = Some(("bash".into(), 0));
    s.handle(Input::Sessions(briefs), t());
    assert_eq!(s.next_deadline(Now::new(1_500, 1_500)), Some(2_000));
    let text = {
        let now = Now::new(65_000, 65_000);
        format!("{:?}", s.side_from(&s.supervisor_view(now), s.pane(), now, None))
    };
    assert!(text.contains("bash 1m 05s"), "{text}");
}
