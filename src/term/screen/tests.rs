use super::*;
use vt100::{MouseProtocolEncoding, MouseProtocolMode};

fn kitty_host() -> HostCaps {
    HostCaps {
        kitty: true,
        da1: Some(b"\x1b[?62;52c".to_vec()),
        fg: Some("rgb:eeee/eeee/eeee".into()),
        bg: Some("rgb:1111/1111/1111".into()),
        palette: vec![Some("rgb:0000/0000/0000".into()); 16],
        program_status: false,
    }
}

fn replies(m: &mut Mirror, input: &[u8]) -> Vec<u8> {
    m.process(input);
    m.take_replies()
}

#[test]
fn answers_pi_startup_queries_like_a_kitty_host() {
    let mut m = Mirror::new(24, 80, kitty_host());
    assert_eq!(replies(&mut m, b"\x1b[?1049h\x1b[>7u\x1b[?u"), b"\x1b[?7u");
    assert_eq!(replies(&mut m, b"\x1b[c"), b"\x1b[?62;52c");
    assert_eq!(
        replies(&mut m, b"\x1b]10;?\x07"),
        b"\x1b]10;rgb:eeee/eeee/eeee\x07"
    );
    assert_eq!(
        replies(&mut m, b"\x1b]11;?\x1b\\"),
        b"\x1b]11;rgb:1111/1111/1111\x07"
    );
    assert_eq!(
        replies(&mut m, b"\x1b]4;3;?\x07"),
        b"\x1b]4;3;rgb:0000/0000/0000\x07"
    );
    assert_eq!(m.modes().kitty_flags, 7);
}

#[test]
fn a_legacy_host_gets_no_kitty_answer_but_a_da1() {
    let mut m = Mirror::new(24, 80, HostCaps::default());
    assert_eq!(replies(&mut m, b"\x1b[>7u\x1b[?u"), b"");
    assert_eq!(replies(&mut m, b"\x1b[c"), HostCaps::FALLBACK_DA1);
    assert_eq!(replies(&mut m, b"\x1b]11;?\x07"), b"", "no colour is invented");
    assert_eq!(
        m.take_host_output(),
        b"",
        "a host that answered nothing at start-up is not asked"
    );
    let caps = HostCaps {
        da1: Some(HostCaps::FALLBACK_DA1.to_vec()),
        ..HostCaps::default()
    };
    let mut m = Mirror::new(24, 80, caps);
    assert_eq!(replies(&mut m, b"\x1b]11;?\x07"), b"", "no colour is invented");
    assert_eq!(
        m.take_host_output(),
        b"\x1b]11;?\x07",
        "a host that answered the probe's DA1 is asked for the colour it did not give"
    );
}

#[test]
fn colours_the_probe_missed_are_asked_of_the_host_with_the_da1_after_them() {
    let mut caps = kitty_host();
    caps.bg = None;
    caps.palette[5] = None;
    let mut m = Mirror::new(24, 80, caps);
    // pi's batch: both colours, two palette entries, DA1 as the end marker.
    let answered = replies(
        &mut m,
        b"\x1b]10;?\x07\x1b]11;?\x07\x1b]4;4;?\x07\x1b]4;5;?\x07\x1b[c",
    );
    assert_eq!(
        answered, b"\x1b]10;rgb:eeee/eeee/eeee\x07\x1b]4;4;rgb:0000/0000/0000\x07",
        "what the probe knows is answered at once; the DA1 waits for the host's colours"
    );
    assert_eq!(m.take_host_output(), b"\x1b]11;?\x07\x1b]4;5;?\x07\x1b[c");
    assert_eq!(
        replies(&mut m, b"\x1b[c"),
        b"\x1b[?62;52c",
        "a DA1 of its own is answered here"
    );
    assert!(m.take_host_output().is_empty());
}

#[test]
fn a_host_that_reported_every_colour_is_never_asked_again() {
    let mut m = Mirror::new(24, 80, kitty_host());
    m.process(b"\x1b]10;?\x07\x1b]11;?\x07\x1b]4;0;?\x07\x1b[c");
    assert!(m.take_host_output().is_empty());
}

