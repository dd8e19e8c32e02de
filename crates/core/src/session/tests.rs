use super::*;
use crate::input::tokenizer::Token;

pub(super) fn t() -> Now {
    Now::new(0, 0)
}

fn stdin(a: &mut Session, bytes: &[u8]) -> Vec<Effect> {
    a.handle(
        Input::Stdin {
            client: 1,
            bytes: bytes.to_vec(),
        },
        t(),
    )
}

/// The child asks for these input modes (as its output would tell the loop).
fn child_modes(a: &mut Session, modes: ChildModes) {
    a.handle(
        Input::ChildOutput {
            modes,
            host_bytes: Vec::new(),
        },
        t(),
    );
}

/// Settings read from an empty home and work dir: the defaults, nothing from this machine.
pub(super) fn settings() -> Settings {
    let dir = std::env::temp_dir();
    let paths = crate::config::ConfigPaths::resolve(
        Some(&dir.join("pokeshell-no-home")),
        None,
        &dir.join("pokeshell-no-work"),
    )
    .expect("paths");
    Settings::from_loaded(paths, Vec::new())
}

/// Session 1 of a server, "api" in /src/api, in a 120×40 terminal.
pub(super) fn numbered() -> Session {
    let opts = SessionOptions {
        label: "pi".into(),
        spec: crate::spec::SessionSpec {
            number: 1,
            name: "api".into(),
            dir: "/src/api".into(),
            ..Default::default()
        },
        ..SessionOptions::default()
    };
    Session::new(opts, settings(), 120, 40, t())
}

fn app(cols: u16, rows: u16) -> Session {
    Session::new(SessionOptions::default(), settings(), cols, rows, t())
}

fn to_child(effects: &[Effect]) -> Vec<u8> {
    child_bytes(effects)
}

#[test]
fn typing_goes_to_the_child_unchanged() {
    let mut a = app(120, 40);
    let e = stdin(&mut a, b"hi\r\x1b[13;2u");
    assert_eq!(to_child(&e), b"hi\r\x1b[13;2u");
}

#[test]
fn prefix_s_toggles_the_side_pane_and_asks_for_a_relayout() {
    let mut a = app(120, 40);
    assert!(a.areas().side.is_some());
    let e = stdin(&mut a, b"\x1ds");
    assert!(e.iter().any(|x| matches!(x, Effect::ResizePane { .. })));
    assert!(a.areas().side.is_none());
    assert_eq!(a.pane().width, 120);
    assert!(to_child(&e).is_empty());
    stdin(&mut a, b"\x1ds");
    assert!(a.areas().side.is_some());
}

#[test]
fn prefix_twice_sends_the_prefix_itself() {
    let mut a = app(120, 40);
    let e = stdin(&mut a, b"\x1d\x1d");
    assert_eq!(to_child(&e), b"\x1d");
}

#[test]
fn help_overlay_opens_and_any_key_closes_it_without_reaching_pi() {
    let mut a = app(120, 40);
    stdin(&mut a, b"\x1d?");
    assert_eq!(a.overlay(1), Some(OverlayKind::Help));
    let e = stdin(&mut a, b"x");
    assert_eq!(a.overlay(1), None);
    assert!(to_child(&e).is_empty());
}

#[test]
fn prefix_c_opens_the_settings_and_changes_apply_at_once() {
    let mut a = app(120, 40);
    assert!(
        a.footer_view(t(), Some(1)).poke_on,
        "pokeshell enables poking by default"
    );
    stdin(&mut a, b"\x1dc");
    assert_eq!(a.overlay(1), Some(OverlayKind::Settings));
    // The first row is the master switch: Enter turns it off, right away.
    let e = stdin(&mut a, b"\r");
    assert!(
        !e.iter().any(|x| matches!(x, Effect::Bridge { .. })),
        "no bridge yet: nothing to persist"
    );
    assert!(!a.footer_view(t(), Some(1)).poke_on);
    assert!(to_child(&e).is_empty(), "dialog keys never reach pi");
    // Esc closes (the filter is empty).
    stdin(&mut a, b"\x1b");
    assert_eq!(a.overlay(1), None);
}

#[test]
fn prefix_i_opens_the_status_overlay() {
    let mut a = app(120, 40);
    stdin(&mut a, b"\x1di");
    assert_eq!(a.overlay(1), Some(OverlayKind::Status));
    stdin(&mut a, b"q");
    assert_eq!(a.overlay(1), None);
}

#[test]
fn an_unbound_key_after_the_prefix_points_at_the_help() {
    let mut a = app(120, 40);
    let e = stdin(&mut a, b"\x1dz");
    assert!(to_child(&e).is_empty());
    let msg = a.footer_view(t(), Some(1)).message.unwrap().0;
    assert!(msg.contains("no command"), "{msg}");
}

#[test]
fn escape_after_prefix_cancels_and_a_lone_escape_reaches_pi() {
    let mut a = app(120, 40);
    let e = stdin(&mut a, b"\x1d\x1b");
    assert!(to_child(&e).is_empty());
    assert!(!a.footer_view(t(), Some(1)).armed);
    let e = stdin(&mut a, b"\x1b");
    assert_eq!(to_child(&e), b"\x1b");
}

