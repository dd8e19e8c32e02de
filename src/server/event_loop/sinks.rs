//! Where the loop's effects land: the attached terminals, the child and the bridge. Each is a
//! trait so that tests put a `TestBackend`, a fake child and a fake bridge in their place.

use anyhow::Result;
use crossterm::cursor::SetCursorStyle;
use ratatui::buffer::Buffer;

use crate::pi::bridge::server::BridgeHandle;
use crate::term::pty::ChildPty;
use pokeshell_core::bridge::Command;

use super::clients::ClientLink;
use pokeshell_core::session::{ClientId, Drawn, Painted};

/// Where the session is shown: the terminals attached to it (in the server, each a client).
pub trait Screen {
    /// Bytes for every attached terminal (mode changes, title, bell, notifications).
    fn write_raw(&mut self, bytes: &[u8]) -> Result<()>;
    /// The session's size: the smallest attached terminal's, or the last one while none is.
    fn size(&self) -> Result<(u16, u16)>;
    /// pi stopped itself (Ctrl+Z): every client gives its terminal back until `fg`, and comes back
    /// later as [`super::ClientEvent::Resumed`].
    fn suspend(&mut self) -> Result<()>;
    /// The terminals have this size and nothing of ours on them.
    fn clear(&mut self, cols: u16, rows: u16) -> Result<()>;
    /// Draws one frame. `own` are the clients that see something of their own (an overlay, an
    /// armed prefix); `build` draws the frame as one of them sees it, or with `None` as every
    /// other client does, into a buffer that holds what the `Drawn` says, and returns what it drew
    /// and the cursor style the frame wants.
    fn frame(
        &mut self,
        own: &[ClientId],
        build: impl FnMut(&mut Buffer, &mut Drawn, Option<ClientId>) -> (Painted, vt100::CursorStyle),
    ) -> Result<vt100::CursorStyle>;
    /// Sets the cursor's shape.
    fn cursor_style(&mut self, style: vt100::CursorStyle) -> Result<()>;
    /// A client attached.
    fn attach(&mut self, id: u64, link: ClientLink);
    /// A client left.
    fn detach(&mut self, id: u64);
    /// The clients the screen dropped on its own (they stopped reading) since the last call.
    fn take_dropped(&mut self) -> Vec<ClientId>;
    /// Bytes for one client only (a newcomer's modes, a program-status report).
    fn write_to(&mut self, id: u64, bytes: &[u8]) -> Result<()>;
    /// How many terminals see the session.
    fn attached(&self) -> usize;
    /// A client's terminal has this size now.
    fn client_resize(&mut self, id: u64, cols: u16, rows: u16);
    /// The user asked, from this client's keys, for something beyond the session: the server
    /// switches or detaches that client, or starts a session for it.
    fn request(&mut self, client: ClientId, req: pokeshell_core::session::WorkspaceRequest);
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
    /// The loop runs (on) and reads the child's quiet spells itself, or no more (off); see
    /// [`ChildPty::want_quiet_spells`]. A child without a PTY has none.
    fn want_quiet_spells(&mut self, _on: bool) {}
    fn take_quiet_spell(&mut self) {}
    /// Output read during a quiet spell; never ready outside one.
    fn quiet_output(&self, _buf: &mut [u8]) -> impl Future<Output = std::io::Result<usize>> {
        std::future::pending()
    }
    /// Takes what [`Child::quiet_output`] read; `true`: the mirror changed.
    fn took_quiet_output(&mut self, _read: std::io::Result<usize>, _buf: &[u8]) -> bool {
        false
    }
}

/// The bridge inside pi.
pub trait Bridge {
    /// Sends `command` under `id`; an error says why it could not be sent.
    fn send(&mut self, id: u64, command: Command) -> Result<(), String>;
    fn disconnect(&mut self, reason: &str);
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

    fn want_quiet_spells(&mut self, on: bool) {
        ChildPty::want_quiet_spells(self, on);
    }

    fn take_quiet_spell(&mut self) {
        ChildPty::take_quiet_spell(self);
    }

    fn quiet_output(&self, buf: &mut [u8]) -> impl Future<Output = std::io::Result<usize>> {
        ChildPty::quiet_output(self, buf)
    }

    fn took_quiet_output(&mut self, read: std::io::Result<usize>, buf: &[u8]) -> bool {
        ChildPty::took_quiet_output(self, read, buf)
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