#[test]
fn answers_wait_for_the_host_and_keep_their_order() {
    let mut m = Mirror::awaiting_host_caps(24, 80);
    let asked = b"\x1b[>7u\x1b[?u\x1b]7501;?\x1b\\\x1b]11;?\x07\x1b[6n\x1b]4;3;?\x07\x1b[c";
    assert_eq!(
        replies(&mut m, asked),
        b"",
        "nothing is answered before the host is known"
    );
    m.process(b"\x1b[5;9H");
    assert!(m.take_replies().is_empty());
    m.set_host_caps(kitty_host());
    assert_eq!(
        m.take_replies(),
        [
            &b"\x1b[?7u"[..],
            program_status::QUERY_REPLY,
            b"\x1b]11;rgb:1111/1111/1111\x07",
            b"\x1b[1;1R",
            b"\x1b]4;3;rgb:0000/0000/0000\x07",
            b"\x1b[?62;52c",
        ]
        .concat(),
        "the cursor was where it stood when asked"
    );
    assert!(m.modes().host_kitty);
    assert_eq!(
        replies(&mut m, b"\x1b[c"),
        b"\x1b[?62;52c",
        "later queries are answered at once"
    );
}

#[test]
fn a_silent_host_releases_the_held_answers_as_a_legacy_terminal() {
    let mut m = Mirror::awaiting_host_caps(24, 80);
    assert_eq!(replies(&mut m, b"\x1b[?u\x1b]10;?\x07\x1b[c"), b"");
    assert!(!m.modes().host_kitty);
    m.set_host_caps(HostCaps::default());
    assert_eq!(m.take_replies(), HostCaps::FALLBACK_DA1);
}

#[test]
fn cursor_position_is_reported_inside_the_pane() {
    let mut m = Mirror::new(24, 80, HostCaps::default());
    assert_eq!(replies(&mut m, b"\x1b[5;9H\x1b[6n"), b"\x1b[5;9R");
    assert_eq!(replies(&mut m, b"\x1b[18t"), b"\x1b[8;24;80t");
    m.resize(10, 40);
    assert_eq!(replies(&mut m, b"\x1b[18t"), b"\x1b[8;10;40t");
}

#[test]
fn kitty_stack_push_pop_set_per_screen() {
    let mut m = Mirror::new(24, 80, kitty_host());
    m.process(b"\x1b[>1u\x1b[>3u");
    assert_eq!(m.modes().kitty_flags, 3);
    m.process(b"\x1b[<u");
    assert_eq!(m.modes().kitty_flags, 1);
    m.process(b"\x1b[=4;2u");
    assert_eq!(m.modes().kitty_flags, 5);
    m.process(b"\x1b[=1;3u");
    assert_eq!(m.modes().kitty_flags, 4);
    m.process(b"\x1b[?1049h");
    assert_eq!(m.modes().kitty_flags, 0, "the alternate screen has its own stack");
    m.process(b"\x1b[?1049l");
    assert_eq!(m.modes().kitty_flags, 4);
    m.process(b"\x1b[<10u");
    assert_eq!(m.modes().kitty_flags, 0);
}

#[test]
fn tracks_modify_other_keys_paste_mouse_focus() {
    let mut m = Mirror::new(24, 80, HostCaps::default());
    m.process(b"\x1b[>4;2m\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[?1004h");
    let modes = m.modes();
    assert_eq!(modes.modify_other_keys, 2);
    assert!(modes.bracketed_paste);
    assert_eq!(modes.mouse, MouseProtocolMode::PressRelease);
    assert_eq!(modes.mouse_encoding, MouseProtocolEncoding::Sgr);
    assert!(modes.focus_reports);
    m.process(b"\x1b[>4;0m\x1b[?1004l");
    assert_eq!(m.modes().modify_other_keys, 0);
    assert!(!m.modes().focus_reports);
}

#[test]
fn synchronized_output_holds_until_closed_or_timed_out() {
    let mut m = Mirror::new(24, 80, HostCaps::default());
    let t0 = Instant::now();
    m.process(b"\x1b[?2026hpartial");
    assert!(m.sync_held(t0));
    assert!(!m.sync_held(t0 + SYNC_TIMEOUT + Duration::from_millis(1)));
    assert_eq!(replies(&mut m, b"\x1b[?2026$p"), b"\x1b[?2026;1$y");
    m.process(b"\x1b[?2026l");
    assert!(!m.sync_held(Instant::now()));
    assert_eq!(replies(&mut m, b"\x1b[?2026$p"), b"\x1b[?2026;2$y");
}

#[test]
fn title_clipboard_bell_and_notifications_go_to_the_host() {
    let mut m = Mirror::new(24, 80, HostCaps::default());
    m.process(b"\x1b]0;\xcf\x80 - work\x07\x07\x1b]52;c;aGk=\x07\x1b]777;notify;pi;done\x07");
    let out = m.take_host_output();
    assert_eq!(
        out,
        b"\x1b]2;\xcf\x80 - work\x07\x07\x1b]52;c;aGk=\x07\x1b]777;notify;pi;done\x07".to_vec()
    );
    assert!(m.take_host_output().is_empty());
}

