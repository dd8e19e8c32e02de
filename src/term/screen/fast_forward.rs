//! Skips text that would scroll out of sight before anyone could see it.
//!
//! A child that floods the pane (`cat` of a big log) sends hundreds of lines per read, and vt100
//! spends most of its time drawing characters into rows that scroll away a moment later. Within one
//! batch of output, a stretch of plain lines (printable ASCII, CR, LF and colour changes, nothing
//! else) that is followed by at least a screenful of such lines cannot leave a trace on the screen,
//! provided the cursor sits on the bottom row of a scroll region that starts at the top: every line
//! feed then scrolls the region, so the following lines push every row of it out. Such a stretch is
//! replaced by its colour changes alone, which leave the parser exactly where the whole stretch
//! would have: cursor on the same row and column 0, same colours, same parser state.
//!
//! What is known for sure is checked rather than assumed: the stream is followed piece by piece by
//! the same follower that tells which rows a batch changed (`damage.rs`), which follows the
//! parser's state machine closely enough to know when the parser is at rest (it only ever errs
//! towards "not sure", which means no skipping), and the scroll region is learnt by watching vt100
//! scroll.

use super::Mirror;
use super::damage::{Follower, TRACKED_BATCH};

const ESC: u8 = 0x1b;

/// A stretch of plain lines found in a batch, `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub start: usize,
    pub end: usize,
}

/// The plain runs of a batch, with at least `min_lines` line feeds each: stretches that start with
/// the parser at rest and hold only printable ASCII, CR, LF and whole colour changes. `follower`
/// keeps up with the stream across batches (the same one that tells which rows a batch changed).
pub fn runs(follower: &mut Follower, bytes: &[u8], min_lines: usize) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut start: Option<usize> = None;
    let mut lines = 0usize;
    let mut close = |start: Option<usize>, end: usize, lines: &mut usize| {
        if let Some(start) = start
            && *lines >= min_lines
        {
            runs.push(Run { start, end });
        }
        *lines = 0;
    };
    let mut at = 0;
    while at < bytes.len() {
        let piece = follower.next(&bytes[at..]);
        if piece.plain {
            start.get_or_insert(at);
            // A line feed is a piece of its own.
            if bytes[at] == b'\n' {
                lines += 1;
            }
        } else {
            close(start.take(), at, &mut lines);
        }
        at += piece.len;
    }
    close(start, bytes.len(), &mut lines);
    runs
}

/// Where a plain run may be cut, given the bottom row of the scroll region (`bottom`, the region
/// starting at the top) and where in the run the parser has got to (`from`, just after a line feed
/// that scrolled): the start and end of the stretch to skip. Everything after the end must hold
/// `bottom + 1` line feeds and some text, and the skipped stretch must end with CR LF, so the cursor
/// is at column 0 either way.
pub fn cut(run: &[u8], from: usize, bottom: u16) -> Option<(usize, usize)> {
    let needed = usize::from(bottom) + 1;
    let mut feeds = 0;
    let mut end = None;
    for (i, &b) in run.iter().enumerate().skip(from).rev() {
        if b != b'\n' {
            continue;
        }
        if feeds >= needed && i >= 1 && run[i - 1] == b'\r' {
            end = Some(i + 1);
            break;
        }
        feeds += 1;
    }
    let end = end.filter(|e| *e > from)?;
    has_text(&run[end..]).then_some((from, end))
}

/// Whether `plain` (a plain run) prints any character: vt100 repeats the last one for `CSI b`.
fn has_text(plain: &[u8]) -> bool {
    let mut in_sgr = false;
    for &b in plain {
        match b {
            ESC => in_sgr = true,
            b'm' if in_sgr => in_sgr = false,
            0x20..=0x7e if !in_sgr => return true,
            _ => {}
        }
    }
    false
}

/// The colour changes of a skipped stretch that still matter: from its last full reset on.
pub fn colour_changes(skipped: &[u8]) -> Vec<u8> {
    let mut kept: Vec<&[u8]> = Vec::new();
    let mut end = skipped.len();
    while let Some(at) = skipped[..end].iter().rposition(|b| *b == ESC) {
        let seq_end = skipped[at..]
            .iter()
            .position(|b| *b == b'm')
            .map_or(skipped.len(), |p| at + p + 1);
        let seq = &skipped[at..seq_end];
        kept.push(seq);
        if seq == b"\x1b[m" || seq == b"\x1b[0m" {
            break;
        }
        end = at;
    }
    kept.iter().rev().flat_map(|s| s.iter().copied()).collect()
}

impl Mirror {
    /// Parses a batch of the child's output (see [`Mirror::process`]).
    pub(super) fn process_batch(&mut self, bytes: &[u8]) {
        let rows = usize::from(self.parser.screen().size().0.get());
        let min_lines = 2 * rows + 2;
        // A batch with fewer line feeds than a run needs has nothing to skip.
        let may_skip = self.fast_forward && bytes.iter().filter(|b| **b == b'\n').count() >= min_lines;
        if !may_skip && bytes.len() <= TRACKED_BATCH {
            self.process_tracked(bytes);
            return;
        }
        let runs = if may_skip {
            runs(&mut self.follower, bytes, min_lines)
        } else {
            self.follower.skip(bytes);
            Vec::new()
        };
        // A flood: what it changed is not followed, every row counts as changed.
        self.changes.mark_all();
        let mut fed = 0;
        for run in runs {
            self.parser.process(&bytes[fed..run.start]);
            self.fast_forward(&bytes[run.start..run.end], rows);
            fed = run.end;
        }
        self.parser.process(&bytes[fed..]);
    }

