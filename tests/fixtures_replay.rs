//! pi 1.6.0's recorded output (tests/fixtures/pi/, see its README) replayed through pokeshell's
//! mirror, then pokeshell's whole screen drawn by `Session::draw` and snapshotted.
//! Each test also checks facts directly, so a wrongly accepted snapshot still fails.

mod support;

use std::time::Instant;

use pokeshell::term::screen::{HostCaps, Mirror};
use support::fixtures::{self, Fixture, Replay, replay};
use support::snapshot;
use vt100::{MouseProtocolEncoding, MouseProtocolMode};

/// A host that answered pokeshell's probe like kitty does, with made-up but fixed colours.
/// pokeshell reads pi's program-status reports, whatever the host: the query is always answered.
const STATUS_REPLY: &[u8] = b"\x1b]7501;?\x1b\\";

fn kitty_host() -> HostCaps {
    HostCaps {
        kitty: true,
        da1: Some(b"\x1b[?62;4;22c".to_vec()),
        fg: Some("rgb:dddd/dddd/dddd".into()),
        bg: Some("rgb:1010/1010/1010".into()),
        palette: (0..16)
            .map(|i| Some(format!("rgb:{i:02x}{i:02x}/0000/ffff")))
            .collect(),
        ..HostCaps::default()
    }
}

/// The longest run of `─` in `text`.
fn longest_rule(text: &str) -> usize {
    text.split(|c| c != '─')
        .map(|run| run.chars().count())
        .max()
        .unwrap_or(0)
}

/// The row numbers of the mirrored screen whose text contains `needle`.
fn rows_with(screen: &vt100::Screen, needle: &str) -> Vec<usize> {
    screen
        .contents()
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i)
        .collect()
}

/// Draws pokeshell around the replayed screen; checks the facts every frame shares and returns the
/// drawn rows. `side` says whether the side pane must be there.
#[track_caller]
fn draw_and_check(name: &str, r: &Replay, fixture: Fixture, side: bool) -> Vec<String> {
    let t0 = pokeshell_core::supervisor::Now::new(0, 0);
    let (cols, rows) = fixture.host;
    let app = snapshot::app(cols, rows, t0);
    let (screen_rows, screen_cols) = r.mirror.screen().size();
    let pane = app.pane();
    assert_eq!(
        (pane.width, pane.height),
        (screen_cols.get(), screen_rows.get()),
        "the pane has the size pi drew for"
    );
    assert_eq!(app.areas().side.is_some(), side, "side pane shown");
    let terminal = snapshot::draw(&app, r.mirror.screen(), t0);
    let drawn = snapshot::rows(&terminal);

    // pi's editor border spans the pane, and no further.
    let widest = drawn.iter().map(|l| longest_rule(l)).max().unwrap_or(0);
    assert_eq!(
        widest,
        usize::from(pane.width),
        "pi's editor border spans the pane"
    );
    let footer = drawn.last().expect("a footer row");
    assert!(footer.contains("📌 p:on"), "footer: {footer:?}");
    assert!(footer.contains("Ctrl+] ? help"), "footer: {footer:?}");
    // pi's own footer (model name) is on the pane's last row.
    let pi_footer = &drawn[usize::from(pane.height) - 1];
    assert!(pi_footer.contains("mock-model"), "pi's footer: {pi_footer:?}");
    let text = drawn.join("\n");
    if side {
        assert!(
            text.contains(&format!("pane    {}×{}", pane.width, pane.height)),
            "{text}"
        );
        assert!(text.contains(&format!("pid     {}", snapshot::PID)), "{text}");
    }
    // Nothing of pi's keyboard-protocol or query sequences leaked onto the screen.
    for leak in [">7u", "[?u", "4;2m", "7501", "2031", "rgb:"] {
        assert!(!text.contains(leak), "{leak:?} leaked onto the screen:\n{text}");
    }

    snapshot::insta_settings().bind(|| insta::assert_snapshot!(name, terminal.backend()));
    drawn
}

