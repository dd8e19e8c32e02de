//! The status overlay: effective configuration, live lines, warnings.

use std::path::{Path, PathBuf};

use pokeshell_core::config::files::{self, ConfigFile, FileFormat};
use pokeshell_core::config::{ConfigPaths, Scope, Settings};
use pokeshell_core::ui::status_overlay::{LiveLine, StatusOverlay};
use pokeshell_core::ui::theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn settings(global: &str) -> Settings {
    let paths = ConfigPaths::resolve(Some(Path::new("/home/u")), None, Path::new("/work/app")).unwrap();
    let path = PathBuf::from("/home/u/.pi/agent/settings.json");
    let file = files::parse(
        ConfigFile {
            path,
            scope: Scope::Global,
            format: FileFormat::PiSettings,
        },
        global,
    );
    Settings::from_loaded(paths, vec![file])
}

#[test]
fn status_lists_the_configuration_live_state_and_warnings() {
    let s = settings(
        r#"{"poke": {"autoAbort": true, "thresholdSeconds": 45}, "toolTimeoutMs": 40000, "handoff": {"enabled": false}}"#,
    );
    let live = [
        LiveLine::new("Tools running", "1 (bash, 52s)"),
        LiveLine::new("Pokes this episode", "0 of 2"),
    ];
    let text = StatusOverlay::new(&s, &live).text();
    assert!(text.contains("Automatic supervision on"), "{text}");
    assert!(
        text.contains("45s, then the call is aborted (pi's own tool timeout: 40000 ms)"),
        "{text}"
    );
    assert!(
        text.contains("Mid-tool stall poke   off while auto-abort is on"),
        "{text}"
    );
    assert!(text.contains("Handoff               only when asked"), "{text}");
    assert!(text.contains("Tools running         1 (bash, 52s)"), "{text}");
    assert!(
        text.contains("Warnings (1)") && text.contains("toolTimeoutMs"),
        "{text}"
    );
    assert!(text.contains("ctrl+] then p"), "{text}");
}

#[test]
fn snapshot_status_overlay() {
    let s = settings(r#"{"poke": {"enabled": false}, "pokeshell": {"prefixKey": "ctrl+a"}}"#);
    let live = [
        LiveLine::new("Tools running", "0"),
        LiveLine::new("Bridge", "connected"),
    ];
    let overlay = StatusOverlay::new(&s, &live);
    let mut terminal = Terminal::new(TestBackend::new(80, 26)).unwrap();
    terminal.draw(|f| f.render_widget(&overlay, f.area())).unwrap();
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn tiny_terminals_do_not_break_the_overlay() {
    let overlay = StatusOverlay::new(
        &settings(r#"{"poke": 1}"#),
        &[LiveLine::new("Tools running", "3")],
    );
    for (w, h) in [(1, 1), (2, 2), (5, 3), (12, 4), (30, 6)] {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| f.render_widget(&overlay, f.area())).unwrap();
        let top_left = terminal.backend().buffer()[(0, 0)].symbol().to_string();
        assert!(w < 2 || top_left == "┌", "{w}x{h}: {top_left}");
    }
}

#[test]
fn the_status_overlay_draws_in_the_theme_colours() {
    let s = settings(r#"{"poke": 1}"#);
    let overlay = StatusOverlay::new(&s, &[LiveLine::new("Tools running", "0")]);
    let mut terminal = Terminal::new(TestBackend::new(80, 30)).unwrap();
    terminal.draw(|f| f.render_widget(&overlay, f.area())).unwrap();
    let buf = terminal.backend().buffer();
    let find = |text: &str| {
        (0..buf.area.height).find_map(|y| {
            let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            row.find(text).map(|i| (row[..i].chars().count() as u16, y))
        })
    };
    let style = |(x, y): (u16, u16)| buf[(x, y)].style();
    let corner = find("┌").expect("the frame's corner");
    assert_eq!(style(corner).fg, theme::accent().fg);
    let heading = find("Now").expect("the live heading");
    assert_eq!(style(heading).fg, theme::heading().fg);
    assert!(
        style(heading)
            .add_modifier
            .contains(theme::heading().add_modifier)
    );
    let label = find("Tools running").expect("a live label");
    assert_eq!(style(label).fg, theme::muted().fg);
    let warning = find("⚠").expect("the settings warning");
    assert_eq!(style(warning).fg, theme::warn().fg);
}
