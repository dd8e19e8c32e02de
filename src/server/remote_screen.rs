//! A session's screen in the server: the clients attached to it. Frames are drawn once into a
//! buffer and the same bytes go to every client; the session's size is the smallest client's (as
//! tmux does), so that every client shows the whole of it. A client that stops reading is dropped
//! rather than let the server's memory grow.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};
use ratatui::buffer::Buffer;

use tokio::sync::mpsc::UnboundedSender;

use super::painter::Painter;
use super::serve::{ServerEvent, ServerMsg};
use crate::server::event_loop::{ClientLink, ClientOut, Screen};
use pokeshell_core::session::{Drawn, Painted};

/// A client with this many bytes not yet written to its socket is dropped.
pub const MAX_QUEUED: usize = 32 << 20;

pub struct RemoteScreen {
    /// The frame every client without a view of its own sees, drawn once for all of them.
    shared: Painter,
    clients: BTreeMap<u64, Viewer>,
    /// Clients dropped for not reading, until the loop hears of it (their keyboards go too).
    dropped: Vec<u64>,
    /// The size while nobody is attached: the last one a client had.
    size: (u16, u16),
    /// The server's state: requests from a client's keys, and clients dropped for not reading.
    pub server: Option<UnboundedSender<ServerMsg>>,
    /// A client with more than this many bytes waiting for it is dropped ([`MAX_QUEUED`]; tests
    /// lower it through `POKESHELL_TEST_CLIENT_BOUND` so that a flood need not last minutes).
    pub bound: usize,
}

/// One attached client.
struct Viewer {
    link: ClientLink,
    /// Its own frames while it sees something the others do not (an overlay, an armed prefix).
    own: Option<Painter>,
    /// Its terminal shows what the shared frames drew; `false`: it needs the whole screen once.
    synced: bool,
}

impl RemoteScreen {
    pub fn new(cols: u16, rows: u16) -> Result<Self> {
        Ok(Self {
            shared: Painter::new(cols, rows),
            clients: BTreeMap::new(),
            dropped: Vec::new(),
            size: (cols, rows),
            server: None,
            bound: MAX_QUEUED,
        })
    }

    /// Sends bytes to these clients; one that does not read is dropped.
    fn send(&mut self, to: &[u64], bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut gone = Vec::new();
        for id in to {
            let Some(c) = self.clients.get(id) else { continue };
            let link = &c.link;
            let lagged = link.queued.load(Ordering::Acquire) + bytes.len() > self.bound;
            if lagged || !link.send_bytes(bytes) {
                gone.push((*id, lagged));
            }
        }
        for (id, lagged) in gone {
            // The server's state decides what becomes of the client (it alone knows who follows).
            if let Some(server) = self.server.as_ref().filter(|_| lagged) {
                let bound = self.bound;
                let _ = server.send(ServerEvent::Lagged { id, bound }.into());
            }
            self.clients.remove(&id);
            self.dropped.push(id);
            self.resize_to_clients(None);
        }
    }

    /// The one client attached, if there is exactly one.
    fn alone(&self) -> Option<u64> {
        let mut ids = self.clients.keys();
        match (ids.next(), ids.next()) {
            (Some(id), None) => Some(*id),
            _ => None,
        }
    }

    /// A lone client is drawn into the shared terminal, its overlay or armed prefix included: what
    /// that terminal holds is what the client shows, so an overlay costs no whole frame.
    fn frame_alone(
        &mut self,
        id: u64,
        own_view: bool,
        mut build: impl FnMut(&mut Buffer, &mut Drawn, Option<u64>) -> (Painted, vt100::CursorStyle),
    ) -> Result<vt100::CursorStyle> {
        let Some(v) = self.clients.get_mut(&id) else {
            return Ok(vt100::CursorStyle::Default);
        };
        let whole = v.own.take().is_some() || !v.synced;
        v.synced = true;
        let viewer = own_view.then_some(id);
        let (bytes, style) = self.shared.draw(whole, |b, d| build(b, d, viewer))?;
        self.send(&[id], &bytes);
        Ok(style)
    }

    fn everyone(&self) -> Vec<u64> {
        self.clients.keys().copied().collect()
    }

    /// The smallest size of the clients that count: those that do not only watch, or every client
    /// when all of them only watch (a phone looking in does not shrink the desktop's pi). Every
    /// client hears the size when it changed, a newcomer always.
    fn resize_to_clients(&mut self, newcomer: Option<u64>) {
        let before = self.size;
        let all_watch = self.clients.values().all(|c| c.link.watch);
        let counted = || self.clients.values().filter(|c| all_watch || !c.link.watch);
        let cols = counted().map(|c| c.link.cols).min();
        let rows = counted().map(|c| c.link.rows).min();
        if let (Some(cols), Some(rows)) = (cols, rows) {
            self.size = (cols.max(1), rows.max(1));
        }
        let (cols, rows) = self.size;
        self.shared.set_size(cols, rows);
        for (id, v) in &mut self.clients {
            if let Some(own) = &mut v.own {
                own.set_size(cols, rows);
            }
            if self.size != before || newcomer == Some(*id) {
                let _ = v.link.send(ClientOut::Size { cols, rows });
            }
        }
    }
}