    /// Parses a plain run (see the module's comment), skipping what scrolls away unseen. The run is
    /// parsed a few lines at a time until vt100 scrolls, which shows the cursor on the bottom row
    /// of a region that starts at the top; then the cut is made.
    fn fast_forward(&mut self, run: &[u8], rows: usize) {
        self.parser.callbacks_mut().scrolled = false;
        let mut at = 0;
        let mut fed_lines = 0;
        while !self.parser.callbacks().scrolled && fed_lines <= rows {
            let (row, _) = self.parser.screen().cursor_position();
            let step = rows.saturating_sub(usize::from(row)).max(1);
            let Some(end) = after_line_feeds(&run[at..], step) else {
                break;
            };
            self.parser.process(&run[at..at + end]);
            at += end;
            fed_lines += step;
        }
        if self.parser.callbacks().scrolled {
            let (bottom, _) = self.parser.screen().cursor_position();
            if let Some((from, to)) = cut(run, at, bottom) {
                // The skipped stretch ends with CR LF on the bottom row: the cursor ends at column 0.
                let mut instead = colour_changes(&run[from..to]);
                instead.push(b'\r');
                self.parser.process(&instead);
                self.skipped += to - from;
                at = to;
            }
        }
        self.parser.process(&run[at..]);
    }
}

/// The index just past the `n`th line feed of `bytes`, if it has that many.
fn after_line_feeds(bytes: &[u8], n: usize) -> Option<usize> {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(n.checked_sub(1)?)
        .map(|(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(bytes: &[u8]) -> Vec<(usize, usize)> {
        super::runs(&mut Follower::default(), bytes, 1)
            .into_iter()
            .map(|r| (r.start, r.end))
            .collect()
    }

    #[test]
    fn plain_lines_with_colours_are_one_run() {
        let b = b"a\x1b[1;31mb\x1b[0m\r\nc\r\n";
        assert_eq!(runs(b), vec![(0, b.len())]);
    }

    #[test]
    fn other_sequences_and_controls_end_a_run() {
        let b = b"a\r\n\x1b[2Jb\r\n\x07c\r\n\x1b[?25l";
        assert_eq!(runs(b), vec![(0, 3), (7, 10), (11, 14)]);
    }

    #[test]
    fn strings_are_not_runs_until_they_end() {
        assert_eq!(runs(b"\x1b]0;a\r\nb\x07c\r\n"), vec![(9, 12)]);
        assert_eq!(runs(b"\x1bPq\r\nx\x1b\\y\r\n"), vec![(8, 11)]);
        // After a DCS ended by anything but ESC, CAN or SUB the follower stays unsure.
        assert_eq!(runs(b"\x1bPq\r\nx\x9cy\r\n"), vec![]);
    }

    #[test]
    fn state_carries_over_between_batches() {
        let mut f = Follower::default();
        let mut runs = |bytes: &[u8]| super::runs(&mut f, bytes, 1);
        assert_eq!(runs(b"a\r\n\x1b]2;ti"), vec![Run { start: 0, end: 3 }]);
        assert_eq!(runs(b"tle\r\n"), vec![]);
        assert_eq!(runs(b"\x07z\r\n\x1b[3"), vec![Run { start: 1, end: 4 }]);
        assert_eq!(runs(b"1mq\r\n"), vec![Run { start: 2, end: 5 }]);
    }

    #[test]
    fn the_cut_leaves_enough_lines_and_ends_on_cr_lf() {
        let run = b"0\r\n1\r\n2\n3\r\n4\r\n5\r\n";
        // Two rows in the region: two line feeds must follow the cut.
        assert_eq!(cut(run, 0, 1), Some((0, 11)));
        assert_eq!(
            cut(run, 0, 2),
            Some((0, 6)),
            "line 2 ends with a bare LF: one line up"
        );
        assert_eq!(cut(run, 0, 4), Some((0, 3)));
        assert_eq!(cut(run, 0, 5), None);
        assert_eq!(
            cut(run, 3, 4),
            None,
            "the cut cannot start before where the parser is"
        );
        assert_eq!(cut(b"0\r\n1\r\n\r\n\r\n", 0, 1), None, "nothing printed after");
    }

    #[test]
    fn only_colour_changes_since_the_last_reset_are_kept() {
        assert_eq!(
            colour_changes(b"a\x1b[1mb\x1b[0mc\x1b[31md\x1b[4me\r\n"),
            b"\x1b[0m\x1b[31m\x1b[4m"
        );
        assert_eq!(colour_changes(b"a\x1b[1mb\x1b[32m"), b"\x1b[1m\x1b[32m");
        assert_eq!(colour_changes(b"plain\r\n"), b"");
    }
}