#[test]
fn startup_bytes_before_the_first_frame_print_nothing() {
    let bytes = fixtures::read(fixtures::STARTUP);
    let first_frame = bytes
        .windows(8)
        .position(|w| w == b"\x1b[?2026h")
        .expect("pi's start-up has a synchronized frame");
    let before = &bytes[..first_frame];
    // Modes, the kitty push and query, modifyOtherKeys (when DA1 came back in time), colour
    // queries: all of it must stay off the screen.
    assert!(
        before.windows(5).any(|w| w == b"\x1b[>7u"),
        "the kitty push precedes the frame"
    );
    let mut m = Mirror::new(40, 120, HostCaps::default());
    m.process(before);
    assert_eq!(
        m.screen().contents().trim(),
        "",
        "something printed before pi's first frame"
    );
    assert_eq!(m.screen().cursor_position(), (0, 0));
}

/// The probe got no answer at all: pi's colour queries get none (no colour is invented) and both
/// DA1s are answered here, as a VT220-class terminal.
#[test]
fn startup_silent_host_gets_the_program_status_answer_and_both_da1s_and_no_invented_colours() {
    let bytes = fixtures::read(fixtures::STARTUP);
    let queries = bytes.windows(3).filter(|w| w == b"\x1b[c").count();
    assert_eq!(
        queries, 2,
        "pi sends DA1 after the kitty query and after the colour queries"
    );
    let r = replay(fixtures::STARTUP, HostCaps::default());
    assert_eq!(
        r.replies_to(fixtures::STARTUP).escape_ascii().to_string(),
        [STATUS_REPLY, HostCaps::FALLBACK_DA1, HostCaps::FALLBACK_DA1]
            .concat()
            .escape_ascii()
            .to_string()
    );
    assert!(
        !String::from_utf8_lossy(&r.host_out).contains("\x1b]10;?"),
        "a host that answered nothing is not asked again"
    );
}

/// The probe got a DA1 but no colours (a tmux whose client attaches later), so pi's colour queries,
/// and the DA1 that ends them, are the host's to answer (its answers reach pi as input).
#[test]
fn startup_host_without_colours_is_asked_for_them_with_their_da1() {
    let caps = HostCaps {
        da1: Some(HostCaps::FALLBACK_DA1.to_vec()),
        ..HostCaps::default()
    };
    let r = replay(fixtures::STARTUP, caps);
    assert_eq!(
        r.replies_to(fixtures::STARTUP).escape_ascii().to_string(),
        [STATUS_REPLY, HostCaps::FALLBACK_DA1]
            .concat()
            .escape_ascii()
            .to_string()
    );
    let mut asked = String::from("\x1b]10;?\x07\x1b]11;?\x07");
    for i in 0..16 {
        asked.push_str(&format!("\x1b]4;{i};?\x07"));
    }
    asked.push_str("\x1b[c");
    let host_out = String::from_utf8_lossy(&r.host_out);
    assert!(
        host_out.contains(&asked),
        "the colour queries and their DA1 go to the host: {:?}",
        host_out.escape_debug().to_string()
    );
}

#[test]
fn startup_kitty_host_answers_flags_colours_and_da1_in_order() {
    let caps = kitty_host();
    let r = replay(fixtures::STARTUP, caps.clone());
    let da1 = String::from_utf8(caps.da1.clone().expect("a DA1")).expect("ascii");
    let mut expected = format!("\x1b[?7u\x1b]7501;?\x1b\\{da1}");
    expected.push_str("\x1b]10;rgb:dddd/dddd/dddd\x07\x1b]11;rgb:1010/1010/1010\x07");
    for i in 0..16 {
        expected.push_str(&format!("\x1b]4;{i};rgb:{i:02x}{i:02x}/0000/ffff\x07"));
    }
    expected.push_str(&da1);
    assert_eq!(
        r.replies_to(fixtures::STARTUP).escape_ascii().to_string(),
        expected.as_bytes().escape_ascii().to_string()
    );
}

#[test]
fn startup_modes_are_tracked_and_the_title_goes_to_the_host() {
    let r = replay(fixtures::STARTUP, HostCaps::default());
    let modes = r.mirror.modes();
    assert!(r.mirror.screen().alternate_screen());
    assert_eq!(modes.kitty_flags, 7, "pi pushed CSI >7u on the alternate screen");
    assert_eq!(
        modes.modify_other_keys, 2,
        "pi fell back to modifyOtherKeys after DA1"
    );
    assert!(modes.bracketed_paste);
    assert_eq!(modes.mouse, MouseProtocolMode::AnyMotion);
    assert_eq!(modes.mouse_encoding, MouseProtocolEncoding::Sgr);
    assert!(modes.focus_reports);
    assert!(!r.mirror.sync_held(Instant::now()), "every frame was closed");
    let host = String::from_utf8_lossy(&r.host_out);
    assert!(
        host.contains("π - work"),
        "pi's window title reaches the host: {host:?}"
    );
}

