//! The intervention ledger when it cannot write: a read-only directory, a file where the directory
//! should be, a full disk. Records are written whole or not at all, the loss is counted and shown by
//! `status()`, and writing resumes once the cause is gone.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pokeshell::pi::ledger::{LedgerFile, LedgerTarget, Opener, open_ledger_file};
use pokeshell_core::supervisor::{LedgerKind, LedgerRecord};

fn record(reason: &str) -> LedgerRecord {
    LedgerRecord {
        wall_ms: 1,
        session_id: Some("s1".into()),
        rule: "POKE-W4",
        kind: LedgerKind::Action,
        reason: reason.into(),
        sent: None,
    }
}

/// The reasons of the records in the file; every line must be a whole record.
fn reasons(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "a cut line: {text:?}");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}"));
            v["reason"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn a_read_only_directory_loses_records_visibly_and_writing_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("state");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let mut l = if unsafe { libc::geteuid() } == 0 {
        // Root ignores permission bits, so the check the kernel makes for everyone else is made here.
        LedgerFile::with_opener(
            &dir,
            Box::new(|path: &Path| {
                let mode = fs::metadata(path.parent().unwrap())?.permissions().mode();
                if mode & 0o200 == 0 {
                    return Err(io::Error::from(io::ErrorKind::PermissionDenied));
                }
                open_ledger_file(path)
            }),
        )
    } else {
        LedgerFile::new(&dir)
    };
    assert_eq!(l.status(), None);
    l.append(&record("a"));
    l.append(&record("b"));
    assert_eq!(l.lost(), 2);
    let status = l.status().expect("the loss is reported");
    assert!(status.contains("2 records lost"), "{status}");
    assert!(status.to_lowercase().contains("permission denied"), "{status}");
    assert!(l.error().is_some());

    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    l.append(&record("c"));
    assert_eq!(reasons(l.path()), ["c"]);
    assert!(l.error().is_none());
    let status = l.status().expect("the earlier loss stays visible");
    assert!(
        status.contains("written again") && status.contains("2 records lost"),
        "{status}"
    );
}

#[test]
fn a_file_in_place_of_the_directory_then_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pokeshell");
    fs::write(&dir, "not a directory").unwrap();
    let mut l = LedgerFile::new(&dir);
    l.append(&record("a"));
    assert_eq!(l.lost(), 1);
    assert!(l.status().is_some_and(|s| s.contains("1 record lost")));
    fs::remove_file(&dir).unwrap();
    l.append(&record("b"));
    l.append(&record("c"));
    assert_eq!(reasons(l.path()), ["b", "c"]);
    assert_eq!(l.lost(), 1);
}

/// Switches the ledger's target between the real file and `/dev/full` (every write: no space).
fn switchable(full: Arc<AtomicBool>) -> Opener {
    Box::new(move |path: &Path| {
        if full.load(Ordering::SeqCst) {
            let dev = OpenOptions::new().read(true).append(true).open("/dev/full")?;
            Ok(Box::new(dev) as Box<dyn LedgerTarget>)
        } else {
            open_ledger_file(path)
        }
    })
}

#[test]
fn a_full_disk_loses_records_and_writing_resumes_when_space_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let full = Arc::new(AtomicBool::new(true));
    let mut l = LedgerFile::with_opener(tmp.path(), switchable(full.clone()));
    l.append(&record("a"));
    l.append(&record("b"));
    let status = l.status().expect("reported");
    assert!(
        status.contains("No space left") && status.contains("2 records lost"),
        "{status}"
    );
    full.store(false, Ordering::SeqCst);
    l.append(&record("c"));
    assert_eq!(reasons(l.path()), ["c"]);
    assert_eq!(l.lost(), 2);
}

/// A file that takes only `room` more bytes, then fails as a full disk does, part-way through a write.
struct NearlyFull {
    file: fs::File,
    room: Arc<AtomicUsize>,
}

impl LedgerTarget for NearlyFull {
    fn size(&mut self) -> io::Result<u64> {
        self.file.size()
    }
    fn last_byte(&mut self) -> io::Result<Option<u8>> {
        self.file.last_byte()
    }
    fn append(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.room.load(Ordering::SeqCst);
        if room == 0 {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let n = buf.len().min(room);
        self.room.fetch_sub(n, Ordering::SeqCst);
        self.file.append(&buf[..n])
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.truncate(len)
    }
}

fn nearly_full(room: Arc<AtomicUsize>) -> Opener {
    Box::new(move |path: &Path| {
        let file = OpenOptions::new()
            .read(true)
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Box::new(NearlyFull {
            file,
            room: room.clone(),
        }) as Box<dyn LedgerTarget>)
    })
}

#[test]
fn a_record_cut_by_a_full_disk_is_removed_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let room = Arc::new(AtomicUsize::new(usize::MAX));
    let mut l = LedgerFile::with_opener(tmp.path(), nearly_full(room.clone()));
    l.append(&record("a"));
    let before = fs::metadata(l.path()).unwrap().len();
    room.store(10, Ordering::SeqCst);
    l.append(&record("b"));
    assert_eq!(
        fs::metadata(l.path()).unwrap().len(),
        before,
        "cut back to the last whole record"
    );
    assert_eq!(reasons(l.path()), ["a"]);
    room.store(usize::MAX, Ordering::SeqCst);
    l.append(&record("c"));
    assert_eq!(reasons(l.path()), ["a", "c"]);
    assert_eq!(l.lost(), 1);
}

#[test]
fn a_line_cut_by_an_older_run_does_not_swallow_the_next_record() {
    let tmp = tempfile::tempdir().unwrap();
    let path: PathBuf = tmp.path().join("interventions.jsonl");
    fs::write(&path, "{\"reason\":\"half").unwrap();
    let mut l = LedgerFile::new(tmp.path());
    l.append(&record("a"));
    let text = fs::read_to_string(&path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["reason"], "a");
    assert_eq!(text.lines().count(), 2);
}
