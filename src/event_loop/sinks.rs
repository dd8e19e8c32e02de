//! Where the loop's effects land: the host terminal, the child and the bridge. Each is a trait so
//! that tests put a `TestBackend`, a fake child and a fake bridge in their place.

use std::io::Write;

use anyhow::{Context, Result};
use crossterm::cursor::SetCursorStyle;
use ratatui::backend::{Backend, CrosstermBackend, TestBackend};
use ratatui::{Frame, Terminal};

use crate::pi::bridge::protocol::Command;
use crate::pi::bridge::server::BridgeHandle;
use crate::term::host::TerminalGuard;
use crate::term::pty::ChildPty;

use super::clients::ClientLink;
use crate::core::session::ClientId;

/// The host terminal.
pub trait Screen {
    /// Bytes for the terminal itself (mode changes, title, bell, notifications).
    fn write_raw(&mut self, bytes: &[u8]) -> Result<()>;
    fn size(&self) -> Result<(u16, u16)>;
    /// Gives the terminal back and stops until continued (job control).
    fn suspend(&mut self) -> Result<()>;
    /// After a suspension: the terminal has this size and nothing of ours on it.
    fn clear(&mut self, cols: u16, rows: u16) -> Result<()>;
    /// Draws one frame. `own` are the clients that see something of their own (an overlay, an
    /// armed prefix); `build` draws the frame as one of them sees it, or with `None` as every
    /// other client does, and returns the cursor style the frame wants.
    fn frame(
        &mut self,
        own: &[ClientId],
        build: impl FnMut(&mut Frame, Option<ClientId>) -> vt100::CursorStyle,
    ) -> Result<vt100::CursorStyle>;
    /// Sets the cursor's shape.
    fn cursor_style(&mut self, style: vt100::CursorStyle) -> Result<()>;

    // The server's screen is the clients attached to a session; the user's own terminal is always
    // there and these do nothing for it.

    /// A client attached.
    fn attach(&mut self, _id: u64, _link: ClientLink) {}
    /// A client left.
    fn detach(&mut self, _id: u64) {}
    /// The clients the screen dropped on its own (they stopped reading) since the last call.
    fn take_dropped(&mut self) -> Vec<ClientId> {
        Vec::new()
    }
    /// Bytes for one client only (a newcomer's modes).
    fn write_to(&mut self, _id: u64, bytes: &[u8]) -> Result<()> {
        self.write_raw(bytes)
    }
    /// How many terminals see the session.
    fn attached(&self) -> usize {
        1
    }
    /// A client's terminal has this size now.
    fn client_resize(&mut self, _id: u64, _cols: u16, _rows: u16) {}
    /// The user asked, from this client's keys, for something beyond the session: the server
    /// switches or detaches that client, or starts a session for it.
    fn request(&mut self, _client: ClientId, _req: crate::core::session::WorkspaceRequest) {}
    /// Nobody is attached to this session: tell the user by other means (a terminal that shows
    /// another session, or `pokeshell.notifyCommand`).
    fn notify_away(&mut self, _text: &str, _bell: bool, _desktop: bool) {}
    /// Whether [`Screen::suspend`] returns only after the user continued pokeshell (`fg`); the
    /// server's clients come back later, as [`super::ClientEvent::Resumed`].
    fn suspend_blocks(&self) -> bool {
        true
    }
}

/// The child process.
pub trait Child {
    fn write(&mut self, bytes: Vec<u8>);
    fn resize(&mut self, rows: u16, cols: u16) -> Result<()>;
    /// Signals the child's process group.
    fn signal(&mut self, sig: i32);
    /// Starts the command again with `args` (the old child has exited, or was abandoned); returns
    /// the new pid.
    fn respawn(&mut self, args: Vec<String>) -> Result<i32>;
    /// The child was killed but cannot be reaped (held by a tracer, stuck in the kernel): it is
    /// left to be reaped in the background, and its exit is never reported.
    fn abandon(&mut self) {}
}

/// The bridge inside pi.
pub trait Bridge {
    /// Sends `command` under `id`; an error says why it could not be sent.
    fn send(&mut self, id: u64, command: Command) -> Result<(), String>;
    fn disconnect(&mut self, reason: &str);
}

/// A screen that is one terminal shows whoever typed there: at most one client has a view of its
/// own (the terminal's own run types as [`crate::core::session::LOCAL_CLIENT`]).
fn only_viewer(own: &[ClientId]) -> Option<ClientId> {
    own.first().copied()
}

/// The user's terminal, through crossterm.
pub struct HostScreen {
    pub terminal: Terminal<CrosstermBackend<std::io::Stdout>>,
    pub guard: TerminalGuard,
}

/// crossterm's command for a cursor shape vt100 reports.
pub(crate) fn cursor_style(s: vt100::CursorStyle) -> SetCursorStyle {
    use vt100::CursorStyle as C;
    match s {
        C::Default => SetCursorStyle::DefaultUserShape,
        C::BlinkBlock => SetCursorStyle::BlinkingBlock,
        C::SteadyBlock => SetCursorStyle::SteadyBlock,
        C::BlinkUnderline => SetCursorStyle::BlinkingUnderScore,
        C::SteadyUnderline => SetCursorStyle::SteadyUnderScore,
        C::BlinkVerticalBar => SetCursorStyle::BlinkingBar,
        C::SteadyVerticalBar => SetCursorStyle::SteadyBar,
    }
}