#[test]
fn paste_markers_follow_the_childs_bracketed_paste_mode() {
    let mut a = app(120, 40);
    let on = ChildModes {
        bracketed_paste: true,
        ..ChildModes::default()
    };
    child_modes(&mut a, on);
    let e = stdin(&mut a, b"\x1b[200~a\x1db\x1b[201~");
    assert_eq!(to_child(&e), b"\x1b[200~a\x1db\x1b[201~");
    child_modes(&mut a, ChildModes::default());
    let e = stdin(&mut a, b"\x1b[200~a\x1db\x1b[201~");
    assert_eq!(to_child(&e), b"a\x1db");
}

#[test]
fn mouse_outside_the_pane_is_dropped() {
    let mut a = app(120, 40);
    let child = ChildModes {
        mouse: vt100::MouseProtocolMode::AnyMotion,
        mouse_encoding: vt100::MouseProtocolEncoding::Sgr,
        ..ChildModes::default()
    };
    child_modes(&mut a, child);
    let e = stdin(&mut a, b"\x1b[<0;5;5M\x1b[<0;100;5M");
    assert_eq!(to_child(&e), b"\x1b[<0;5;5M");
}

#[test]
fn split_sequence_is_released_after_input_goes_idle() {
    let mut a = app(120, 40);
    let e = stdin(&mut a, b"\x1b[1;");
    assert!(to_child(&e).is_empty());
    assert!(a.input_pending(1));
    let e = a.handle(Input::InputIdle { client: 1 }, t());
    assert_eq!(to_child(&e), b"\x1b[1;");
}

#[test]
fn typed_text_before_a_command_keeps_its_order() {
    let mut a = app(120, 40);
    let e = stdin(&mut a, b"ab\x1d\x1dcd");
    assert_eq!(to_child(&e), b"ab\x1dcd");
    let first = e
        .iter()
        .position(|x| matches!(x, Effect::ToChild(b) if b == b"ab"))
        .unwrap();
    let second = e
        .iter()
        .position(|x| matches!(x, Effect::ToChild(b) if b == b"\x1d"))
        .unwrap();
    assert!(first < second);
    let _ = Token::PasteEnd;
}

pub(super) fn hello() -> crate::bridge::Hello {
    crate::bridge::Hello {
        protocol: 1,
        token: "t".into(),
        pi_version: Some("1.6.0".into()),
        pid: 1,
        instance: "i".into(),
        reconnect: false,
        dropped: 0,
        session_id: Some("s1".into()),
        session_file: None,
        session_name: None,
        mode: Some("tui".into()),
        model: Some("mock/mock-model".into()),
        cwd: None,
    }
}

pub(super) fn connected() -> Session {
    let mut a = app(120, 40);
    a.handle(
        Input::Bridge(crate::bridge::BridgeEvent::Connected {
            conn: 1,
            hello: hello(),
        }),
        t(),
    );
    a
}

#[test]
fn poke_c4_a_dialog_change_is_saved_as_a_session_entry() {
    let mut a = connected();
    stdin(&mut a, b"\x1dc");
    let e = stdin(&mut a, b"\r");
    let saved = e.iter().find_map(|x| match x {
        Effect::Bridge {
            command: crate::bridge::Command::AppendEntry { custom_type, data },
            ..
        } => Some((custom_type.clone(), data.clone())),
        _ => None,
    });
    let (custom_type, data) = saved.expect("an append_entry command");
    assert_eq!(custom_type, crate::config::SESSION_ENTRY_TYPE);
    assert!(data.to_string().contains("false"), "{data}");
}

#[test]
fn prefix_p_sends_the_manual_poke_when_connected_and_says_why_not_otherwise() {
    let mut a = app(120, 40);
    let e = stdin(&mut a, b"\x1dp");
    assert!(!e.iter().any(|x| matches!(x, Effect::Bridge { .. })));
    let msg = a.footer_view(t(), Some(1)).message.unwrap().0;
    assert!(msg.contains("not connected"), "{msg}");

    let mut a = connected();
    let e = stdin(&mut a, b"\x1dp");
    let sent = e.iter().find_map(|x| match x {
        Effect::Bridge {
            command: crate::bridge::Command::SendMessage(m),
            ..
        } => Some(m.clone()),
        _ => None,
    });
    let m = sent.expect("a send_message command");
    assert_eq!(m.custom_type, "poke");
    assert!(m.content.contains("[Poke]"), "{}", m.content);
    assert!(!m.display);
    assert!(m.trigger_turn);
}

#[test]
fn prefix_h_asks_for_a_focus_line_then_compacts_with_a_handoff() {
    let mut a = connected();
    stdin(&mut a, b"\x1dh");
    assert_eq!(a.overlay(1), Some(OverlayKind::Handoff));
    let e = stdin(&mut a, b"tests first\r");
    assert_eq!(a.overlay(1), None);
    let compact = e.iter().find_map(|x| match x {
        Effect::Bridge {
            command: crate::bridge::Command::Compact(c),
            ..
        } => Some(c.clone()),
        _ => None,
    });
    let c = compact.expect("a compact command");
    assert!(c.handoff);
    assert_eq!(c.custom_instructions.as_deref(), Some("tests first"));
    assert!(to_child(&e).is_empty(), "the focus line is not typed into pi");
}

