//! The pi commands as the bridge delivers them: each takes its key's path, and answers pi.

use serde_json::json;

use super::super::tests::{connected, t};
use super::super::{Effect, Input, Session};
use crate::bridge::BridgeEvent;
use crate::bridge::{Command, NotifyLevel, PiEvent, UserCommand, UserRequest};

fn pi_event(a: &mut Session, event: PiEvent) -> Vec<Effect> {
    a.handle(
        Input::Bridge(BridgeEvent::Event {
            conn: 1,
            seq: 1,
            at: 0,
            event,
        }),
        t(),
    )
}

fn user(a: &mut Session, request_id: u64, request: UserRequest) -> Vec<Effect> {
    pi_event(a, PiEvent::UserCommand(UserCommand { request_id, request }))
}

fn commands(effects: &[Effect]) -> Vec<Command> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Bridge { command, .. } => Some(command.clone()),
            _ => None,
        })
        .collect()
}

/// The answer to request `id`: its text and level. Panics when there is none.
#[track_caller]
fn answer(effects: &[Effect], id: u64) -> (String, NotifyLevel) {
    let answers: Vec<(String, NotifyLevel)> = commands(effects)
        .into_iter()
        .filter_map(|c| match c {
            Command::CommandAnswer {
                request_id,
                text,
                level,
            } if request_id == id => Some((text, level)),
            _ => None,
        })
        .collect();
    assert_eq!(answers.len(), 1, "one answer to request {id}: {effects:?}");
    answers[0].clone()
}

#[test]
fn poke_p1_slash_poke_sends_the_manual_poke_and_answers_with_what_prefix_p_says() {
    let mut a = connected();
    let e = user(&mut a, 4, UserRequest::Poke);
    let sent = commands(&e).into_iter().find_map(|c| match c {
        Command::SendMessage(m) => Some(m),
        _ => None,
    });
    let m = sent.expect("the manual poke goes out");
    assert_eq!(m.custom_type, "poke");
    assert!(m.content.starts_with("[Poke] The user poked"), "{}", m.content);
    let (text, level) = answer(&e, 4);
    let footer = a
        .footer_view(t(), Some(1))
        .message
        .expect("the footer says it too")
        .0;
    assert_eq!(text, footer, "pi shows what pokeshell's footer shows");
    assert_eq!(level, NotifyLevel::Info);
}

#[test]
fn poke_c4_slash_poke_off_and_on_go_through_the_settings_path_and_are_saved_in_the_session() {
    let mut a = connected();
    assert!(a.footer_view(t(), Some(1)).poke_on);
    let e = user(&mut a, 1, UserRequest::PokeOff);
    assert!(!a.footer_view(t(), Some(1)).poke_on, "p:off at once");
    assert!(!a.settings().effective().poke.enabled);
    let saved = commands(&e).into_iter().find_map(|c| match c {
        Command::AppendEntry { custom_type, data } => Some((custom_type, data)),
        _ => None,
    });
    let (custom_type, data) = saved.expect("saved as a session entry");
    assert_eq!(custom_type, crate::config::SESSION_ENTRY_TYPE);
    assert!(data.to_string().contains("false"), "{data}");
    assert!(answer(&e, 1).0.contains("now off (p:off)"), "{:?}", answer(&e, 1));

    let again = user(&mut a, 2, UserRequest::PokeOff);
    assert!(answer(&again, 2).0.contains("already off"));
    let on = user(&mut a, 3, UserRequest::PokeOn);
    assert!(a.footer_view(t(), Some(1)).poke_on);
    assert!(answer(&on, 3).0.contains("now on (p:on)"));
}

#[test]
fn slash_poke_status_answers_with_the_live_status_lines() {
    let mut a = connected();
    let e = user(&mut a, 9, UserRequest::PokeStatus);
    let (text, _) = answer(&e, 9);
    assert!(text.starts_with("pokeshell status\nSupervision: on\n"), "{text}");
    for line in a.live_lines(t()) {
        assert!(
            text.contains(&format!("{}: {}", line.label, line.value)),
            "{text} lacks {line:?}"
        );
    }
    assert_eq!(commands(&e).len(), 1, "status changes nothing");
}