impl Screen for HostScreen {
    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let out = self.terminal.backend_mut();
        out.write_all(bytes)
            .and_then(|()| Write::flush(out))
            .context("cannot write to the terminal")
    }

    fn size(&self) -> Result<(u16, u16)> {
        crossterm::terminal::size().context("cannot read the terminal size")
    }

    fn suspend(&mut self) -> Result<()> {
        self.guard.suspend()
    }

    fn clear(&mut self, cols: u16, rows: u16) -> Result<()> {
        self.terminal
            .resize(ratatui::layout::Rect::new(0, 0, cols, rows))
            .context("cannot redraw after resuming")
    }

    fn frame(
        &mut self,
        own: &[ClientId],
        mut build: impl FnMut(&mut Frame, Option<ClientId>) -> vt100::CursorStyle,
    ) -> Result<vt100::CursorStyle> {
        // Our own frames are synchronized too, so the host never shows half of one.
        self.terminal
            .backend_mut()
            .write_all(b"\x1b[?2026h")
            .context("cannot draw")?;
        let mut style = vt100::CursorStyle::Default;
        let viewer = only_viewer(own);
        self.terminal
            .draw(|f| style = build(f, viewer))
            .context("cannot draw")?;
        let out = self.terminal.backend_mut();
        out.write_all(b"\x1b[?2026l")
            .and_then(|()| Write::flush(out))
            .context("cannot draw")?;
        Ok(style)
    }

    fn cursor_style(&mut self, style: vt100::CursorStyle) -> Result<()> {
        let out = self.terminal.backend_mut();
        crossterm::queue!(out, cursor_style(style)).context("cannot set the cursor")?;
        Write::flush(out).context("cannot set the cursor")
    }
}

/// A screen for tests, shaped like the server's: frames land in a `TestBackend` (the shared one,
/// and one per client with a view of its own), raw bytes and requests are kept.
pub struct TestScreen {
    pub terminal: Terminal<TestBackend>,
    /// The last frame of each client that had a view of its own then (an overlay, an armed prefix).
    pub own: std::collections::BTreeMap<ClientId, Terminal<TestBackend>>,
    pub raw: Vec<u8>,
    pub suspended: usize,
    /// What the clients' keys asked of the server, in order.
    pub requests: Vec<(ClientId, crate::core::session::WorkspaceRequest)>,
    /// Clients to report dropped (as the server's screen drops one that stops reading).
    pub dropped: Vec<ClientId>,
}

impl TestScreen {
    pub fn new(cols: u16, rows: u16) -> Result<Self> {
        Ok(Self {
            terminal: Terminal::new(TestBackend::new(cols, rows)).context("a test terminal")?,
            own: std::collections::BTreeMap::new(),
            raw: Vec::new(),
            suspended: 0,
            requests: Vec::new(),
            dropped: Vec::new(),
        })
    }
}

impl Screen for TestScreen {
    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.raw.extend_from_slice(bytes);
        Ok(())
    }

    fn size(&self) -> Result<(u16, u16)> {
        let size = self
            .terminal
            .backend()
            .size()
            .context("the test terminal's size")?;
        Ok((size.width, size.height))
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
        mut build: impl FnMut(&mut Frame, Option<ClientId>) -> vt100::CursorStyle,
    ) -> Result<vt100::CursorStyle> {
        let mut style = vt100::CursorStyle::Default;
        self.terminal
            .draw(|f| style = build(f, None))
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
            t.draw(|f| style = build(f, Some(*id)))
                .context("draw into the test terminal")?;
        }
        Ok(style)
    }

    fn request(&mut self, client: ClientId, req: crate::core::session::WorkspaceRequest) {
        self.requests.push((client, req));
    }

    fn take_dropped(&mut self) -> Vec<ClientId> {
        std::mem::take(&mut self.dropped)
    }

    fn cursor_style(&mut self, _style: vt100::CursorStyle) -> Result<()> {
        Ok(())
    }
}

impl Child for ChildPty {
    fn write(&mut self, bytes: Vec<u8>) {
        ChildPty::write(self, bytes);
    }

    fn resize(&mut self, rows: u16, cols: u16) -> Result<()> {
        ChildPty::resize(self, rows, cols)
    }

    fn signal(&mut self, sig: i32) {
        crate::term::pty::signal_group(self.pid(), sig);
    }

    fn respawn(&mut self, args: Vec<String>) -> Result<i32> {
        ChildPty::respawn(self, args)
    }

    fn abandon(&mut self) {
        ChildPty::abandon(self);
    }
}

/// The bridge server's handle, or none when the child is not pi (or the bridge failed to start).
impl Bridge for Option<BridgeHandle> {
    fn send(&mut self, id: u64, command: Command) -> Result<(), String> {
        match self {
            Some(b) => b.send_as(id, command).map_err(|e| e.to_string()),
            None => Err("pokeshell runs without a bridge".to_string()),
        }
    }

    fn disconnect(&mut self, reason: &str) {
        if let Some(b) = self {
            let _ = b.disconnect(reason);
        }
    }
}
