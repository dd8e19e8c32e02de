//! "Save as … default" on disk: the new text (`pokeshell_core::config::write::updated_text`) replaces
//! the file atomically (a temporary file in the same directory, then a rename), under the same lock
//! pi takes when it writes its settings (`<file>.lock`, a directory).

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use pokeshell_core::config::write::{SaveError, updated_text};
use pokeshell_core::config::{KeyId, SettingValue};

use super::read::read_settings_text;

/// Writes each value into its block of the JSON file at `path` (created if missing), keeping every
/// other key, unknown ones included, in their order.
pub fn write_values(path: &Path, values: &[(KeyId, SettingValue)]) -> Result<(), SaveError> {
    let io = |e: std::io::Error| SaveError::Io {
        path: path.to_path_buf(),
        error: e.to_string(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let _lock = FileLock::acquire(path)?;
    // A symlinked settings file (dotfile managers) stays a symlink: the file it points to is replaced.
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let original = read_settings_text(&target).map_err(io)?;
    let text = updated_text(path, original.as_deref(), values)?;
    replace_atomically(&target, text.as_bytes()).map_err(io)
}

static TEMP_COUNTER: AtomicU32 = AtomicU32::new(0);

fn replace_atomically(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.pokeshell-{}-{n}.tmp", std::process::id()));
    let result = write_then_rename(&temp, target, bytes);
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

fn write_then_rename(temp: &Path, target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(temp)?;
    file.write_all(bytes)?;
    if let Ok(meta) = fs::metadata(target) {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_all()?;
    drop(file);
    fs::rename(temp, target)?;
    // Make the rename itself durable; a failure here does not undo a completed write.
    if let Some(dir) = target.parent()
        && let Ok(d) = fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// pi's lock convention (proper-lockfile): the directory `<file>.lock` exists while someone writes.
struct FileLock {
    dir: PathBuf,
}

const LOCK_ATTEMPTS: u32 = 10;
const LOCK_RETRY: Duration = Duration::from_millis(20);
/// proper-lockfile's default: a lock not refreshed for this long was left by a dead process.
const LOCK_STALE: Duration = Duration::from_secs(10);

impl FileLock {
    fn acquire(path: &Path) -> Result<FileLock, SaveError> {
        let mut name = OsString::from(path.as_os_str());
        name.push(".lock");
        let dir = PathBuf::from(name);
        for attempt in 0..LOCK_ATTEMPTS {
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(FileLock { dir }),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    if is_stale(&dir) {
                        let _ = fs::remove_dir(&dir);
                        continue;
                    }
                    if attempt + 1 < LOCK_ATTEMPTS {
                        std::thread::sleep(LOCK_RETRY);
                    }
                }
                Err(e) => {
                    return Err(SaveError::Io {
                        path: dir,
                        error: e.to_string(),
                    });
                }
            }
        }
        Err(SaveError::Locked {
            path: path.to_path_buf(),
        })
    }
}

fn is_stale(dir: &Path) -> bool {
    let modified = fs::metadata(dir).and_then(|m| m.modified());
    matches!(modified.map(|t| SystemTime::now().duration_since(t)), Ok(Ok(age)) if age > LOCK_STALE)
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.dir);
    }
}
