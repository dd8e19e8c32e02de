//! Snapshots of what one session shows of the others: the side pane's session list with three
//! sessions, and the session switcher (prefix+w).

mod support;

use pokeshell::term::screen::{HostCaps, Mirror};
use pokeshell_core::session::{Attention, Input, OverlayKind, Session, SessionBrief, SessionOptions};
use pokeshell_core::supervisor::Now;
use pokeshell_core::ui::switcher::Switcher;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use support::snapshot;

/// 2026-11-30T17:00:00Z on the wall clock.
const WALL: u64 = 1_796_058_000_000;

fn brief(number: u32, name: &str, dir: &str, attention: Attention, state: &str) -> SessionBrief {
    SessionBrief {
        created_wall_ms: WALL,
        attached: 1,
        ..SessionBrief::new(number, name, dir, attention, state)
    }
}

/// Session 1 (this one, idle), session 2 waiting on a question, session 3 running a tool for 65 s.
fn three() -> Vec<SessionBrief> {
    let mut docs = brief(3, "docs", "/home/u/src/docs", Attention::Working, "working");
    docs.tool = Some(("bash".into(), WALL - 65_000));
    vec![
        brief(1, "api", "/home/u/src/api", Attention::Idle, "idle"),
        brief(
            2,
            "web-frontend",
            "/home/u/src/web",
            Attention::Question,
            "waiting for you: Allow the edit?",
        ),
        docs,
    ]
}

/// Session 1 of the server in a 100×24 terminal, told about the three sessions.
fn session_one(t0: Now) -> Session {
    let opts = SessionOptions {
        label: "pi".into(),
        spec: pokeshell_core::spec::SessionSpec {
            number: 1,
            name: "api".into(),
            dir: "/home/u/src/api".into(),
            ..Default::default()
        },
        ..SessionOptions::default()
    };
    let mut s = Session::new(opts, snapshot::settings(), 100, 24, t0);
    s.handle(Input::Sessions(three()), t0);
    s
}

#[test]
fn snapshot_the_side_pane_lists_three_sessions_the_one_needing_the_user_first() {
    let t0 = Now::new(0, WALL);
    let s = session_one(t0);
    let screen = Mirror::new(s.pane().height, s.pane().width, HostCaps::default());
    let terminal = snapshot::draw(&s, screen.screen(), t0);
    let rows = snapshot::rows(&terminal);
    let at = |text: &str| rows.iter().position(|r| r.contains(text));
    let (web, docs, api) = (at("2 web"), at("3 docs"), at("▸1 api"));
    assert!(web.is_some() && web < docs && docs < api, "{}", rows.join("\n"));
    assert!(
        rows.iter().any(|r| r.contains("⏳ bash 1m 05s")),
        "{}",
        rows.join("\n")
    );
    snapshot::insta_settings().bind(|| insta::assert_snapshot!(terminal.backend()));
}

#[test]
fn snapshot_the_switcher_lists_every_session_with_its_state_and_directory() {
    let switcher = Switcher::new(three(), 1);
    let mut terminal = Terminal::new(TestBackend::new(90, 12)).expect("a test terminal");
    terminal
        .draw(|f| f.render_widget(&switcher, f.area()))
        .expect("draw the switcher");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn the_switcher_opens_from_the_session_over_its_panes() {
    let t0 = Now::new(0, WALL);
    let mut s = session_one(t0);
    s.handle(
        Input::Stdin {
            client: snapshot::CLIENT,
            bytes: b"\x1dwweb".to_vec(),
        },
        t0,
    );
    assert_eq!(s.overlay(snapshot::CLIENT), Some(OverlayKind::Switcher));
    let screen = Mirror::new(s.pane().height, s.pane().width, HostCaps::default());
    let rows = snapshot::rows(&snapshot::draw(&s, screen.screen(), t0));
    let text = rows.join("\n");
    assert!(text.contains("> web"), "{text}");
    assert!(
        text.contains("web-frontend") && text.contains("/home/u/src/web"),
        "{text}"
    );
    assert!(
        !rows.iter().any(|r| r.contains("/home/u/src/docs")),
        "filtered out: {text}"
    );
}
