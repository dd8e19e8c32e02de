//! "Save as … default": puts values into pokeshell's blocks of a `settings.json` and changes nothing
//! else in it. The file is replaced atomically (a temporary file in the same directory, then a
//! rename), under the same lock pi takes when it writes its settings (`<file>.lock`, a directory).
//! A file that is not valid JSON is never written.

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::files::parse_object;
use super::ordered::{Member, RawObject};
use super::read::read_settings_text;
use super::schema::{self, KeyId};
use super::value::SettingValue;
use super::warning::WarningKind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveError {
    /// Nothing was changed in this session, so there is nothing to save.
    NothingToSave,
    /// The file is not valid JSON; it is left as it is.
    Malformed {
        path: PathBuf,
        error: String,
    },
    /// The file, or the block to write into, is not a JSON object; it is left as it is.
    NotAnObject {
        path: PathBuf,
        what: String,
    },
    /// Another program (pi) holds the file's lock.
    Locked {
        path: PathBuf,
    },
    Io {
        path: PathBuf,
        error: String,
    },
}

impl fmt::Display for SaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaveError::NothingToSave => {
                f.write_str("nothing to save: no setting was changed in this session")
            }
            SaveError::Malformed { path, error } => write!(
                f,
                "not saved: {} is not valid JSON ({error}); fix it by hand, pokeshell will not overwrite it",
                path.display()
            ),
            SaveError::NotAnObject { path, what } => write!(
                f,
                "not saved: {what} in {} is not a JSON object; fix it by hand, pokeshell will not overwrite it",
                path.display()
            ),
            SaveError::Locked { path } => {
                write!(
                    f,
                    "not saved: {} is locked by another program; try again",
                    path.display()
                )
            }
            SaveError::Io { path, error } => write!(f, "not saved: {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for SaveError {}

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
    let text = match &original {
        Some(text) => {
            // The checks (valid JSON, an object, each block an object) on the file as pi reads it.
            let root = parse_object(text).map_err(|kind| refusal(path, kind))?;
            let body = text.strip_prefix('\u{feff}').unwrap_or(text);
            let raw = RawObject::parse(body).map_err(|e| SaveError::Malformed {
                path: path.to_path_buf(),
                error: e.to_string(),
            })?;
            merged_text(path, &root, raw, values)?
        }
        None => merged_text(path, &Map::new(), RawObject::new(), values)?,
    };
    let mut text = text;
    if original.as_deref().is_none_or(|t| t.ends_with('\n')) {
        text.push('\n');
    }
    replace_atomically(&target, text.as_bytes()).map_err(io)
}

/// The file's text with `values` put into their blocks; every other member keeps its written form.
fn merged_text(
    path: &Path,
    root: &Map<String, Value>,
    mut raw: RawObject,
    values: &[(KeyId, SettingValue)],
) -> Result<String, SaveError> {
    let failed = |e: serde_json::Error| SaveError::Io {
        path: path.to_path_buf(),
        error: e.to_string(),
    };
    let mut blocks: Vec<(&str, RawObject)> = Vec::new();
    for (key, value) in values {
        let spec = schema::spec(*key);
        let block_name = spec.block.json_name();
        let index = match blocks.iter().position(|(name, _)| *name == block_name) {
            Some(i) => i,
            None => {
                let block = match (root.get(block_name), raw.get(block_name)) {
                    (None, _) | (_, None) => RawObject::new(),
                    (Some(Value::Object(_)), Some(text)) => RawObject::parse(text.get()).map_err(failed)?,
                    (Some(_), Some(_)) => {
                        return Err(SaveError::NotAnObject {
                            path: path.to_path_buf(),
                            what: format!("\"{block_name}\""),
                        });
                    }
                };
                blocks.push((block_name, block));
                blocks.len() - 1
            }
        };
        let text = serde_json::to_string(&value.to_json()).map_err(failed)?;
        let member = RawValue::from_string(text).map_err(failed)?;
        if let Some((_, block)) = blocks.get_mut(index) {
            block.set(spec.name, Member::Raw(member));
        }
    }
    for (name, block) in blocks {
        raw.set(name, Member::Object(block));
    }
    serde_json::to_string_pretty(&raw).map_err(failed)
}

fn refusal(path: &Path, kind: WarningKind) -> SaveError {
    let path = path.to_path_buf();
    match kind {
        WarningKind::Malformed { error } => SaveError::Malformed { path, error },
        _ => SaveError::NotAnObject {
            path,
            what: "the file".to_string(),
        },
    }
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
