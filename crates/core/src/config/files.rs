//! The settings files pokeshell reads, in priority order, and how each one is parsed. A file that is
//! missing is skipped silently; a malformed one gives one warning and is ignored as a whole; a bad
//! value gives a warning naming the file, the key and the value, and the rest of the file applies.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::paths::ConfigPaths;
use super::schema::{self, Block};
use super::source::Scope;
use super::value::Layer;
use super::warning::{ConfigWarning, Origin, WarningKind, short_json};

/// pi's own top-level setting read beside `poke.thresholdSeconds` (see docs/configuration.md).
pub const TOOL_TIMEOUT_KEY: &str = "toolTimeoutMs";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// pi's `settings.json`: pokeshell's four blocks and pi's top-level `toolTimeoutMs`.
    PiSettings,
    /// pi-poke's legacy global `~/.pi/settings.json`: only its `poke` block.
    LegacyPiSettings,
    /// An extension's own file: one block's keys at the top level (unknown keys are ignored).
    Flat(Block),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub scope: Scope,
    pub format: FileFormat,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileState {
    Missing,
    Read,
    Malformed,
    Unreadable,
}

/// One file after reading: its values (all valid), pi's tool timeout if set, and its warnings.
#[derive(Clone, Debug)]
pub struct LoadedFile {
    pub file: ConfigFile,
    pub state: FileState,
    pub values: Layer,
    pub tool_timeout_ms: Option<u64>,
    pub warnings: Vec<ConfigWarning>,
}

/// Every file pokeshell reads, lowest priority first. Within a scope `settings.json` comes last, so
/// its blocks (which "save as default" writes) beat the extensions' own files. `same_file` says
/// whether two paths name one file (the caller asks the disk).
pub fn config_files(paths: &ConfigPaths, same_file: impl Fn(&Path, &Path) -> bool) -> Vec<ConfigFile> {
    let file = |path: PathBuf, scope, format| ConfigFile { path, scope, format };
    let mut files = Vec::new();
    if let Some(legacy) = &paths.legacy_settings {
        // With the agent dir at ~/.pi, or the project at ~, the legacy path is already read as pi's.
        let shadowed =
            same_file(legacy, &paths.global_settings()) || same_file(legacy, &paths.project_settings());
        if !shadowed {
            files.push(file(legacy.clone(), Scope::Global, FileFormat::LegacyPiSettings));
        }
    }
    files.push(file(
        paths.global_recovery(),
        Scope::Global,
        FileFormat::Flat(Block::Recovery),
    ));
    files.push(file(
        paths.global_handoff(),
        Scope::Global,
        FileFormat::Flat(Block::Handoff),
    ));
    files.push(file(
        paths.global_settings(),
        Scope::Global,
        FileFormat::PiSettings,
    ));
    files.push(file(
        paths.project_handoff(),
        Scope::Project,
        FileFormat::Flat(Block::Handoff),
    ));
    files.push(file(
        paths.project_settings(),
        Scope::Project,
        FileFormat::PiSettings,
    ));
    files
}

/// A file that could not be read: what the disk said, as its one warning.
pub fn unreadable(file: ConfigFile, error: String) -> LoadedFile {
    let w = ConfigWarning::new(Origin::File(file.path.clone()), WarningKind::Unreadable { error });
    empty(file, FileState::Unreadable, vec![w])
}

/// A file that does not exist.
pub fn missing(file: ConfigFile) -> LoadedFile {
    empty(file, FileState::Missing, Vec::new())
}

fn empty(file: ConfigFile, state: FileState, warnings: Vec<ConfigWarning>) -> LoadedFile {
    LoadedFile {
        file,
        state,
        values: Layer::new(),
        tool_timeout_ms: None,
        warnings,
    }
}

/// Parses a file's text (pure; `load` without the disk).
pub fn parse(file: ConfigFile, text: &str) -> LoadedFile {
    let origin = Origin::File(file.path.clone());
    let root = match parse_object(text) {
        Ok(root) => root,
        Err(kind) => {
            let state = FileState::Malformed;
            return empty(file, state, vec![ConfigWarning::new(origin, kind)]);
        }
    };
    let mut loaded = empty(file, FileState::Read, Vec::new());
    match loaded.file.format {
        FileFormat::PiSettings => {
            for block in Block::ALL {
                read_block(&root, block, &origin, &mut loaded);
            }
            loaded.tool_timeout_ms = read_tool_timeout(&root, &origin, &mut loaded.warnings);
        }
        FileFormat::LegacyPiSettings => read_block(&root, Block::Poke, &origin, &mut loaded),
        FileFormat::Flat(block) => read_keys(&root, block, false, &origin, &mut loaded),
    }
    if loaded.file.scope == Scope::Project {
        drop_global_only(&origin, &mut loaded);
    }
    loaded
}

