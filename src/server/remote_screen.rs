//! A session's screen in the server: the clients attached to it. Frames are drawn once into a
//! buffer and the same bytes go to every client; the session's size is the smallest client's (as
//! tmux does), so that every client shows the whole of it. A client that stops reading is dropped
//! rather than let the server's memory grow.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use ratatui::{Frame, Terminal};

use tokio::sync::mpsc::UnboundedSender;

use super::backend::BufferBackend;
use super::serve::ServerMsg;
use crate::event_loop::{ClientLink, ClientOut, Screen};

/// A client with this many bytes not yet written to its socket is dropped.
pub const MAX_QUEUED: usize = 32 << 20;

pub struct RemoteScreen {
    terminal: Terminal<BufferBackend>,
    clients: BTreeMap<u64, ClientLink>,
    last_typist: Option<u64>,
    /// The size while nobody is attached: the last one a client had.
    size: (u16, u16),
    /// `pokeshell.notifyCommand` as the session's settings have it now, and the session's name.
    pub notify: Arc<Mutex<NotifyTarget>>,
    /// Where a notification goes when nobody is attached: the server.
    pub away: Option<UnboundedSender<ServerMsg>>,
}

#[derive(Debug, Default, Clone)]
pub struct NotifyTarget {
    pub command: String,
    pub session: String,
}

/// A notification of a session nobody is attached to.
#[derive(Debug, Clone)]
pub struct AwayNote {
    pub text: String,
    pub bell: bool,
    pub desktop: bool,
    pub target: NotifyTarget,
}

impl AwayNote {
    /// Runs `pokeshell.notifyCommand`, if set.
    pub fn run_command(&self) {
        if self.target.command.trim().is_empty() {
            return;
        }
        if let Err(e) = crate::notify_command::run(&self.target.command, &self.text, &self.target.session) {
            eprintln!("pokeshell: pokeshell.notifyCommand: {e}");
        }
    }

    /// The bell and desktop notification for a terminal that shows another session: the text
    /// names this one.
    pub fn bytes(&self) -> Vec<u8> {
        let text = format!("{}: {}", self.target.session, self.text);
        crate::notify::desktop(&text, self.bell, self.desktop)
    }
}

impl RemoteScreen {
    pub fn new(cols: u16, rows: u16) -> Result<Self> {
        let terminal = Terminal::new(BufferBackend::new(cols, rows)).context("cannot set up drawing")?;
        Ok(Self {
            terminal,
            clients: BTreeMap::new(),
            last_typist: None,
            size: (cols, rows),
            notify: Arc::default(),
            away: None,
        })
    }

    /// Sends what was drawn to every client.
    fn flush_out(&mut self) {
        let bytes = self.terminal.backend_mut().take();
        if bytes.is_empty() {
            return;
        }
        let mut gone = Vec::new();
        for (id, c) in &self.clients {
            let queued = c.queued.fetch_add(bytes.len(), Ordering::AcqRel) + bytes.len();
            if queued > MAX_QUEUED || c.tx.send(ClientOut::Bytes(bytes.clone())).is_err() {
                gone.push(*id);
            }
        }
        for id in gone {
            self.clients.remove(&id);
            self.resize_to_clients(None);
        }
    }

    /// The smallest size of the clients that count: those that do not only watch, or every client
    /// when all of them only watch (a phone looking in does not shrink the desktop's pi). Every
    /// client hears the size when it changed, a newcomer always.
    fn resize_to_clients(&mut self, newcomer: Option<u64>) {
        let before = self.size;
        let all_watch = self.clients.values().all(|c| c.watch);
        let counted = || self.clients.values().filter(|c| all_watch || !c.watch);
        let cols = counted().map(|c| c.cols).min();
        let rows = counted().map(|c| c.rows).min();
        if let (Some(cols), Some(rows)) = (cols, rows) {
            self.size = (cols.max(1), rows.max(1));
        }
        self.terminal.backend_mut().set_size(self.size.0, self.size.1);
        let (cols, rows) = self.size;
        for (id, c) in &self.clients {
            if self.size != before || newcomer == Some(*id) {
                let _ = c.tx.send(ClientOut::Size { cols, rows });
            }
        }
    }
}

