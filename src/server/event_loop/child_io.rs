//! The loop's work on the child's side: its output (mode changes, host-bound bytes, program-status
//! reports) into inputs, the pane's size onto the PTY and the mirror, and a Ctrl+Z suspension.

use std::sync::atomic::Ordering;

use anyhow::{Context, Result};

use super::{Bridge, Child, Layer, Loop, Screen, lock};
use crate::term::host::HostModes;
use pokeshell_core::session::Input;

impl<S: Screen, C: Child, B: Bridge, L: Layer> Loop<S, C, B, L> {
    /// pi stopped itself (Ctrl+Z): the clients give their terminals back, as pi alone would have.
    /// They come back on their own time (a client's `fg`); with none attached, pi is continued.
    pub(super) fn suspend(&mut self) -> Result<()> {
        self.screen.suspend()?;
        self.suspended = self.screen.attached() > 0;
        if !self.suspended {
            self.child.signal(libc::SIGCONT);
        }
        Ok(())
    }

    /// A client is back from a suspension: every mode and every cell is set again, then pi is
    /// continued.
    pub(super) fn resume(&mut self) -> Result<()> {
        self.host_modes = HostModes::default();
        self.cursor = None;
        let (cols, rows) = self.screen.size().context("cannot read the terminal size")?;
        self.screen.clear(cols, rows)?;
        self.input(Input::Resumed { cols, rows })?;
        self.child_output()?;
        // Continues a stopped child, and tells pi (whose own SIGTSTP was discarded) to restart its TUI.
        self.child.signal(libc::SIGCONT);
        Ok(())
    }

    pub(super) fn resize_pane(&mut self, cols: u16, rows: u16) -> Result<()> {
        if (cols, rows) != self.pane {
            self.pane = (cols, rows);
            lock(&self.mirror).resize(rows, cols);
            self.child.resize(rows, cols)?;
        }
        self.dirty = true;
        Ok(())
    }

    /// The parser has new output: its mode changes and host-bound bytes become an input.
    pub fn child_output(&mut self) -> Result<()> {
        self.output_pending.store(false, Ordering::Release);
        let (host_bytes, modes, status) = {
            let mut m = lock(&self.mirror);
            let seq = m.program_status_seq();
            let status = (seq != self.program_status_seq).then(|| {
                self.program_status_seq = seq;
                m.program_status().cloned()
            });
            (m.take_host_output(), m.modes(), status)
        };
        if let Some(status) = status {
            self.input(Input::ProgramStatus(status))?;
        }
        self.input(Input::ChildOutput { modes, host_bytes })?;
        self.release_held_keys()
    }
}
