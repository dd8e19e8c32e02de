//! Which rows of a screen may have changed, kept by whoever feeds the screen (the PTY's mirror) so
//! that whoever draws it (the pane) looks only at those rows instead of comparing the whole screen
//! with a copy of it. A row may be marked that did not change (drawing it again costs a little);
//! a row that changed must be marked.

use std::sync::atomic::{AtomicU64, Ordering};

/// Per row, when it last may have changed, as a count of marks.
#[derive(Debug, Clone)]
pub struct RowChanges {
    /// Tells one record from another: a reader that saw another record's count knows nothing here.
    id: u64,
    /// Counts the marks made so far.
    version: u64,
    rows: Vec<u64>,
}

/// How far a reader has seen a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    id: u64,
    version: u64,
}

impl RowChanges {
    /// A record of `rows` rows, every one of them new.
    pub fn new(rows: u16) -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            version: 1,
            rows: vec![1; usize::from(rows)],
        }
    }

    /// Marks `rows`, as far as the screen has them.
    pub fn mark_rows(&mut self, rows: std::ops::Range<u16>) {
        self.version += 1;
        let end = usize::from(rows.end).min(self.rows.len());
        for r in self.rows.iter_mut().take(end).skip(usize::from(rows.start)) {
            *r = self.version;
        }
    }

    pub fn mark_all(&mut self) {
        self.version += 1;
        self.rows.fill(self.version);
    }

    /// The screen has `rows` rows now, every one of them changed.
    pub fn resize(&mut self, rows: u16) {
        self.rows.resize(usize::from(rows), 0);
        self.mark_all();
    }

    /// What a reader that has looked at every row now has seen.
    pub fn seen(&self) -> Seen {
        Seen {
            id: self.id,
            version: self.version,
        }
    }

    /// The rows marked since `seen`; `None` when `seen` is of another record (every row is new to
    /// that reader).
    pub fn since(&self, seen: Seen) -> Option<Vec<u16>> {
        (seen.id == self.id).then(|| {
            (0u16..)
                .zip(&self.rows)
                .filter(|(_, v)| **v > seen.version)
                .map(|(r, _)| r)
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_hears_of_the_rows_marked_since_it_looked() {
        let mut c = RowChanges::new(4);
        let seen = c.seen();
        assert_eq!(c.since(seen), Some(vec![]));
        c.mark_rows(2..3);
        c.mark_rows(0..1);
        assert_eq!(c.since(seen), Some(vec![0, 2]));
        let later = c.seen();
        c.mark_rows(3..9);
        assert_eq!(c.since(later), Some(vec![3]));
        assert_eq!(c.since(seen), Some(vec![0, 2, 3]));
        c.mark_all();
        assert_eq!(c.since(later), Some(vec![0, 1, 2, 3]));
    }

    #[test]
    fn another_record_or_a_resize_tells_every_row() {
        let mut c = RowChanges::new(3);
        let other = RowChanges::new(3);
        assert_eq!(c.since(other.seen()), None);
        let seen = c.seen();
        c.resize(5);
        assert_eq!(c.since(seen), Some(vec![0, 1, 2, 3, 4]));
    }
}