/// A project's files may not set what only the user's own files may (see [`schema::KeySpec::global_only`]).
fn drop_global_only(origin: &Origin, loaded: &mut LoadedFile) {
    for spec in schema::KEYS.iter().filter(|s| s.global_only()) {
        if let Some(value) = loaded.values.remove(&spec.id) {
            loaded.warnings.push(ConfigWarning::new(
                origin.clone(),
                WarningKind::InvalidValue {
                    key: spec.full_name(),
                    value: short_json(&value.to_json()),
                    expected: "a project's settings may not set it, only your global settings.json"
                        .to_string(),
                },
            ));
        }
    }
}

/// Parses JSON text whose top level must be an object. pi tolerates a byte-order mark; so do we.
pub(crate) fn parse_object(text: &str) -> Result<Map<String, Value>, WarningKind> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(WarningKind::NotAnObject {
            what: "the file".to_string(),
        }),
        Err(e) => Err(WarningKind::Malformed { error: e.to_string() }),
    }
}

fn read_block(root: &Map<String, Value>, block: Block, origin: &Origin, loaded: &mut LoadedFile) {
    match root.get(block.json_name()) {
        None => {}
        Some(Value::Object(map)) => read_keys(map, block, true, origin, loaded),
        Some(_) => loaded.warnings.push(ConfigWarning::new(
            origin.clone(),
            WarningKind::NotAnObject {
                what: format!("\"{}\"", block.json_name()),
            },
        )),
    }
}

fn read_keys(
    map: &Map<String, Value>,
    block: Block,
    warn_unknown: bool,
    origin: &Origin,
    loaded: &mut LoadedFile,
) {
    for (name, raw) in map {
        let key = format!("{}.{name}", block.json_name());
        if block == Block::Pokeshell && is_token_key(name) {
            // Never echoed back: it is a secret that should not be here.
            loaded.warnings.push(ConfigWarning::new(
                origin.clone(),
                WarningKind::InvalidValue {
                    key,
                    value: "(not shown)".to_string(),
                    expected: "no access token in a settings file, which a repository could hold: \
                               it was ignored; keep it in ~/.config/pokeshell/ntfy-token (mode 0600) \
                               or $POKESHELL_NTFY_TOKEN (docs/away.md)"
                        .to_string(),
                },
            ));
            continue;
        }
        match schema::find(block, name) {
            Some(spec) => match spec.parse_json(raw) {
                Ok(value) => {
                    loaded.values.insert(spec.id, value);
                }
                Err(expected) => loaded.warnings.push(ConfigWarning::new(
                    origin.clone(),
                    WarningKind::InvalidValue {
                        key,
                        value: short_json(raw),
                        expected,
                    },
                )),
            },
            None if warn_unknown => loaded.warnings.push(ConfigWarning::new(
                origin.clone(),
                WarningKind::UnknownKey { key },
            )),
            None => {}
        }
    }
}

/// A key that would hold the ntfy access token, as someone might try to set it.
fn is_token_key(name: &str) -> bool {
    let plain: String = name.chars().filter(|c| c.is_alphanumeric()).collect();
    let plain = plain.to_ascii_lowercase();
    plain.starts_with("ntfy") && (plain.contains("token") || plain.contains("password"))
}

/// `toolTimeoutMs`: a whole number of milliseconds; 0 means no timeout.
fn read_tool_timeout(
    root: &Map<String, Value>,
    origin: &Origin,
    warnings: &mut Vec<ConfigWarning>,
) -> Option<u64> {
    let raw = root.get(TOOL_TIMEOUT_KEY)?;
    match whole_milliseconds(raw) {
        Some(0) => None,
        Some(ms) => Some(ms),
        None => {
            warnings.push(ConfigWarning::new(
                origin.clone(),
                WarningKind::InvalidValue {
                    key: TOOL_TIMEOUT_KEY.to_string(),
                    value: short_json(raw),
                    expected: "expected a whole number of milliseconds, 0 or more".to_string(),
                },
            ));
            None
        }
    }
}

/// A whole, non-negative number of milliseconds, as JavaScript's `Number.isInteger` accepts it; a value
/// beyond `u64` (only reachable written as a float, e.g. `1e30`) means "never" and saturates.
fn whole_milliseconds(raw: &Value) -> Option<u64> {
    if let Some(ms) = raw.as_u64() {
        return Some(ms);
    }
    let f = raw.as_f64()?;
    (f.is_finite() && f.fract() == 0.0 && f >= 0.0).then_some(f as u64)
}