#[test]
fn a_session_start_does_not_undo_the_users_side_pane_toggle() {
    let mut a = connected();
    stdin(&mut a, b"\x1ds");
    assert!(a.areas().side.is_none());
    let start = crate::bridge::PiEvent::SessionStart(crate::bridge::SessionStart {
        reason: crate::bridge::SessionReason::Startup,
        previous_session_file: None,
        session_id: Some("s2".into()),
        session_file: None,
        session_name: None,
        model: None,
        custom_entries: Vec::new(),
    });
    a.handle(
        Input::Bridge(crate::bridge::BridgeEvent::Event {
            conn: 1,
            seq: 1,
            at: 0,
            event: start,
        }),
        t(),
    );
    assert!(a.areas().side.is_none(), "the user's toggle stands");
}

#[test]
fn status_lines_report_the_bridge_and_the_counters() {
    let a = connected();
    let lines = a.live_lines(t());
    let text: Vec<String> = lines.iter().map(|l| format!("{l:?}")).collect();
    let joined = text.join("\n");
    assert!(
        joined.contains("Bridge") && joined.contains("connected"),
        "{joined}"
    );
    assert!(
        joined.contains("Pokes this episode") && joined.contains("0 of 2"),
        "{joined}"
    );
}

fn heartbeat(missed: u64) -> Input {
    Input::Bridge(crate::bridge::BridgeEvent::Heartbeat {
        conn: 1,
        heartbeat: crate::bridge::Heartbeat {
            seq: 9,
            at: 0,
            idle: Some(true),
            pending_messages: Some(false),
            running_tools: Vec::new(),
        },
        missed,
    })
}

fn side_text(a: &Session, now: Now) -> String {
    let view = a.supervisor_view(now);
    let side = a.side_from(&view, a.pane(), now, None);
    format!("{side:?}")
}

#[test]
fn a_bridge_that_goes_quiet_is_shown_as_silent_and_a_heartbeat_clears_it() {
    let mut a = connected();
    let at = |ms| Now::new(ms, ms);
    assert!(side_text(&a, at(10_000)).contains("\"connected\""));
    assert_eq!(
        a.next_deadline(at(1_000)),
        Some(15_000),
        "it goes silent after 15 s"
    );
    let text = side_text(&a, at(20_000));
    assert!(text.contains("connected, silent 20s"), "{text}");
    a.handle(heartbeat(0), at(21_000));
    assert!(!side_text(&a, at(22_000)).contains("silent"));
    let lines = format!("{:?}", a.live_lines(at(23_000)));
    assert!(lines.contains("last heard 2s ago"), "{lines}");
}

#[test]
fn lost_bridge_lines_are_counted_and_said() {
    let mut a = connected();
    let e = a.handle(heartbeat(3), t());
    assert!(e.contains(&Effect::Redraw));
    let msg = a.footer_view(t(), Some(1)).message.unwrap().0;
    assert!(msg.contains("3 line(s) from pi were lost"), "{msg}");
    let lines = format!("{:?}", a.live_lines(t()));
    assert!(lines.contains("Bridge lines lost"), "{lines}");
    assert!(
        a.handle(heartbeat(0), t()).is_empty(),
        "a plain heartbeat draws nothing"
    );
}

#[test]
fn a_huge_paste_into_the_settings_dialog_is_taken_whole_and_esc_still_closes_it() {
    let mut a = app(120, 40);
    stdin(&mut a, b"\x1dc");
    let mut paste = b"\x1b[200~".to_vec();
    paste.extend(std::iter::repeat_n(b'x', 100_000));
    paste.extend_from_slice(b"\x1b[201~");
    let e = stdin(&mut a, &paste);
    assert!(to_child(&e).is_empty(), "the paste stays in the dialog");
    let redraws = e.iter().filter(|x| **x == Effect::Redraw).count();
    assert!(
        redraws <= 2,
        "one pass for the whole paste, not one per character: {redraws}"
    );
    assert_eq!(a.overlay(1), Some(OverlayKind::Settings));
    stdin(&mut a, b"\x1b");
    assert_eq!(a.overlay(1), None);
}

#[test]
fn a_ledger_that_cannot_be_written_is_shown_in_the_side_pane_and_the_status() {
    let mut a = app(120, 40);
    a.handle(
        Input::LedgerStatus(Some("ledger not written, 1 records lost: read-only".into())),
        t(),
    );
    assert!(side_text(&a, t()).contains("ledger not written"));
    let lines = format!("{:?}", a.live_lines(t()));
    assert!(lines.contains("Log problem"), "{lines}");
    a.handle(Input::LedgerStatus(None), t());
    assert!(!side_text(&a, t()).contains("ledger not written"));
}