#[test]
fn ho_t2_slash_handoff_compacts_with_the_focus_as_prefix_h_does() {
    let mut a = connected();
    let e = user(
        &mut a,
        5,
        UserRequest::Handoff {
            focus: Some("the parser".into()),
        },
    );
    let compact = commands(&e).into_iter().find_map(|c| match c {
        Command::Compact(c) => Some(c),
        _ => None,
    });
    let c = compact.expect("a handoff compaction");
    assert!(c.handoff);
    assert_eq!(c.custom_instructions.as_deref(), Some("the parser"));
    answer(&e, 5);
}

#[test]
fn wak_t2_slash_wakeups_lists_them_and_cancels_one_by_id() {
    let mut a = connected();
    let e = user(&mut a, 1, UserRequest::Wakeups);
    assert_eq!(answer(&e, 1).0, "No wakeups are pending.");
    pi_event(
        &mut a,
        PiEvent::ToolCallRequest(crate::bridge::ToolCallRequest {
            call_id: "call_1".into(),
            tool_name: "schedule_wakeup".into(),
            args: json!({"delay_seconds": 120, "prompt": "check the build", "reason": "build running"}),
        }),
    );
    let (list, _) = answer(&user(&mut a, 2, UserRequest::Wakeups), 2);
    assert!(list.contains("wake-1 due in 2m 00s"), "{list}");
    assert!(list.contains(": build running"), "{list}");

    let e = user(&mut a, 3, UserRequest::WakeupCancel { id: "wake-1".into() });
    assert_eq!(
        answer(&e, 3),
        ("Wakeup wake-1 cancelled.".into(), NotifyLevel::Info)
    );
    assert!(
        commands(&e).iter().any(|c| matches!(c,
            Command::AppendEntry { custom_type, data }
                if custom_type == "pokeshell-wakeup-cancelled" && data["id"] == "wake-1")),
        "the cancellation is saved as the tool's would be: {e:?}"
    );
    assert!(a.supervisor_view(t()).wakeups.is_empty());
    let e = user(&mut a, 4, UserRequest::WakeupCancel { id: "wake-1".into() });
    assert_eq!(answer(&e, 4).1, NotifyLevel::Warning);
    assert!(answer(&e, 4).0.contains("no pending wakeup wake-1"));
}

#[test]
fn an_unknown_request_is_answered_not_ignored() {
    let mut a = connected();
    let e = user(&mut a, 7, UserRequest::Unknown);
    assert_eq!(answer(&e, 7).1, NotifyLevel::Warning);
}

fn tool_start(a: &mut Session, id: &str) {
    pi_event(
        a,
        PiEvent::ToolExecutionStart(crate::bridge::ToolExecutionStart {
            tool_call_id: id.into(),
            tool_name: "bash".into(),
            args: json!({"command": "sleep 100"}),
        }),
    );
}

fn heartbeat(missed: u64, running: &[&str]) -> Input {
    Input::Bridge(BridgeEvent::Heartbeat {
        conn: 1,
        heartbeat: crate::bridge::Heartbeat {
            seq: 9,
            at: 0,
            idle: Some(false),
            pending_messages: Some(false),
            running_tools: running.iter().map(|s| s.to_string()).collect(),
        },
        missed,
    })
}

fn running(a: &Session) -> Vec<String> {
    a.supervisor_view(t()).tools.into_iter().map(|t| t.id).collect()
}

#[test]
fn poke_e4_a_heartbeat_after_lost_lines_drops_the_tools_pi_no_longer_runs() {
    let mut a = connected();
    tool_start(&mut a, "call_1");
    tool_start(&mut a, "call_2");
    a.handle(heartbeat(0, &[]), t());
    assert_eq!(running(&a), ["call_1", "call_2"], "no gap, no re-sync");
    let e = a.handle(heartbeat(1, &["call_2"]), t());
    assert_eq!(running(&a), ["call_2"]);
    assert!(commands(&e).is_empty(), "forgetting a ghost sends nothing");
}
