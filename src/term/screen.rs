//! The screen mirror: pi's output parsed by vt100 0.18, plus the query answers and mode tracking
//! vt100 leaves to the embedder.

pub mod caps;
pub mod contain;
mod damage;
#[cfg(test)]
mod equivalence;
mod fast_forward;
#[cfg(test)]
mod pane_record;
mod tracker;

use std::num::NonZeroU16;
use std::time::{Duration, Instant};

pub use caps::HostCaps;
pub use pokeshell_core::screen::{ChildModes, ProgramState, ProgramStatus, program_status, row_changes};
use row_changes::RowChanges;
pub use tracker::Tracker;

/// A synchronized-output frame that never closes is shown anyway after this long.
pub const SYNC_TIMEOUT: Duration = Duration::from_millis(150);

pub struct Mirror {
    parser: vt100::Parser<Tracker>,
    /// Skips text that scrolls away unseen (`false`: every byte is parsed, for tests).
    fast_forward: bool,
    /// Bytes fast-forwarding spared the parser, for tests.
    skipped: usize,
    /// The rows the output may have changed, for the pane to look at those alone.
    changes: RowChanges,
    /// Follows the output piece by piece, to know what each changed and what may be skipped.
    follower: damage::Follower,
}

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v.max(1)).unwrap_or(NonZeroU16::MIN)
}

impl Mirror {
    pub fn new(rows: u16, cols: u16, caps: HostCaps) -> Self {
        Self::with_tracker(Tracker::new(caps, rows.max(1), cols.max(1)), rows, cols)
    }

    /// A mirror for a child started before the host answered the start-up probe: the child's
    /// queries are answered, in order, once [`Mirror::set_host_caps`] is called.
    pub fn awaiting_host_caps(rows: u16, cols: u16) -> Self {
        Self::with_tracker(Tracker::awaiting_caps(rows.max(1), cols.max(1)), rows, cols)
    }

    /// What the host answered (or did not) to the start-up probe; held answers become replies.
    pub fn set_host_caps(&mut self, caps: HostCaps) {
        self.parser.callbacks_mut().set_caps(caps);
    }

    /// What the host answered to the start-up probe, as far as it is known.
    pub fn host_caps(&self) -> &HostCaps {
        &self.parser.callbacks().caps
    }

    fn with_tracker(tracker: Tracker, rows: u16, cols: u16) -> Self {
        Self {
            parser: vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, tracker),
            fast_forward: true,
            skipped: 0,
            changes: RowChanges::new(rows.max(1)),
            follower: damage::Follower::default(),
        }
    }

    /// A new child in the same pane: an empty screen of the same size, every mode and report
    /// forgotten, the host's capabilities kept.
    pub fn reset(&mut self) {
        let t = self.parser.callbacks();
        let (rows, cols) = t.size;
        let caps = t.caps.clone();
        let seq = t.program_status_seq;
        *self = Self::new(rows, cols, caps);
        // The count goes on, so a report of the new child is told from the old one's.
        self.parser.callbacks_mut().program_status_seq = seq;
    }

    /// A mirror that parses every byte, to check fast-forwarding against.
    #[cfg(test)]
    fn parsing_everything(rows: u16, cols: u16) -> Self {
        Self {
            fast_forward: false,
            ..Self::new(rows, cols, HostCaps::default())
        }
    }

    /// Parses a batch of the child's output. The bigger the batch, the more of a flood can be
    /// skipped: pass everything that is at hand at once.
    pub fn process(&mut self, bytes: &[u8]) {
        if contain::caught(|| self.process_batch(bytes)).is_none() {
            self.start_afresh();
        }
    }

    /// After vt100 panicked: a blank screen of the same size, parsed afresh from the next output
    /// on, with the modes and reports the tracker keeps (vt100's own, such as bracketed paste, are
    /// lost). The pane shows what the child draws next.
    fn start_afresh(&mut self) {
        let (rows, cols) = self.parser.callbacks().size;
        let caps = self.parser.callbacks().caps.clone();
        let tracker = std::mem::replace(self.parser.callbacks_mut(), Tracker::new(caps, rows, cols));
        self.parser = vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, tracker);
        self.follower = damage::Follower::default();
        self.changes.mark_all();
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// Which rows the output may have changed.
    pub fn changes(&self) -> &RowChanges {
        &self.changes
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(nz(rows), nz(cols));
        self.changes.resize(rows.max(1));
        self.parser.callbacks_mut().size = (rows.max(1), cols.max(1));
    }

    /// Answers to the child's queries, to be written to its PTY.
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
    }

    /// Bytes the child meant for the real terminal (title, clipboard, bell, notifications).
    pub fn take_host_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().host_out)
    }

    /// The child's latest program-status report (OSC 7501), if it sent any.
    pub fn program_status(&self) -> Option<&ProgramStatus> {
        self.parser.callbacks().program_status.as_ref()
    }

    /// How many program-status reports the child sent so far: a new value means a new report, even
    /// one equal to the last.
    pub fn program_status_seq(&self) -> u64 {
        self.parser.callbacks().program_status_seq
    }

    pub fn modes(&self) -> ChildModes {
        let screen = self.parser.screen();
        let t = self.parser.callbacks();
        ChildModes {
            kitty_flags: t.kitty_flags(screen.alternate_screen()),
            modify_other_keys: t.modify_other_keys,
            bracketed_paste: screen.bracketed_paste(),
            mouse: screen.mouse_protocol_mode(),
            mouse_encoding: screen.mouse_protocol_encoding(),
            focus_reports: t.focus_reports,
            application_cursor: screen.application_cursor(),
            host_kitty: t.caps.kitty,
        }
    }

    /// True while the child has a synchronized frame open (and it has not timed out).
    pub fn sync_held(&self, now: Instant) -> bool {
        self.sync_deadline().is_some_and(|d| now < d)
    }

    /// When an open synchronized frame will be shown regardless.
    pub fn sync_deadline(&self) -> Option<Instant> {
        self.parser.callbacks().sync_since.map(|t| t + SYNC_TIMEOUT)
    }
}

#[cfg(test)]
mod tests;
