//! Snapshots of pokeshell's whole screen at two terminal sizes: 120×40, where the
//! side pane shows, and 90×30, where it hides itself; each with a recorded pi frame in the pane, with
//! the help overlay open, and with the settings dialog open. The plain frames are the replays of the
//! two resize fixtures (tests/fixtures_replay.rs: `resize_120x40`, `resize_90x30`).

mod support;

use pokeshell::term::screen::HostCaps;
use pokeshell_core::session::{Effect, Input, OverlayKind, Session};
use pokeshell_core::supervisor::Now;
use pokeshell_core::ui::help;
use support::fixtures::{self, Fixture, replay};
use support::snapshot;

/// The two sizes: the slice pi drew for each terminal's pane, and whether the side pane shows.
const WIDE: (Fixture, bool) = (fixtures::RESIZE, true);
const NARROW: (Fixture, bool) = (fixtures::RESIZE_NARROW, false);

/// pokeshell at the size `fixture` was drawn for, after `keys` were typed; the drawn rows are
/// snapshotted as `name` and returned.
#[track_caller]
fn screen_after(
    name: &str,
    (fixture, side): (Fixture, bool),
    keys: &[u8],
    overlay: OverlayKind,
) -> Vec<String> {
    let r = replay(fixture, HostCaps::default());
    let t0 = Now::new(0, 0);
    let (cols, rows) = fixture.host;
    let mut app: Session = snapshot::app(cols, rows, t0);
    let modes = r.mirror.modes();
    app.handle(
        Input::ChildOutput {
            modes,
            host_bytes: Vec::new(),
        },
        t0,
    );
    let effects = app.handle(
        Input::Stdin {
            client: snapshot::CLIENT,
            bytes: keys.to_vec(),
        },
        t0,
    );
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::ToChild(_))),
        "pokeshell's keys never reach pi: {effects:?}"
    );
    assert_eq!(app.overlay(snapshot::CLIENT), Some(overlay));
    assert_eq!(
        app.areas().side.is_some(),
        side,
        "side pane shown at {cols}×{rows}"
    );
    let terminal = snapshot::draw(&app, r.mirror.screen(), t0);
    let drawn = snapshot::rows(&terminal);
    assert_eq!(drawn.len(), usize::from(rows));
    assert!(drawn.iter().all(|l| {
        use unicode_width::UnicodeWidthStr;
        l.width() == usize::from(cols)
    }));
    assert!(
        drawn[usize::from(rows) - 1].contains("📌 p:on"),
        "pokeshell's footer stays"
    );
    snapshot::insta_settings().bind(|| insta::assert_snapshot!(name, terminal.backend()));
    drawn
}

#[track_caller]
fn assert_help(drawn: &[String], pane_rows: u16) {
    let text = drawn.join("\n");
    // The help is small: pi's frame stays visible around it, its footer included.
    let pi_footer = &drawn[usize::from(pane_rows) - 1];
    assert!(pi_footer.contains("mock-model"), "pi's footer: {pi_footer:?}");
    assert!(text.contains("pokeshell keys"), "{text}");
    assert!(text.contains("Press Ctrl+], then:"), "{text}");
    for (key, what) in help::KEYS {
        let key = if *key == "prefix" { "Ctrl+]" } else { key };
        assert!(
            drawn.iter().any(|l| l.contains(key) && l.contains(what)),
            "help lists {key} ({what}):\n{text}"
        );
    }
}

#[track_caller]
fn assert_settings(drawn: &[String]) {
    let text = drawn.join("\n");
    assert!(text.contains("pokeshell settings"), "{text}");
    assert!(
        drawn
            .iter()
            .any(|l| l.contains("› Watch and poke automatically") && l.contains("on")),
        "the master switch is selected and on:\n{text}"
    );
}

#[test]
fn help_overlay_120x40_with_side_pane() {
    let drawn = screen_after("help_120x40", WIDE, b"\x1d?", OverlayKind::Help);
    assert_help(&drawn, fixtures::RESIZE.rows);
    assert!(
        drawn.iter().any(|l| l.contains("pane    88×39")),
        "the side pane stays beside"
    );
}

#[test]
fn help_overlay_90x30_without_side_pane() {
    let drawn = screen_after("help_90x30", NARROW, b"\x1d?", OverlayKind::Help);
    assert_help(&drawn, fixtures::RESIZE_NARROW.rows);
}

#[test]
fn settings_dialog_120x40_with_side_pane() {
    let drawn = screen_after("settings_120x40", WIDE, b"\x1dc", OverlayKind::Settings);
    assert_settings(&drawn);
}

#[test]
fn settings_dialog_90x30_without_side_pane() {
    let drawn = screen_after("settings_90x30", NARROW, b"\x1dc", OverlayKind::Settings);
    assert_settings(&drawn);
}
