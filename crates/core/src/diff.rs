//! What an agent changed, as one model that every view draws: `pokeshell diff`'s text
//! ([`text`]), the terminal's changes overlay and the web view's Changes view. The binary runs git
//! (`git::changes`, bounded in time and output) and [`parse`] reads its output into [`Changes`]:
//! files, hunks, lines, each file with its status and counts, cut to [`Limits`] with a note saying
//! what was left out. Binary, deleted and renamed files are named, never dumped.

mod parse;
mod quote;
pub mod review;
pub mod text;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use parse::parse;

/// A commit id as git writes it (SHA-1 or SHA-256, whole or abbreviated). Nothing else is kept
/// as a session's base or handed to git as one: a client or a saved list may send anything.
pub fn is_commit_id(text: &str) -> bool {
    (4..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// How much of a diff is kept. git's output is read whole (it is bounded where git runs); what is
/// past these is counted and named in a note, not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Hunk lines kept over all files.
    pub lines: usize,
    /// Characters kept of one line (a minified file's line can be megabytes).
    pub line_chars: usize,
    /// Files listed; the rest are counted in the note.
    pub files: usize,
}

impl Limits {
    /// For the terminal's overlay and the web view: what a person reads on a screen or a phone.
    pub const VIEW: Limits = Limits {
        lines: 5_000,
        line_chars: 400,
        files: 1_000,
    };
    /// For `pokeshell diff`: a pager or a file takes much more.
    pub const COMMAND: Limits = Limits {
        lines: 200_000,
        line_chars: 4_000,
        files: 20_000,
    };
}

/// The changes of a checkout against its base commit.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Changes {
    /// The commit compared against.
    pub base: String,
    pub files: Vec<FileChange>,
    /// What was left out (lines or files past the limits, or past git's output bound); `None`: the
    /// whole diff is here.
    pub note: Option<String>,
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Added,
    Modified,
    Deleted,
    Renamed,
    Copied,
    /// A file became a link or the other way round.
    TypeChanged,
    /// In a merge conflict.
    Unmerged,
}

impl Status {
    /// From git's one-letter status (`--raw`).
    pub fn from_letter(c: char) -> Status {
        match c {
            'A' => Status::Added,
            'D' => Status::Deleted,
            'R' => Status::Renamed,
            'C' => Status::Copied,
            'T' => Status::TypeChanged,
            'U' => Status::Unmerged,
            _ => Status::Modified,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Status::Added => "added",
            Status::Modified => "modified",
            Status::Deleted => "deleted",
            Status::Renamed => "renamed",
            Status::Copied => "copied",
            Status::TypeChanged => "type changed",
            Status::Unmerged => "unmerged",
        }
    }
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileChange {
    /// Its path now (for a deleted file, the path it had).
    pub path: String,
    /// Where a renamed or copied file came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub status: Status,
    /// How alike a renamed or copied file is to its origin, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<u8>,
    /// Lines added and removed; `None` for a binary file.
    pub added: Option<u64>,
    pub removed: Option<u64>,
    pub binary: bool,
    pub hunks: Vec<Hunk>,
    /// Why some or all of its lines are not shown (binary, deleted, cut at the limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl FileChange {
    /// "a.rs → b.rs" for a rename, the path otherwise.
    pub fn title(&self) -> String {
        match &self.from {
            Some(from) => format!("{from} → {}", self.path),
            None => self.path.clone(),
        }
    }

    /// "+3 -1", or "binary".
    pub fn counts(&self) -> String {
        match (self.added, self.removed) {
            (Some(a), Some(r)) => format!("+{a} -{r}"),
            _ => "binary".to_string(),
        }
    }

    /// Lines kept in its hunks.
    pub fn lines(&self) -> usize {
        self.hunks.iter().map(|h| h.lines.len()).sum()
    }
}

/// One hunk: a run of changed lines with their context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hunk {
    /// The `@@ -a,b +c,d @@` line as git wrote it, function context included.
    pub header: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    Context,
    Added,
    Removed,
    /// git's "\ No newline at end of file" about the line before.
    NoNewline,
}

/// One line of a hunk, with its numbers in the old and the new file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub kind: LineKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<u32>,
    /// Without its `+`, `-` or space; cut to [`Limits::line_chars`] (then it ends with `…`).
    pub text: String,
}

impl Changes {
    /// Lines added and removed over every file (binary files count none).
    pub fn totals(&self) -> (u64, u64) {
        self.files.iter().fold((0, 0), |(a, r), f| {
            (a + f.added.unwrap_or(0), r + f.removed.unwrap_or(0))
        })
    }

    /// "3 files changed, +12 -4" (or "no changes").
    pub fn summary(&self) -> String {
        if self.files.is_empty() {
            return "no changes".to_string();
        }
        let (a, r) = self.totals();
        let files = if self.files.len() == 1 { "file" } else { "files" };
        format!("{} {files} changed, +{a} -{r}", self.files.len())
    }
}
