//! The intervention ledger on disk: one JSON line per supervisor record, appended to
//! `$XDG_STATE_HOME/pokeshell/interventions.jsonl` (else `~/.local/state/pokeshell/`).
//!
//! A record is written whole or not at all: the line goes out in one write, and when the write fails
//! part-way (a full disk) the file is cut back to where the record began. A failure never stops
//! supervision: the record is counted as lost, [`LedgerFile::status`] says so, and the next record
//! tries again from scratch (directory, open, write), so writing resumes once the cause is gone.
//!
//! Each line also names the pokeshell run that wrote it (`run`: pid and start time). The record's
//! `session_id` is pi's session, and two runs in the same pi session (`--continue` in the same
//! directory) share it; `run` tells their records apart.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub use pokeshell_core::supervisor::ledger::{LedgerKind, LedgerRecord};

/// Past this size the file is moved to `interventions.jsonl.1` and a new one started.
const ROTATE_BYTES: u64 = 10 * 1024 * 1024;

pub fn default_dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(state.join("pokeshell"))
}

/// This process's run: `<pid>-<start in Unix ms>`, the same for every record it writes.
pub fn run_id() -> &'static str {
    static RUN: OnceLock<String> = OnceLock::new();
    RUN.get_or_init(|| {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("{}-{ms}", std::process::id())
    })
}

/// One line of the file: the record and the run that wrote it.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    record: &'a LedgerRecord,
    run: &'static str,
}

/// Where the lines go: the file, or in tests a stand-in that can fail on demand.
pub trait LedgerTarget: Send {
    /// The current length (where an appended record begins).
    fn size(&mut self) -> io::Result<u64>;
    /// The last byte, to tell whether the file ends in the middle of a line.
    fn last_byte(&mut self) -> io::Result<Option<u8>>;
    /// Appends at the end; may write only part of `buf`.
    fn append(&mut self, buf: &[u8]) -> io::Result<usize>;
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

impl LedgerTarget for File {
    fn size(&mut self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn last_byte(&mut self) -> io::Result<Option<u8>> {
        let len = LedgerTarget::size(self)?;
        if len == 0 {
            return Ok(None);
        }
        let mut byte = [0u8; 1];
        let n = self.read_at(&mut byte, len - 1)?;
        Ok((n == 1).then_some(byte[0]))
    }

    fn append(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write(buf)
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

/// Opens the target for a ledger path (creating what is missing).
pub type Opener = Box<dyn FnMut(&Path) -> io::Result<Box<dyn LedgerTarget>> + Send>;

pub struct LedgerFile {
    path: PathBuf,
    opener: Opener,
    target: Option<Box<dyn LedgerTarget>>,
    /// The last failure while it lasts; cleared by the next record written.
    failing: Option<String>,
    /// The last failure ever, kept for the status after writing resumed.
    last_error: Option<String>,
    lost: u64,
}

impl LedgerFile {
    pub fn new(dir: &Path) -> Self {
        Self::with_opener(dir, Box::new(open_ledger_file))
    }

    /// A ledger whose target comes from `opener` (tests use it to simulate a full disk).
    pub fn with_opener(dir: &Path, opener: Opener) -> Self {
        Self {
            path: dir.join("interventions.jsonl"),
            opener,
            target: None,
            failing: None,
            last_error: None,
            lost: 0,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The error of the last append while appends fail; `None` once a record is written again.
    pub fn error(&self) -> Option<&str> {
        self.failing.as_deref()
    }

    /// How many records could not be written during this run.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// One line for the side pane and the status overlay when the ledger lost records: what failed
    /// and how many, and whether writing works again. `None` while every record was written.
    pub fn status(&self) -> Option<String> {
        let n = self.lost;
        let records = if n == 1 { "record" } else { "records" };
        match (&self.failing, &self.last_error) {
            (Some(e), _) => Some(format!("ledger not written, {n} {records} lost: {e}")),
            (None, Some(e)) if n > 0 => {
                Some(format!("ledger written again; {n} {records} lost earlier ({e})"))
            }
            _ => None,
        }
    }

    /// Appends one record; a failure is counted and reported, never fatal: supervision goes on.
    pub fn append(&mut self, record: &LedgerRecord) {
        let line = Line {
            record,
            run: run_id(),
        };
        let result = serde_json::to_string(&line)
            .map_err(|e| format!("cannot encode a ledger record: {e}"))
            .and_then(|line| {
                self.write_line(&line)
                    .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
            });
        match result {
            Ok(()) => self.failing = None,
            Err(e) => {
                self.lost += 1;
                self.last_error = Some(e.clone());
                self.failing = Some(e);
                // Start over (directory, open) on the next record.
                self.target = None;
            }
        }
    }

    fn write_line(&mut self, line: &str) -> io::Result<()> {
        if self.target.is_none() {
            self.target = Some((self.opener)(&self.path)?);
        }
        let Some(target) = self.target.as_mut() else {
            return Err(io::Error::other("ledger file not open"));
        };
        let start = target.size()?;
        let mut bytes = Vec::with_capacity(line.len() + 2);
        // A line cut short earlier (by a crash, or an older pokeshell) must not swallow this record.
        if target.last_byte()?.is_some_and(|b| b != b'\n') {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let mut written = 0;
        while written < bytes.len() {
            match target.append(&bytes[written..]) {
                Ok(0) => {
                    let e = io::Error::new(io::ErrorKind::WriteZero, "nothing written");
                    return Err(cut_back(target.as_mut(), start, written, e));
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(cut_back(target.as_mut(), start, written, e)),
            }
        }
        Ok(())
    }
}

/// Removes a part-written record, but only when the file ends with it: another pokeshell appending
/// to the same file meanwhile must not lose its line.
fn cut_back(target: &mut dyn LedgerTarget, start: u64, written: usize, error: io::Error) -> io::Error {
    if written > 0 && target.size().is_ok_and(|len| len == start + written as u64) {
        let _ = target.truncate(start);
    }
    error
}

/// The real opener: creates the directory, rotates a full file, opens for appending.
pub fn open_ledger_file(path: &Path) -> io::Result<Box<dyn LedgerTarget>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if path.metadata().is_ok_and(|m| m.len() > ROTATE_BYTES) {
        std::fs::rename(path, path.with_extension("jsonl.1"))?;
    }
    let file = OpenOptions::new()
        .read(true)
        .create(true)
        .append(true)
        .open(path)?;
    Ok(Box::new(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(reason: &str) -> LedgerRecord {
        LedgerRecord {
            wall_ms: 1,
            session_id: Some("s1".into()),
            rule: "POKE-W4",
            kind: LedgerKind::Action,
            reason: reason.into(),
            sent: Some("[Poke] resume".into()),
        }
    }

    #[test]
    fn appends_one_json_line_per_record() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = LedgerFile::new(&dir.path().join("state/pokeshell"));
        l.append(&record("a"));
        l.append(&record("b"));
        let text = std::fs::read_to_string(l.path()).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["rule"], "POKE-W4");
        assert_eq!(lines[0]["kind"], "action");
        assert_eq!(lines[1]["reason"], "b");
        assert_eq!(lines[1]["session_id"], "s1");
        assert_eq!(lines[1]["run"], run_id());
        assert!(run_id().starts_with(&format!("{}-", std::process::id())));
        assert!(l.error().is_none());
    }

    #[test]
    fn an_unwritable_place_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").unwrap();
        let mut l = LedgerFile::new(&blocker.join("sub"));
        l.append(&record("a"));
        assert!(l.error().is_some_and(|e| e.contains("cannot write")));
        l.append(&record("b"));
    }
}
