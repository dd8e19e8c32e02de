//! The list of sessions the pokeshell server keeps running, saved so a restarted server can bring them
//! back: `$XDG_STATE_HOME/pokeshell/sessions.json` (else `~/.local/state/pokeshell/`).
//!
//! A save replaces the file in one step (a temporary file beside it, synced, then renamed), so a crash
//! or a full disk never leaves half a list behind. A file that cannot be read as a list is moved aside,
//! not deleted: the user can still look at it, and the next save is not blocked by it.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The format written by this code; a file of another version is moved aside like a malformed one.
const VERSION: u32 = 1;
const FILE_NAME: &str = "sessions.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSession {
    pub number: u32,
    pub name: String,
    pub dir: String,
    /// The user's arguments for pi (not pokeshell's own, not the bridge's).
    #[serde(default)]
    pub args: Vec<String>,
    /// `Some(line)`: a hosted command (`pokeshell --command`) instead of pi.
    #[serde(default)]
    pub command: Option<String>,
    /// pi's session file, once pi reported it.
    #[serde(default)]
    pub session_file: Option<String>,
    /// The agent was in a run when last saved.
    #[serde(default)]
    pub mid_run: bool,
}

#[derive(Deserialize)]
struct StoredList {
    version: u32,
    sessions: Vec<SavedSession>,
}

#[derive(Serialize)]
struct StoredListRef<'a> {
    version: u32,
    sessions: &'a [SavedSession],
}

/// Where the server keeps its list, beside the interventions ledger.
pub fn default_path() -> Option<PathBuf> {
    crate::ledger::default_dir().map(|dir| dir.join(FILE_NAME))
}

/// The saved list; a missing file is an empty list. A file that cannot be understood is moved aside
/// to `<name>.bad-<unix time>` and reported as an error (the caller starts with no saved sessions).
pub fn load(path: &Path) -> Result<Vec<SavedSession>, String> {
    let text = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(format!(
                "cannot read the saved sessions in {}: {e}",
                path.display()
            ));
        }
    };
    let problem = match serde_json::from_slice::<StoredList>(&text) {
        Ok(list) if list.version == VERSION => return Ok(list.sessions),
        Ok(list) => format!(
            "it has version {}, this pokeshell understands version {VERSION}",
            list.version
        ),
        Err(e) => format!("it is not a valid session list ({e})"),
    };
    let fate = match move_aside(path) {
        Ok(bad) => format!("it was moved to {} and no session is restored", bad.display()),
        Err(e) => format!("moving it aside failed ({e}); the next save will replace it"),
    };
    Err(format!(
        "the saved sessions in {} were not restored: {problem}; {fate}",
        path.display()
    ))
}

/// Replaces the saved list in one step; creates the directory (private to the user) if missing.
pub fn save(path: &Path, sessions: &[SavedSession]) -> Result<(), String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        format!("cannot save the session list to {}: {what}: {e}", path.display())
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| fail("creating its directory", &e))?;
    let body = serde_json::to_vec_pretty(&StoredListRef {
        version: VERSION,
        sessions,
    })
    .map_err(|e| fail("encoding", &e))?;
    let tmp = sibling(path, ".tmp");
    if let Err(e) = write_synced(&tmp, &body) {
        // Only remove what we may have created: a directory in the way is left alone.
        if tmp.is_file() {
            let _ = fs::remove_file(&tmp);
        }
        return Err(fail(&format!("writing {}", tmp.display()), &e));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(fail("replacing the old list", &e));
    }
    // The rename itself must reach the disk too; a failure here leaves a complete file either way.
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn write_synced(tmp: &Path, body: &[u8]) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(tmp)?;
    // A stale temporary file keeps its old mode through `open`; the list is private either way.
    file.set_permissions(fs::Permissions::from_mode(0o600))?;
    file.write_all(body)?;
    file.sync_all()
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Renames the file to a free `<name>.bad-<unix time>[-n]`, never over an earlier bad file.
fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let base = format!(".bad-{secs}");
    let mut target = sibling(path, &base);
    let mut n = 1;
    while target.exists() {
        target = sibling(path, &format!("{base}-{n}"));
        n += 1;
    }
    fs::rename(path, &target)?;
    Ok(target)
}

#[cfg(test)]
mod tests;
