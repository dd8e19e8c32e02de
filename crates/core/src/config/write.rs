//! "Save as … default": the new text of a `settings.json` with values put into pokeshell's blocks
//! and nothing else in it changed. A file that is not valid JSON is never rewritten. Replacing the
//! file (atomically, under pi's lock) is the binary crate's (`pi::settings_files::write`).

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::files::parse_object;
use super::ordered::{Member, RawObject};
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

/// The new text of the settings file at `path` (named in errors) whose text is `original` (`None`:
/// no file yet): each value put into its block, every other key, unknown ones included, kept in
/// their order and written form. A file that is not valid JSON, or not an object, is refused.
pub fn updated_text(
    path: &Path,
    original: Option<&str>,
    values: &[(KeyId, SettingValue)],
) -> Result<String, SaveError> {
    let mut text = match original {
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
    if original.is_none_or(|t| t.ends_with('\n')) {
        text.push('\n');
    }
    Ok(text)
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