impl Screen for RemoteScreen {
    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        let everyone = self.everyone();
        self.send(&everyone, bytes);
        Ok(())
    }

    fn size(&self) -> Result<(u16, u16)> {
        Ok(self.size)
    }

    fn suspend(&mut self) -> Result<()> {
        for c in self.clients.values() {
            let _ = c.link.send(ClientOut::Suspend);
        }
        Ok(())
    }

    fn clear(&mut self, cols: u16, rows: u16) -> Result<()> {
        self.shared.set_size(cols, rows);
        self.shared.clear().context("cannot draw again")?;
        // Every terminal is cleared: the shared frames draw it whole, and a client with a view of
        // its own gets a fresh one.
        for v in self.clients.values_mut() {
            v.own = None;
            v.synced = true;
        }
        let bytes = self.shared.take();
        self.write_raw(&bytes)
    }

    fn frame(
        &mut self,
        own: &[u64],
        mut build: impl FnMut(&mut Buffer, &mut Drawn, Option<u64>) -> (Painted, vt100::CursorStyle),
    ) -> Result<vt100::CursorStyle> {
        if let Some(id) = self.alone() {
            return self.frame_alone(id, own.contains(&id), build);
        }
        let (cols, rows) = self.size;
        let mut style = vt100::CursorStyle::Default;
        let (mut plain, mut joining) = (Vec::new(), Vec::new());
        for (id, v) in &mut self.clients {
            if own.contains(id) {
                continue;
            }
            if v.own.take().is_some() {
                // Back from a view of its own: its terminal shows something else.
                v.synced = false;
            }
            if v.synced {
                plain.push(*id)
            } else {
                joining.push(*id)
            }
        }
        // With no overlay open anywhere (the usual case), one frame for every client.
        if !plain.is_empty() || !joining.is_empty() {
            let (bytes, s) = self.shared.draw(false, |b, d| build(b, d, None))?;
            style = s;
            self.send(&plain, &bytes);
        }
        if !joining.is_empty() {
            let (bytes, _) = Painter::new(cols, rows).draw(true, |b, d| build(b, d, None))?;
            self.send(&joining, &bytes);
            for id in &joining {
                if let Some(v) = self.clients.get_mut(id) {
                    v.synced = true;
                }
            }
        }
        for id in own {
            let Some(v) = self.clients.get_mut(id) else {
                continue;
            };
            let whole = v.own.is_none();
            let t = match &mut v.own {
                Some(t) => t,
                None => v.own.insert(Painter::new(cols, rows)),
            };
            let (bytes, s) = t.draw(whole, |b, d| build(b, d, Some(*id)))?;
            style = s;
            self.send(&[*id], &bytes);
        }
        Ok(style)
    }

    fn cursor_style(&mut self, style: vt100::CursorStyle) -> Result<()> {
        let mut bytes = Vec::new();
        crossterm::queue!(bytes, crate::server::event_loop::cursor_style(style))
            .context("cannot set the cursor")?;
        self.write_raw(&bytes)
    }

    fn attach(&mut self, id: u64, link: ClientLink) {
        let viewer = Viewer {
            link,
            own: None,
            synced: false,
        };
        self.clients.insert(id, viewer);
        self.resize_to_clients(Some(id));
    }

    fn take_dropped(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.dropped)
    }

    fn detach(&mut self, id: u64) {
        self.clients.remove(&id);
        self.resize_to_clients(None);
    }

    fn write_to(&mut self, id: u64, bytes: &[u8]) -> Result<()> {
        self.send(&[id], bytes);
        Ok(())
    }

    fn attached(&self) -> usize {
        self.clients.len()
    }

    fn client_resize(&mut self, id: u64, cols: u16, rows: u16) {
        if let Some(c) = self.clients.get_mut(&id) {
            c.link.cols = cols;
            c.link.rows = rows;
        }
        self.resize_to_clients(None);
    }

    fn request(&mut self, client: u64, req: pokeshell_core::session::WorkspaceRequest) {
        // Straight to the server's state, for the client whose keys asked.
        if let Some(server) = &self.server {
            let _ = server.send(ServerEvent::Request { id: client, req }.into());
        }
    }
}

#[cfg(test)]
mod tests;