#[test]
fn tolerates_pi_private_sequences_without_printing_them() {
    let mut m = Mirror::new(3, 20, HostCaps::default());
    m.process(
        b"\x1b[>7u\x1b[?u\x1b[<u\x1b[>4;2m\x1b[?2031h\x1b]7501;?\x1b\\\x1b]8;;\x07ok\x1b[0m\x1b]8;;\x07",
    );
    assert_eq!(m.screen().contents().trim(), "ok");
}

#[test]
fn the_program_status_query_is_answered_before_da1() {
    let mut m = Mirror::new(24, 80, HostCaps::default());
    assert_eq!(
        replies(&mut m, b"\x1b[>7u\x1b[?u\x1b]7501;?\x1b\\\x1b[c"),
        [program_status::QUERY_REPLY, HostCaps::FALLBACK_DA1].concat(),
        "pi takes the answer only when it comes before DA1"
    );
    assert_eq!(m.program_status(), None, "a query is not a report");
    assert_eq!(m.program_status_seq(), 0);
}

#[test]
fn reports_are_kept_with_a_sequence_and_stay_off_the_screen() {
    let mut m = Mirror::new(3, 40, HostCaps::default());
    m.process(b"a\x1b]7501;state=working:app=pi\x1b\\b");
    assert_eq!(m.program_status().map(|s| s.state), Some(ProgramState::Working));
    assert_eq!(m.program_status_seq(), 1);
    // The same report again still counts; a malformed one changes nothing.
    m.process(b"\x1b]7501;state=working:app=pi\x1b\\\x1b]7501;state=???\x1b\\");
    assert_eq!(m.program_status_seq(), 2);
    m.process(b"\x1b]7501;state=error:app=pi:msg=NDI5OiBiYWQ=\x07");
    let status = m.program_status().cloned();
    assert_eq!(
        status,
        Some(ProgramStatus {
            state: ProgramState::Error,
            app: Some("pi".into()),
            kind: None,
            msg: Some("429: bad".into()),
        })
    );
    assert_eq!(m.program_status_seq(), 3);
    assert_eq!(m.screen().contents().trim(), "ab");
    assert!(
        m.take_host_output().is_empty(),
        "the host did not ask for reports"
    );
    assert!(m.take_replies().is_empty(), "reports are not answered");
}

#[test]
fn reports_are_read_here_and_left_to_the_session_to_pass_on() {
    let host = HostCaps {
        program_status: true,
        ..HostCaps::default()
    };
    let mut m = Mirror::new(3, 40, host);
    let report = b"\x1b]7501;state=blocked:app=pi:kind=confirm:msg=UmVsb2FkPw==\x1b\\";
    m.process(b"\x1b]7501;?\x1b\\");
    assert!(
        m.take_host_output().is_empty(),
        "the query is answered here, not by the host"
    );
    m.process(report);
    assert!(
        m.take_host_output().is_empty(),
        "the session merges and passes it on"
    );
    let read = m.program_status().cloned().expect("the report was read");
    // What the session passes on is the report as pi wrote it.
    assert_eq!(program_status::encode(&read), report.to_vec());
    m.process(b"\x1b]7501;state=idle:app=pi\x07\x1b]7501;nonsense\x1b\\");
    assert_eq!(m.program_status().map(|s| s.state), Some(ProgramState::Idle));
}

#[test]
fn clear_scrollback_sequence_from_pi_full_redraw() {
    let mut m = Mirror::new(3, 20, HostCaps::default());
    m.process(b"old\x1b[2J\x1b[H\x1b[3Jnew");
    assert_eq!(m.screen().contents().trim(), "new");
}

#[test]
fn output_that_makes_vt100_panic_leaves_a_blank_screen_that_goes_on() {
    let mut m = Mirror::new(5, 8, kitty_host());
    m.process(b"\x1b[>7u");
    // vt100 0.18.1 panics on this (a widened character in the last column, a scroll, more text).
    let seen = m.changes().seen();
    m.process("\x1b[5;8H\u{263a}\u{fe0f}\x1b[S\x1b[2;4r\nhello wo".as_bytes());
    assert_eq!(m.changes().since(seen), Some((0..5).collect()));
    assert_eq!(m.screen().contents().trim(), "");
    // What the tracker kept is kept (vt100's own modes are not), and the next output is shown.
    assert_eq!(m.modes().kitty_flags, 7);
    m.process(b"\x1b[2;1Hback");
    assert_eq!(m.screen().contents().trim(), "back");
}

#[test]
fn a_panic_while_parsing_is_told_to_the_hook_as_caught() {
    assert!(!contain::parsing());
    let inside = contain::caught(contain::parsing);
    assert_eq!(inside, Some(true));
    assert_eq!(contain::caught(|| panic!("in vt100")), None::<()>);
    assert!(!contain::parsing());
}