#[test]
fn startup_whole_screen() {
    let r = replay(fixtures::STARTUP, HostCaps::default());
    let drawn = draw_and_check("startup", &r, fixtures::STARTUP, true);
    // pi's editor is empty: two borders with the fake cursor between them.
    let borders = rows_with(r.mirror.screen(), &"─".repeat(120));
    assert_eq!(borders.len(), 2, "{drawn:#?}");
    assert_eq!(borders[1] - borders[0], 2);
}

#[test]
fn prompt_and_answer_whole_screen() {
    let r = replay(fixtures::PROMPT, HostCaps::default());
    assert!(
        r.replies_to(fixtures::PROMPT).is_empty(),
        "pi asks nothing while answering"
    );
    let screen = r.mirror.screen();
    let prompt = rows_with(screen, fixtures::PROMPT_TEXT);
    let answer = rows_with(screen, fixtures::ANSWER_TEXT);
    assert_eq!(prompt.len(), 1, "the prompt shows once, in the transcript");
    assert_eq!(answer.len(), 1);
    assert!(prompt[0] < answer[0], "the answer comes below the prompt");
    assert!(
        rows_with(screen, "Working").is_empty(),
        "the spinner is gone once pi is idle"
    );
    draw_and_check("prompt", &r, fixtures::PROMPT, true);
}

#[test]
fn tool_call_and_result_whole_screen() {
    let r = replay(fixtures::TOOL, HostCaps::default());
    let screen = r.mirror.screen();
    let call = rows_with(screen, &format!("$ {}", fixtures::TOOL_COMMAND));
    assert_eq!(call.len(), 1, "the bash call is shown once");
    let contents = screen.contents();
    let lines: Vec<&str> = contents.lines().collect();
    let output = (call[0] + 1..lines.len())
        .find(|&i| lines[i].trim() == "hi")
        .expect("the command's output `hi` below the call");
    let done = rows_with(screen, fixtures::TOOL_DONE_TEXT);
    assert_eq!(done.len(), 1);
    assert!(output < done[0], "the final answer comes after the tool result");
    assert_eq!(
        rows_with(screen, fixtures::ANSWER_TEXT).len(),
        1,
        "the first turn is still there"
    );
    draw_and_check("tool", &r, fixtures::TOOL, true);
}

/// The replayed transcript: every turn is on screen once, in order.
#[track_caller]
fn assert_transcript(screen: &vt100::Screen) {
    let order: Vec<usize> = [
        fixtures::PROMPT_TEXT,
        fixtures::ANSWER_TEXT,
        fixtures::TOOL_PROMPT_TEXT,
        fixtures::TOOL_DONE_TEXT,
    ]
    .iter()
    .map(|t| {
        let rows = rows_with(screen, t);
        assert_eq!(rows.len(), 1, "{t:?} on screen once:\n{}", screen.contents());
        rows[0]
    })
    .collect();
    assert!(order.is_sorted(), "turns out of order: {order:?}");
}

#[test]
fn resize_to_the_side_pane_layout_redraws_pi_at_88_columns() {
    let r = replay(fixtures::RESIZE, HostCaps::default());
    assert_eq!(r.mirror.screen().size().1.get(), 88);
    assert_transcript(r.mirror.screen());
    // In a 120×40 terminal the side pane takes 32 columns and the footer a row.
    assert_eq!(fixtures::RESIZE.host, (120, 40));
    draw_and_check("resize_120x40", &r, fixtures::RESIZE, true);
}

#[test]
fn resize_to_a_narrow_terminal_redraws_pi_at_90_columns_without_side_pane() {
    let r = replay(fixtures::RESIZE_NARROW, HostCaps::default());
    assert_eq!(r.mirror.screen().size().1.get(), 90);
    assert_transcript(r.mirror.screen());
    assert_eq!(fixtures::RESIZE_NARROW.host, (90, 30));
    let drawn = draw_and_check("resize_90x30", &r, fixtures::RESIZE_NARROW, false);
    assert!(
        !drawn.join("\n").contains("uptime"),
        "no side pane below 100 columns"
    );
}
