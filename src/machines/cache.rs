//! The last listing each machine gave, with when: `$XDG_STATE_HOME/pokeshell/machines.json`. A
//! machine that does not answer is shown with what it said last. The file is a cache: one that
//! cannot be read is started again, never an error.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::schema::LsJson;

const FILE_NAME: &str = "machines.json";

/// One machine's last answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Known {
    /// When it answered (Unix ms).
    pub at_ms: u64,
    pub listing: LsJson,
}

/// Every machine's last answer, by destination.
pub type Cache = BTreeMap<String, Known>;

pub fn default_path() -> Option<PathBuf> {
    crate::pi::ledger::default_dir().map(|d| d.join(FILE_NAME))
}

/// The cache; empty when missing or unreadable.
pub fn load(path: &Path) -> Cache {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Replaces the file in one step (a private temporary file, then a rename).
pub fn save(path: &Path, cache: &Cache) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("cannot save {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| fail(&e))?;
    }
    let body = serde_json::to_vec(cache).map_err(|e| fail(&e))?;
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&body));
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(&e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_and_a_broken_file_is_an_empty_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/machines.json");
        assert!(load(&path).is_empty());
        let mut cache = Cache::new();
        cache.insert(
            "gpu".into(),
            Known {
                at_ms: 42,
                listing: LsJson {
                    schema: 1,
                    version: "x".into(),
                    machine: "gpu".into(),
                    server: true,
                    sessions: Vec::new(),
                },
            },
        );
        save(&path, &cache).unwrap();
        assert_eq!(load(&path), cache);
        std::fs::write(&path, b"{broken").unwrap();
        assert!(load(&path).is_empty());
    }
}
