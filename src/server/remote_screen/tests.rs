//! The server's screen: sizes, frames per client, slow clients, requests.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::*;

fn client(cols: u16, rows: u16) -> (ClientLink, UnboundedReceiver<ClientOut>) {
    let (tx, rx) = unbounded_channel();
    let link = ClientLink {
        tx,
        cols,
        rows,
        queued: Arc::new(AtomicUsize::new(0)),
        watch: false,
    };
    (link, rx)
}

fn bytes(rx: &mut UnboundedReceiver<ClientOut>) -> Vec<u8> {
    let mut out = Vec::new();
    while let Ok(o) = rx.try_recv() {
        if let ClientOut::Bytes(b) = o {
            out.extend(b);
        }
    }
    out
}

#[test]
fn the_smallest_client_sets_the_size_and_it_grows_back_when_it_leaves() {
    let mut s = RemoteScreen::new(80, 24).unwrap();
    let (a, _ra) = client(120, 40);
    let (b, _rb) = client(100, 50);
    s.attach(1, a);
    assert_eq!(s.size().unwrap(), (120, 40));
    s.attach(2, b);
    assert_eq!(s.size().unwrap(), (100, 40), "each dimension takes the smaller");
    s.client_resize(2, 90, 30);
    assert_eq!(s.size().unwrap(), (90, 30));
    s.detach(2);
    assert_eq!(s.size().unwrap(), (120, 40));
    s.detach(1);
    assert_eq!(
        s.size().unwrap(),
        (120, 40),
        "nobody attached: the last size stays"
    );
    assert_eq!(s.attached(), 0);
}

#[test]
fn frames_go_to_every_client_and_a_newcomers_modes_only_to_it() {
    let mut s = RemoteScreen::new(20, 5).unwrap();
    let (a, mut ra) = client(20, 5);
    let (b, mut rb) = client(20, 5);
    s.attach(1, a);
    s.attach(2, b);
    s.frame(&[], |b, _, _| whole(b, "hello")).unwrap();
    let (got_a, got_b) = (bytes(&mut ra), bytes(&mut rb));
    assert!(String::from_utf8_lossy(&got_a).contains("hello"));
    assert_eq!(got_a, got_b, "the same bytes for both");
    s.write_to(2, b"\x1b[>1u").unwrap();
    assert!(bytes(&mut ra).is_empty());
    assert_eq!(bytes(&mut rb), b"\x1b[>1u");
}

#[test]
fn a_client_that_does_not_read_is_dropped_instead_of_growing_the_server() {
    let mut s = RemoteScreen::new(20, 5).unwrap();
    let (slow, _keep) = client(20, 5);
    let queued = slow.queued.clone();
    let (fast, mut rf) = client(30, 10);
    s.attach(1, slow);
    s.attach(2, fast);
    assert_eq!(s.size().unwrap(), (20, 5));
    queued.store(MAX_QUEUED, Ordering::Release);
    s.write_raw(b"more").unwrap();
    assert_eq!(s.attached(), 1, "the slow one is gone");
    assert_eq!(s.take_dropped(), vec![1], "and the loop hears of it, once");
    assert!(s.take_dropped().is_empty());
    assert_eq!(s.size().unwrap(), (30, 10), "and no longer holds the size down");
    assert_eq!(bytes(&mut rf), b"more");
}

#[test]
fn a_request_goes_to_the_server_for_the_client_whose_keys_asked() {
    let mut s = RemoteScreen::new(20, 5).unwrap();
    let (server, mut requests) = unbounded_channel();
    s.server = Some(server);
    let (a, mut ra) = client(20, 5);
    let (b, mut rb) = client(20, 5);
    s.attach(1, a);
    s.attach(2, b);
    s.request(1, pokeshell_core::session::WorkspaceRequest::Detach);
    assert!(matches!(
        requests.try_recv(),
        Ok(ServerMsg::Event(ServerEvent::Request {
            id: 1,
            req: pokeshell_core::session::WorkspaceRequest::Detach
        }))
    ));
    // Each heard the pane's size at its attach, and nothing since.
    let only_sizes = |rx: &mut UnboundedReceiver<ClientOut>| {
        std::iter::from_fn(|| rx.try_recv().ok()).all(|o| matches!(o, ClientOut::Size { .. }))
    };
    assert!(
        only_sizes(&mut ra) && only_sizes(&mut rb),
        "nothing for the clients themselves"
    );
}

/// What a client's terminal shows after the bytes it got, one string per row.
struct Term(vt100::Parser);

impl Term {
    fn new() -> Self {
        let n = |v| std::num::NonZeroU16::new(v).unwrap();
        Self(vt100::Parser::new(n(5), n(20), 0))
    }

    fn read(&mut self, rx: &mut UnboundedReceiver<ClientOut>) -> String {
        self.0.process(&bytes(rx));
        // Cells drawn blank and cells never drawn read the same.
        self.0.screen().contents().trim_end().to_string()
    }
}

