//! pokeshell's whole screen drawn by `Session::draw` into a ratatui `TestBackend`, for insta snapshots.

use std::path::Path;

use pokeshell_core::config::{ConfigPaths, Settings};
use pokeshell_core::session::{Input, Session, SessionOptions};
use pokeshell_core::supervisor::Now;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use unicode_width::UnicodeWidthStr;

/// The terminal that types into the session and whose view is drawn.
pub const CLIENT: u64 = 1;

/// The pid the side pane shows.
pub const PID: i32 = 4242;

/// The defaults: paths that do not exist, no file loaded, nothing read from this machine.
pub fn settings() -> Settings {
    let paths = ConfigPaths::resolve(
        Some(Path::new("/nonexistent/home")),
        None,
        Path::new("/nonexistent/work"),
    )
    .expect("config paths from a fixed home");
    Settings::from_loaded(paths, Vec::new())
}

/// pokeshell in a `cols`×`rows` terminal, hosting pi with pid `PID`, started at `t0`.
pub fn app(cols: u16, rows: u16, t0: Now) -> Session {
    let opts = SessionOptions {
        label: "pi".into(),
        ..SessionOptions::default()
    };
    let mut app = Session::new(opts, settings(), cols, rows, t0);
    app.handle(Input::ChildStarted { pid: PID }, t0);
    app
}

/// One frame of `app` with `screen` in its pane, drawn at `now` as [`CLIENT`] sees it.
pub fn draw(app: &Session, screen: &vt100::Screen, now: Now) -> Terminal<TestBackend> {
    let (cols, rows) = {
        let areas = app.areas();
        let footer = areas.footer.map_or(0, |f| f.height);
        let side = areas.side.map_or(0, |s| s.width);
        (areas.pane.width + side, areas.pane.height + footer)
    };
    let mut terminal = Terminal::new(TestBackend::new(cols, rows)).expect("a test terminal");
    terminal
        .draw(|frame| app.draw_whole(frame, screen, now, None, Some(CLIENT)))
        .expect("draw into the test terminal");
    terminal
}

/// The rows of the drawn screen as text (a wide character once, not followed by its filler cell).
pub fn rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            let mut line = String::new();
            let mut x = 0;
            while x < buffer.area.width {
                let symbol = buffer[(x, y)].symbol();
                line.push_str(symbol);
                x += (symbol.width() as u16).max(1);
            }
            line
        })
        .collect()
}

/// Snapshot settings that blank what changes from run to run: the side pane's pid and uptime, and
/// the durations pi prints for a tool call (a re-recording may take longer). Each replacement keeps
/// the row's width, so the columns still line up in the .snap files.
pub fn insta_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    // The side pane is the right-most part of its rows: its value runs to the end of the row.
    s.add_filter(r#"(│ pid     )\d+ *""#, r#"${1}[pid]                 ""#);
    s.add_filter(r#"(│ uptime  )[^"│]+""#, r#"${1}[uptime]              ""#);
    s.add_filter(r"(Took|Elapsed) \d+\.\ds", "$1 N.Ns");
    s
}
