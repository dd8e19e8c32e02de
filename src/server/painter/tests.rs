use std::num::NonZeroU16;

use super::*;
use pokeshell_core::brief::{Attention, SessionBrief};
use pokeshell_core::session::{Input, Session, SessionOptions};
use pokeshell_core::supervisor::Now;

const CLIENT: u64 = 3;

/// A session of the server, pi's screen, and the time.
struct World {
    session: Session,
    pi: vt100::Parser,
    now: Now,
}

impl World {
    fn new(cols: u16, rows: u16) -> Self {
        let now = Now::new(0, 1_796_058_000_000);
        let settings = pokeshell_core::config::Settings::from_loaded(
            pokeshell_core::config::ConfigPaths::resolve(
                Some(std::path::Path::new("/nonexistent/home")),
                None,
                std::path::Path::new("/nonexistent/work"),
            )
            .expect("config paths from a fixed home"),
            Vec::new(),
        );
        let opts = SessionOptions {
            label: "pi".into(),
            ..SessionOptions::default()
        };
        let mut session = Session::new(opts, settings, cols, rows, now);
        session.handle(Input::ChildStarted { pid: 42 }, now);
        let pane = session.areas().pane;
        let pi = vt100::Parser::new(nz(pane.height), nz(pane.width), 0);
        Self { session, pi, now }
    }

    fn handle(&mut self, input: Input) {
        self.session.handle(input, self.now);
        let pane = self.session.areas().pane;
        self.pi.screen_mut().set_size(nz(pane.height), nz(pane.width));
    }

    /// One frame through `painter` as `viewer` sees it.
    fn frame(&self, painter: &mut Painter, whole: bool, viewer: Option<u64>) -> Vec<u8> {
        let (bytes, _) = painter
            .draw(whole, |buf, drawn| {
                let painted = self
                    .session
                    .draw(buf, drawn, self.pi.screen().into(), self.now, None, viewer);
                (painted, vt100::CursorStyle::Default)
            })
            .expect("a frame");
        bytes
    }
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n.max(1)).expect("at least 1")
}

/// A client's terminal: what it shows after the bytes it was sent.
fn terminal(cols: u16, rows: u16) -> vt100::Parser {
    vt100::Parser::new(nz(rows), nz(cols), 0)
}

/// Everything a terminal shows: every cell with its colours (a blank drawn and a cell never drawn
/// look the same), and the cursor if it is shown.
fn seen(t: &vt100::Parser) -> (Vec<String>, Option<(u16, u16)>) {
    let s = t.screen();
    let (rows, cols) = s.size();
    let cells = (0..rows.get())
        .flat_map(|r| (0..cols.get()).map(move |c| (r, c)))
        .filter_map(|(r, c)| s.cell(r, c))
        .map(|cell| {
            let text = if cell.has_contents() { cell.contents() } else { " " };
            let look = (
                cell.fgcolor(),
                cell.bgcolor(),
                cell.bold(),
                cell.dim(),
                cell.italic(),
            );
            format!("{text}{look:?}{}{}", cell.underline(), cell.inverse())
        })
        .collect();
    (cells, (!s.hide_cursor()).then(|| s.cursor_position()))
}

#[test]
fn a_key_echoed_sends_the_row_it_changed_and_nothing_else() {
    let mut w = World::new(120, 40);
    w.pi.process(b"first line\r\nsecond line\r\n> ");
    let mut painter = Painter::new(120, 40);
    let mut t = terminal(120, 40);
    t.process(&w.frame(&mut painter, false, None));
    w.pi.process(b"h");
    let bytes = w.frame(&mut painter, false, None);
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains('h'), "{text:?}");
    assert!(
        !text.contains("line"),
        "rows that did not change are not sent again: {text:?}"
    );
    assert!(!text.contains("pi"), "neither is the side pane: {text:?}");
    t.process(&bytes);
    let mut fresh = terminal(120, 40);
    fresh.process(&w.frame(&mut Painter::new(120, 40), true, None));
    assert_eq!(seen(&t), seen(&fresh));
}

#[test]
fn a_wide_character_overwritten_by_narrow_ones_leaves_none_of_their_colour_behind() {
    // The row alone changes, or every row does (then the painter compares the whole frame).
    for every_row in [false, true] {
        let mut w = World::new(100, 20);
        let mut painter = Painter::new(100, 20);
        let mut t = terminal(100, 20);
        w.pi.process("界界".as_bytes());
        t.process(&w.frame(&mut painter, false, None));
        // "red" on blue ends in the first half of the second wide character: its other half is
        // blank.
        w.pi.process(b"\x1b[2J\x1b[H\x1b[31;44mred\x1b[0m");
        if every_row {
            w.pi.process("\r\nmore".repeat(15).as_bytes());
        }
        t.process(&w.frame(&mut painter, false, None));
        let mut fresh = terminal(100, 20);
        fresh.process(&w.frame(&mut Painter::new(100, 20), true, None));
        let half = t.screen().cell(0, 3).expect("a cell");
        assert_eq!(
            half.bgcolor(),
            vt100::Color::Default,
            "no blue where pi has none ({every_row})"
        );
        assert!(
            seen(&t) == seen(&fresh),
            "the terminal shows what a whole frame shows ({every_row})"
        );
    }
}

