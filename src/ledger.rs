//! The intervention ledger on disk: one JSON line per supervisor record, appended to
//! `$XDG_STATE_HOME/pokeshell/interventions.jsonl` (else `~/.local/state/pokeshell/`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::supervisor::LedgerRecord;

/// Past this size the file is moved to `interventions.jsonl.1` and a new one started.
const ROTATE_BYTES: u64 = 10 * 1024 * 1024;

pub fn default_dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(state.join("pokeshell"))
}

pub struct LedgerFile {
    path: PathBuf,
    file: Option<File>,
    /// The first error, kept for the status overlay; later records are dropped quietly.
    error: Option<String>,
}

impl LedgerFile {
    pub fn new(dir: &Path) -> Self {
        Self {
            path: dir.join("interventions.jsonl"),
            file: None,
            error: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn open(&mut self) -> std::io::Result<&mut File> {
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            if self.path.metadata().is_ok_and(|m| m.len() > ROTATE_BYTES) {
                std::fs::rename(&self.path, self.path.with_extension("jsonl.1"))?;
            }
            self.file = Some(OpenOptions::new().create(true).append(true).open(&self.path)?);
        }
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("ledger file not open"))
    }

    /// Appends one record; a failure is remembered, never fatal: supervision goes on without a log.
    pub fn append(&mut self, record: &LedgerRecord) {
        if self.error.is_some() {
            return;
        }
        let line = match serde_json::to_string(record) {
            Ok(l) => l,
            Err(e) => {
                self.error = Some(format!("cannot encode a ledger record: {e}"));
                return;
            }
        };
        let result = self.open().and_then(|f| writeln!(f, "{line}"));
        if let Err(e) = result {
            self.error = Some(format!("cannot write {}: {e}", self.path.display()));
            self.file = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervisor::LedgerKind;

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
