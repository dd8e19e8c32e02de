//! One run of the scripted conversation: pi alone, or pokeshell hosting pi, in a reference terminal
//! (a PTY parsed by vt100, or tmux). Only the region where pi draws is looked at: the whole screen
//! for pi alone, the pane (top left) inside pokeshell.

use std::time::{Duration, Instant};

use super::grid::Grid;
use super::tmux::Tmux;
use crate::support::pty::Pty;
use crate::support::{ModelServer, WAIT};

/// pi counts as done drawing once its region has not changed for this long.
const QUIET: Duration = Duration::from_millis(600);

/// A reference terminal.
pub trait Term {
    /// The top-left `rows`×`cols` of the screen now.
    fn region(&self, rows: u16, cols: u16) -> Grid;
    /// Waits up to `timeout` until `done` holds for the region; the region then, `None` on timeout.
    fn wait_region(
        &self,
        rows: u16,
        cols: u16,
        timeout: Duration,
        done: &dyn Fn(&Grid) -> bool,
    ) -> Option<Grid>;
    /// Types `text`.
    fn send(&mut self, text: &str);
    fn resize(&mut self, rows: u16, cols: u16);
    /// The whole screen, for failure messages.
    fn dump(&self) -> String;
}

impl Term for Pty {
    fn region(&self, rows: u16, cols: u16) -> Grid {
        self.with_screen(|s| Grid::capture(s, rows, cols))
    }

    fn wait_region(
        &self,
        rows: u16,
        cols: u16,
        timeout: Duration,
        done: &dyn Fn(&Grid) -> bool,
    ) -> Option<Grid> {
        self.try_wait_until(timeout, |s| done(&Grid::capture(s, rows, cols)))
            .then(|| self.region(rows, cols))
    }

    fn send(&mut self, text: &str) {
        Pty::send(self, text);
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        Pty::resize(self, rows, cols);
    }

    fn dump(&self) -> String {
        Pty::dump(self)
    }
}

impl Term for Tmux {
    fn region(&self, rows: u16, cols: u16) -> Grid {
        self.screen().crop(rows, cols)
    }

    fn wait_region(
        &self,
        rows: u16,
        cols: u16,
        timeout: Duration,
        done: &dyn Fn(&Grid) -> bool,
    ) -> Option<Grid> {
        self.wait(timeout, |g| done(&g.crop(rows, cols)))
            .map(|g| g.crop(rows, cols))
    }

    fn send(&mut self, text: &str) {
        Tmux::send(self, text);
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        Tmux::resize(self, rows, cols);
    }

    fn dump(&self) -> String {
        self.screen().text()
    }
}

pub struct Subject {
    pub term: Box<dyn Term>,
    /// pi's region: its terminal's size, rows × columns.
    pub rows: u16,
    pub cols: u16,
    /// pokeshell hosting pi, whose terminal is bigger than pi's region.
    pub is_pokeshell: bool,
}

impl Subject {
    pub fn new(term: Box<dyn Term>, (rows, cols): (u16, u16), is_pokeshell: bool) -> Subject {
        Subject {
            term,
            rows,
            cols,
            is_pokeshell,
        }
    }

    pub fn grid(&self) -> Grid {
        self.term.region(self.rows, self.cols)
    }

    #[track_caller]
    pub fn fail(&self, message: &str) -> ! {
        panic!("{message}\n--- screen ---\n{}", self.term.dump());
    }

    /// Waits until `done` holds for the region's text.
    #[track_caller]
    pub fn wait(&self, what: &str, done: impl Fn(&str) -> bool) {
        if self
            .term
            .wait_region(self.rows, self.cols, WAIT, &|g| done(&g.text()))
            .is_none()
        {
            self.fail(&format!("timed out after {WAIT:?} waiting for {what}"));
        }
    }

    /// pi's first frame: its footer (the region's last non-blank row) names a mock model.
    #[track_caller]
    pub fn wait_for_pi(&self) {
        self.wait("pi's footer with the mock model", |text| {
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.contains("mock-"))
        });
    }

    /// Types `prompt`, then presses Enter until the model has the request (pi ignores Enter while it
    /// is still starting up; Enter on an empty editor does nothing).
    #[track_caller]
    pub fn submit(&mut self, server: &ModelServer, prompt: &str) {
        let before = server.model_requests().len();
        self.term.send(prompt);
        self.wait(&format!("{prompt:?} typed"), |t| t.contains(prompt));
        let deadline = Instant::now() + WAIT;
        loop {
            self.term.send("\r");
            if server
                .wait_for_requests(before + 1, Duration::from_millis(300))
                .is_ok()
            {
                return;
            }
            if Instant::now() >= deadline {
                self.fail(&format!("pi never sent {prompt:?} to the model"));
            }
        }
    }

    /// Waits until the region has not changed for `QUIET`; returns it.
    #[track_caller]
    pub fn settle(&self) -> Grid {
        let deadline = Instant::now() + WAIT;
        let mut last = self.grid();
        loop {
            let changed = |g: &Grid| *g != last;
            match self.term.wait_region(self.rows, self.cols, QUIET, &changed) {
                None => return last,
                Some(grid) => last = grid,
            }
            if Instant::now() >= deadline {
                self.fail(&format!("pi's region never stayed still for {QUIET:?}"));
            }
        }
    }

    /// Waits up to `timeout` for the region, masked by `mask`, to equal `want`; on timeout the
    /// difference as it stands then.
    pub fn wait_equal(&self, want: &Grid, mask: fn(&mut Grid), timeout: Duration) -> Result<(), String> {
        let same = |g: &Grid| {
            let mut got = g.clone();
            mask(&mut got);
            got == *want
        };
        if self
            .term
            .wait_region(self.rows, self.cols, timeout, &same)
            .is_some()
        {
            return Ok(());
        }
        let mut got = self.grid();
        mask(&mut got);
        Err(got.diff(want, 12))
    }
}
