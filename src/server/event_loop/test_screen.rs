//! A screen for tests, shaped like the server's (`server/remote_screen.rs`): clients attach with a
//! size and leave, the session's size is the smallest attached client's (the last one while none
//! is), frames land in ratatui's `TestBackend` (the shared one, and one per client with a view of
//! its own), and what goes to the terminals and what the keys ask of the server is kept.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use ratatui::backend::TestBackend;
use ratatui::{Frame, Terminal};

use super::{ClientLink, Screen};
use pokeshell_core::session::{ClientId, Drawn, Painted, WorkspaceRequest};
use ratatui::buffer::Buffer;

pub struct TestScreen {
    pub terminal: Terminal<TestBackend>,
    /// The last frame of each client that had a view of its own then (an overlay, an armed prefix).
    pub own: BTreeMap<ClientId, Terminal<TestBackend>>,
    /// Bytes for every attached terminal.
    pub raw: Vec<u8>,
    /// Bytes for one client only.
    pub to: BTreeMap<ClientId, Vec<u8>>,
    /// How often the clients were told to give their terminal back (pi stopped itself).
    pub suspended: usize,
    /// What the clients' keys asked of the server, in order.
    pub requests: Vec<(ClientId, WorkspaceRequest)>,
    /// Clients to report dropped (as the server's screen drops one that stops reading).
    pub dropped: Vec<ClientId>,
    /// The attached clients' sizes.
    pub clients: BTreeMap<ClientId, (u16, u16)>,
    size: (u16, u16),
}

impl TestScreen {
    pub fn new(cols: u16, rows: u16) -> Result<Self> {
        Ok(Self {
            terminal: Terminal::new(TestBackend::new(cols, rows)).context("a test terminal")?,
            own: BTreeMap::new(),
            raw: Vec::new(),
            to: BTreeMap::new(),
            suspended: 0,
            requests: Vec::new(),
            dropped: Vec::new(),
            clients: BTreeMap::new(),
            size: (cols, rows),
        })
    }

    /// The smallest attached client's size, as the server's screen has it.
    fn resize_to_clients(&mut self) {
        let cols = self.clients.values().map(|s| s.0).min();
        let rows = self.clients.values().map(|s| s.1).min();
        if let (Some(cols), Some(rows)) = (cols, rows) {
            self.size = (cols.max(1), rows.max(1));
        }
        self.terminal.backend_mut().resize(self.size.0, self.size.1);
    }
}

impl Screen for TestScreen {
    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.raw.extend_from_slice(bytes);
        Ok(())
    }

    fn size(&self) -> Result<(u16, u16)> {
        Ok(self.size)
    }

    fn suspend(&mut self) -> Result<()> {
        self.suspended += 1;
        Ok(())
    }

    fn clear(&mut self, cols: u16, rows: u16) -> Result<()> {
        self.terminal.backend_mut().resize(cols, rows);
        self.terminal
            .resize(ratatui::layout::Rect::new(0, 0, cols, rows))
            .context("resize the test terminal")
    }

    fn frame(
        &mut self,
        own: &[ClientId],
        mut build: impl FnMut(&mut Buffer, &mut Drawn, Option<ClientId>) -> (Painted, vt100::CursorStyle),
    ) -> Result<vt100::CursorStyle> {
        let mut style = vt100::CursorStyle::Default;
        // ratatui's terminal starts every frame from an empty buffer: each frame is drawn whole.
        let mut whole = |f: &mut Frame, viewer| {
            let (painted, s) = build(f.buffer_mut(), &mut Drawn::default(), viewer);
            if let Some(at) = painted.cursor {
                f.set_cursor_position(at);
            }
            style = s;
        };
        self.terminal
            .draw(|f| whole(f, None))
            .context("draw into the test terminal")?;
        let area = self.terminal.get_frame().area();
        self.own.retain(|id, _| own.contains(id));
        for id in own {
            let t = match self.own.entry(*id) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(
                    Terminal::new(TestBackend::new(area.width, area.height)).context("a test terminal")?,
                ),
            };
            t.backend_mut().resize(area.width, area.height);
            t.draw(|f| whole(f, Some(*id)))
                .context("draw into the test terminal")?;
        }
        Ok(style)
    }

    fn cursor_style(&mut self, _style: vt100::CursorStyle) -> Result<()> {
        Ok(())
    }

    fn attach(&mut self, id: u64, link: ClientLink) {
        self.clients.insert(id, (link.cols, link.rows));
        self.resize_to_clients();
    }

    fn detach(&mut self, id: u64) {
        self.clients.remove(&id);
        self.resize_to_clients();
    }

    fn take_dropped(&mut self) -> Vec<ClientId> {
        let dropped = std::mem::take(&mut self.dropped);
        for id in &dropped {
            self.clients.remove(id);
        }
        self.resize_to_clients();
        dropped
    }

    fn write_to(&mut self, id: u64, bytes: &[u8]) -> Result<()> {
        self.to.entry(id).or_default().extend_from_slice(bytes);
        Ok(())
    }

    fn attached(&self) -> usize {
        self.clients.len()
    }

    fn client_resize(&mut self, id: u64, cols: u16, rows: u16) {
        if let Some(size) = self.clients.get_mut(&id) {
            *size = (cols, rows);
        }
        self.resize_to_clients();
    }

    fn request(&mut self, client: ClientId, req: WorkspaceRequest) {
        self.requests.push((client, req));
    }
}