#[test]
fn a_size_that_changed_and_changed_back_between_frames_draws_the_whole_screen() {
    let w = World::new(100, 20);
    let mut painter = Painter::new(100, 20);
    w.frame(&mut painter, false, None);
    // The terminal was made smaller and bigger again: it may have lost what it showed.
    painter.set_size(60, 8);
    painter.set_size(100, 20);
    let text = String::from_utf8_lossy(&w.frame(&mut painter, false, None)).into_owned();
    assert!(text.contains("\x1b[2J") && text.contains("p:on"), "{text:?}");
}

#[test]
fn a_frame_with_nothing_changed_sends_no_cell() {
    let mut w = World::new(100, 20);
    w.pi.process(b"hello");
    let mut painter = Painter::new(100, 20);
    w.frame(&mut painter, false, None);
    let bytes = w.frame(&mut painter, false, None);
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("hello") && !text.contains("pi"), "{text:?}");
}

/// What can happen between two frames.
#[derive(Debug, Clone)]
enum Step {
    Pi(&'static str),
    /// Time passes (the side pane's clocks move).
    Wait(u64),
    Notice(&'static str),
    Sessions(u32),
    Keys(&'static [u8]),
    Resize(u16, u16),
    /// A frame as the client with its own view sees it (or everyone's frame).
    Frame {
        own: bool,
        whole: bool,
    },
}

const PI: &[&str] = &[
    "hello ",
    "\x1b[31mred\x1b[0m",
    "\x1b[1;44mbold on blue\x1b[0m",
    "界界",
    "\r\n",
    "\x1b[2J\x1b[H",
    "\x1b[K",
    "\x1b[3;1H\x1b[7mrev\x1b[0m",
    "\x1b[?25l",
    "\x1b[?25h",
    "\x1b[?1049h",
    "\x1b[?1049l",
];

const KEYS: &[&[u8]] = &[b"\x1d", b"?", b"s", b"\x1b", b"x", b"\x1di"];

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        4 => proptest::sample::select(PI).prop_map(Step::Pi),
        1 => (100u64..3000).prop_map(Step::Wait),
        1 => proptest::sample::select(&["saved", "a longer message than that"][..]).prop_map(Step::Notice),
        1 => (1u32..4).prop_map(Step::Sessions),
        2 => proptest::sample::select(KEYS).prop_map(Step::Keys),
        1 => (60u16..130, 8u16..30).prop_map(|(c, r)| Step::Resize(c, r)),
        4 => (any::<bool>(), proptest::bool::weighted(0.1)).prop_map(|(own, whole)| Step::Frame { own, whole }),
    ]
}

fn briefs(n: u32) -> Vec<SessionBrief> {
    (1..=n)
        .map(|i| SessionBrief::new(i, &format!("s{i}"), "/w", Attention::Working, "working"))
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(128))]
    /// Whatever happens between frames, a terminal sent only what changed shows what a terminal
    /// sent the whole frame shows, both for the shared frame and for a client's own.
    #[test]
    fn frames_of_changes_show_what_a_whole_frame_shows(steps in proptest::collection::vec(step(), 1..60)) {
        let (mut cols, mut rows) = (100u16, 20u16);
        let mut w = World::new(cols, rows);
        let mut painters = [Painter::new(cols, rows), Painter::new(cols, rows)];
        let mut terminals = [terminal(cols, rows), terminal(cols, rows)];
        for step in steps {
            match step {
                Step::Pi(bytes) => w.pi.process(bytes.as_bytes()),
                Step::Wait(ms) => {
                    w.now = Now::new(w.now.mono_ms + ms, w.now.wall_ms + ms);
                    w.handle(Input::Tick);
                }
                Step::Notice(text) => w.handle(Input::Notice { text: text.into(), tone: pokeshell_core::ui::theme::Tone::Ok }),
                Step::Sessions(n) => w.handle(Input::Sessions(briefs(n))),
                Step::Keys(bytes) => w.handle(Input::Stdin { client: CLIENT, bytes: bytes.to_vec() }),
                Step::Resize(c, r) => {
                    (cols, rows) = (c, r);
                    w.handle(Input::Resize { cols, rows });
                    for (p, t) in painters.iter_mut().zip(&mut terminals) {
                        p.set_size(cols, rows);
                        t.screen_mut().set_size(nz(rows), nz(cols));
                    }
                }
                Step::Frame { own, whole } => {
                    let (i, viewer) = if own { (1, Some(CLIENT)) } else { (0, None) };
                    let bytes = w.frame(&mut painters[i], whole, viewer);
                    terminals[i].process(&bytes);
                    let mut fresh = terminal(cols, rows);
                    fresh.process(&w.frame(&mut Painter::new(cols, rows), true, viewer));
                    let (got, want) = (seen(&terminals[i]), seen(&fresh));
                    let first = got.0.iter().zip(&want.0).position(|(a, b)| a != b);
                    proptest::prop_assert!(
                        first.is_none() && got.1 == want.1,
                        "cell {:?}: {:?} where a whole frame shows {:?}; cursor {:?} {:?}",
                        first.map(|i| (i / usize::from(cols), i % usize::from(cols))),
                        first.map(|i| &got.0[i]),
                        first.map(|i| &want.0[i]),
                        got.1,
                        want.1,
                    );
                }
            }
        }
    }
}
