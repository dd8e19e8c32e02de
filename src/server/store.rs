//! The list of sessions the pokeshell server keeps running, saved so a restarted server can bring them
//! back: `$XDG_STATE_HOME/pokeshell/sessions.json` (else `~/.local/state/pokeshell/`).
//!
//! A save replaces the file in one step (a temporary file beside it, created anew without following
//! links, synced, then renamed), so a crash or a full disk never leaves half a list behind, and a
//! link planted at the temporary name is never followed. The directory must be the user's own and
//! private, as the runtime directory is: the file decides what runs on a restore.
//!
//! Reading changes nothing ([`read`]): `pokeshell ls` may read. Only the server acts on a bad file
//! ([`settle`]): one it cannot parse is moved aside, not deleted, and said; one a newer pokeshell
//! wrote is left alone and not saved over.

use crate::pi::private_file;

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The format written by this code. A newer one is left alone; an older or broken one is moved aside.
const VERSION: u32 = 1;
const FILE_NAME: &str = "sessions.json";

pub use pokeshell_core::server::saved_session::SavedSession;

/// Read first, alone: a newer list's sessions may have a shape this pokeshell cannot parse.
#[derive(Deserialize)]
struct Header {
    version: u32,
    /// The pokeshell that wrote it, to name in a refusal.
    #[serde(default)]
    written_by: Option<String>,
}

#[derive(Deserialize)]
struct StoredList {
    sessions: Vec<SavedSession>,
}

#[derive(Serialize)]
struct StoredListRef<'a> {
    version: u32,
    written_by: &'a str,
    sessions: &'a [SavedSession],
}

/// Where the server keeps its list, beside the interventions ledger.
pub fn default_path() -> Option<PathBuf> {
    crate::pi::ledger::default_dir().map(|dir| dir.join(FILE_NAME))
}

/// Why the saved list could not be used. Reading never changes anything on disk: only the server
/// acts on a problem ([`settle`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// It could not be read (permissions, an I/O error, a symlink in its place).
    Unreadable(String),
    /// It is not a list this pokeshell can parse.
    Invalid(String),
    /// A newer pokeshell wrote it: this one must neither restore nor replace it.
    Newer {
        version: u32,
        written_by: Option<String>,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Unreadable(e) => write!(f, "it cannot be read: {e}"),
            Problem::Invalid(e) => write!(f, "it is not a valid session list ({e})"),
            Problem::Newer { version, written_by } => {
                let by = written_by
                    .as_deref()
                    .map_or_else(String::new, |v| format!(" by pokeshell {v}"));
                write!(
                    f,
                    "it was written{by} in list version {version}; this pokeshell ({}) reads \
                     version {VERSION}",
                    env!("CARGO_PKG_VERSION")
                )
            }
        }
    }
}

/// The saved list; a missing file is an empty list. Changes nothing on disk, so a read-only command
/// (`pokeshell ls`) may call it.
pub fn read(path: &Path) -> Result<Vec<SavedSession>, Problem> {
    let text = match private_file::read_no_follow(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Problem::Unreadable(e.to_string())),
    };
    let header = serde_json::from_slice::<Header>(&text).map_err(|e| Problem::Invalid(e.to_string()))?;
    if header.version > VERSION {
        return Err(Problem::Newer {
            version: header.version,
            written_by: header.written_by,
        });
    }
    if header.version < VERSION {
        return Err(Problem::Invalid(format!("unknown version {}", header.version)));
    }
    serde_json::from_slice::<StoredList>(&text)
        .map(|list| list.sessions)
        .map_err(|e| Problem::Invalid(e.to_string()))
}

/// What the server does about a problem with its list, and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// For the server's log and the next client.
    pub message: String,
    /// Whether the server may save its own list over the file.
    pub may_save: bool,
}

/// The server's answer to a problem: an invalid list is moved aside (kept, never lost) and the
/// server saves its own from then on; a newer or unreadable one is left exactly as it is and not
/// saved over.
pub fn settle(path: &Path, problem: &Problem) -> Settled {
    let shown = path.display();
    match problem {
        Problem::Invalid(_) => {
            let fate = match move_aside(path) {
                Ok(bad) => format!("it was moved to {}", bad.display()),
                Err(e) => format!("moving it aside failed ({e}); the next save replaces it"),
            };
            Settled {
                message: format!("the saved sessions in {shown} were not restored: {problem}; {fate}"),
                may_save: true,
            }
        }
        Problem::Newer { .. } | Problem::Unreadable(_) => Settled {
            message: format!(
                "the saved sessions in {shown} were not restored: {problem}; the file is left as it \
                 is and this server does not save its sessions over it"
            ),
            may_save: false,
        },
    }
}

/// Replaces the saved list in one step; creates the directory (private to the user) if missing,
/// and refuses one that is not the user's own private directory.
pub fn save(path: &Path, sessions: &[SavedSession]) -> Result<(), String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        format!("cannot save the session list to {}: {what}: {e}", path.display())
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    private_file::ensure_state_dir(&dir).map_err(|e| fail("its directory", &e))?;
    let body = serde_json::to_vec_pretty(&StoredListRef {
        version: VERSION,
        written_by: env!("CARGO_PKG_VERSION"),
        sessions,
    })
    .map_err(|e| fail("encoding", &e))?;
    let tmp = sibling(path, ".tmp");
    if let Err(e) = private_file::write_new(&tmp, &body) {
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

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Renames the file to a free `<name>.bad-<unix time>[-n]`, never over an earlier bad file.
pub fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
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