/// Draws `text` as the whole frame.
fn whole(b: &mut Buffer, text: &str) -> (Painted, vt100::CursorStyle) {
    b.reset();
    ratatui::widgets::Widget::render(ratatui::widgets::Paragraph::new(text), b.area, b);
    let painted = Painted {
        rows: vec![true; usize::from(b.area.height)],
        cursor: None,
    };
    (painted, vt100::CursorStyle::Default)
}

fn say(b: &mut Buffer, _: &mut Drawn, viewer: Option<u64>) -> (Painted, vt100::CursorStyle) {
    let text = match viewer {
        None => "pane".to_string(),
        Some(id) => format!("overlay of {id}"),
    };
    whole(b, &text)
}

#[test]
fn a_client_with_an_overlay_sees_its_own_frame_and_the_others_the_shared_one() {
    let mut s = RemoteScreen::new(20, 5).unwrap();
    let (a, mut ra) = client(20, 5);
    let (b, mut rb) = client(20, 5);
    s.attach(1, a);
    s.attach(2, b);
    let (mut ta, mut tb) = (Term::new(), Term::new());
    s.frame(&[], say).unwrap();
    assert_eq!(ta.read(&mut ra), "pane");
    assert_eq!(tb.read(&mut rb), "pane");

    s.frame(&[2], say).unwrap();
    assert_eq!(ta.read(&mut ra), "pane", "A's frame is unchanged");
    assert_eq!(tb.read(&mut rb), "overlay of 2");

    // B closes its overlay: it gets the whole shared screen back, A nothing it does not need.
    s.frame(&[], say).unwrap();
    let to_a = bytes(&mut ra);
    assert!(
        !String::from_utf8_lossy(&to_a).contains("pane"),
        "A's screen did not change: no cell of it is sent again"
    );
    ta.0.process(&to_a);
    assert_eq!(ta.0.screen().contents().trim_end(), "pane");
    assert_eq!(tb.read(&mut rb), "pane");
}

#[test]
fn a_lone_client_is_drawn_once_its_overlay_included() {
    let mut s = RemoteScreen::new(20, 5).unwrap();
    let (a, mut ra) = client(20, 5);
    s.attach(1, a);
    let mut seen = Vec::new();
    s.frame(&[1], |b, d, viewer| {
        seen.push(viewer);
        say(b, d, viewer)
    })
    .unwrap();
    assert_eq!(seen, vec![Some(1)]);
    let mut ta = Term::new();
    assert_eq!(ta.read(&mut ra), "overlay of 1");
    s.frame(&[], say).unwrap();
    assert_eq!(ta.read(&mut ra), "pane");
}

#[test]
fn a_lone_client_that_had_a_frame_of_its_own_is_drawn_whole_again() {
    let mut s = RemoteScreen::new(20, 5).unwrap();
    let (a, mut ra) = client(20, 5);
    let (b, _rb) = client(20, 5);
    s.attach(1, a);
    s.attach(2, b);
    let mut ta = Term::new();
    s.frame(&[], say).unwrap();
    s.frame(&[1], say).unwrap();
    assert_eq!(ta.read(&mut ra), "overlay of 1");
    // B leaves while A's overlay is open; A closes it: the shared terminal never drew the
    // overlay, so A gets its whole screen.
    s.detach(2);
    s.frame(&[], say).unwrap();
    assert_eq!(ta.read(&mut ra), "pane");
}

#[test]
fn a_client_dropped_for_not_reading_is_reported_to_the_server() {
    let mut s = RemoteScreen::new(20, 5).unwrap();
    let (server, mut heard) = unbounded_channel();
    s.server = Some(server);
    let (slow, _keep) = client(20, 5);
    slow.queued.store(MAX_QUEUED, Ordering::Release);
    s.attach(7, slow);
    s.write_raw(b"more").unwrap();
    assert!(matches!(
        heard.try_recv(),
        Ok(ServerMsg::Event(ServerEvent::Lagged {
            id: 7,
            bound: MAX_QUEUED
        }))
    ));
}

fn sizes(rx: &mut UnboundedReceiver<ClientOut>) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    while let Ok(o) = rx.try_recv() {
        if let ClientOut::Size { cols, rows } = o {
            out.push((cols, rows));
        }
    }
    out
}

#[test]
fn a_watching_client_does_not_shrink_the_pane_unless_it_is_alone() {
    let mut s = RemoteScreen::new(80, 24).unwrap();
    let (desk, mut rd) = client(160, 50);
    let (mut phone, mut rp) = client(40, 30);
    phone.watch = true;
    s.attach(1, desk);
    s.attach(2, phone);
    assert_eq!(s.size().unwrap(), (160, 50), "the phone only watches");
    assert_eq!(
        sizes(&mut rp),
        vec![(160, 50)],
        "the newcomer hears the pane's size"
    );
    assert_eq!(
        sizes(&mut rd),
        vec![(160, 50)],
        "the desk heard it once, at its attach"
    );
    s.client_resize(2, 30, 20);
    assert_eq!(s.size().unwrap(), (160, 50));
    assert!(sizes(&mut rd).is_empty(), "nothing changed");
    s.detach(1);
    assert_eq!(s.size().unwrap(), (30, 20), "alone, the watcher's size counts");
    assert_eq!(sizes(&mut rp), vec![(30, 20)]);
}