impl Screen for RemoteScreen {
    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.terminal.backend_mut().push(bytes);
        self.flush_out();
        Ok(())
    }

    fn size(&self) -> Result<(u16, u16)> {
        Ok(self.size)
    }

    fn suspend(&mut self) -> Result<()> {
        for c in self.clients.values() {
            let _ = c.tx.send(ClientOut::Suspend);
        }
        Ok(())
    }

    fn suspend_blocks(&self) -> bool {
        false
    }

    fn clear(&mut self, cols: u16, rows: u16) -> Result<()> {
        self.terminal.backend_mut().set_size(cols, rows);
        self.terminal
            .resize(ratatui::layout::Rect::new(0, 0, cols, rows))
            .context("cannot draw again")?;
        self.terminal.clear().context("cannot draw again")?;
        self.flush_out();
        Ok(())
    }

    fn frame(&mut self, build: impl FnOnce(&mut Frame) -> vt100::CursorStyle) -> Result<vt100::CursorStyle> {
        // Synchronized, so that no client shows half of a frame.
        self.terminal.backend_mut().push(b"\x1b[?2026h");
        let mut style = vt100::CursorStyle::Default;
        self.terminal.draw(|f| style = build(f)).context("cannot draw")?;
        self.terminal.backend_mut().push(b"\x1b[?2026l");
        self.flush_out();
        Ok(style)
    }

    fn cursor_style(&mut self, style: vt100::CursorStyle) -> Result<()> {
        let mut bytes = Vec::new();
        crossterm::queue!(bytes, crate::event_loop::cursor_style(style)).context("cannot set the cursor")?;
        self.write_raw(&bytes)
    }

    fn attach(&mut self, id: u64, link: ClientLink) {
        self.clients.insert(id, link);
        self.resize_to_clients(Some(id));
    }

    fn detach(&mut self, id: u64) {
        self.clients.remove(&id);
        if self.last_typist == Some(id) {
            self.last_typist = None;
        }
        self.resize_to_clients(None);
    }

    fn write_to(&mut self, id: u64, bytes: &[u8]) -> Result<()> {
        if let Some(c) = self.clients.get(&id)
            && !bytes.is_empty()
        {
            c.queued.fetch_add(bytes.len(), Ordering::AcqRel);
            let _ = c.tx.send(ClientOut::Bytes(bytes.to_vec()));
        }
        Ok(())
    }

    fn attached(&self) -> usize {
        self.clients.len()
    }

    fn client_resize(&mut self, id: u64, cols: u16, rows: u16) {
        if let Some(c) = self.clients.get_mut(&id) {
            c.cols = cols;
            c.rows = rows;
        }
        self.resize_to_clients(None);
    }

    fn note_input_from(&mut self, id: u64) {
        self.last_typist = Some(id);
    }

    fn request(&mut self, req: crate::session::WorkspaceRequest) {
        let typist = self.last_typist.or_else(|| self.clients.keys().next().copied());
        if let Some(c) = typist.and_then(|id| self.clients.get(&id)) {
            let _ = c.tx.send(ClientOut::Request(req));
        }
    }

    fn notify_away(&mut self, text: &str, bell: bool, desktop: bool) {
        let target = self.notify.lock().map(|t| t.clone()).unwrap_or_default();
        let note = AwayNote {
            text: text.to_string(),
            bell,
            desktop,
            target,
        };
        // The server knows whether a terminal shows another session.
        match &self.away {
            Some(server) => {
                let _ = server.send(ServerMsg::Notify(note));
            }
            None => note.run_command(),
        }
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn frames_go_to_every_client_and_a_newcomers_modes_only_to_it() {
        let mut s = RemoteScreen::new(20, 5).unwrap();
        let (a, mut ra) = client(20, 5);
        let (b, mut rb) = client(20, 5);
        s.attach(1, a);
        s.attach(2, b);
        s.frame(|f| {
            f.render_widget(ratatui::widgets::Paragraph::new("hello"), f.area());
            vt100::CursorStyle::Default
        })
        .unwrap();
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
        assert_eq!(s.size().unwrap(), (30, 10), "and no longer holds the size down");
        assert_eq!(bytes(&mut rf), b"more");
    }

    #[test]
    fn a_request_goes_to_the_client_that_typed_last() {
        let mut s = RemoteScreen::new(20, 5).unwrap();
        let (a, mut ra) = client(20, 5);
        let (b, mut rb) = client(20, 5);
        s.attach(1, a);
        s.attach(2, b);
        s.note_input_from(2);
        s.request(crate::session::WorkspaceRequest::Detach);
        let requests = |rx: &mut UnboundedReceiver<ClientOut>| {
            std::iter::from_fn(|| rx.try_recv().ok())
                .filter(|o| matches!(o, ClientOut::Request(_)))
                .count()
        };
        assert_eq!(requests(&mut ra), 0);
        assert_eq!(requests(&mut rb), 1);
    }
}
