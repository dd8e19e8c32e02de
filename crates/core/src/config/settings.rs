//! Resolution: for each key, the command line beats the session, which beats the project files,
//! which beat the global files, which beat the defaults. Each value remembers where it came from.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::effective::EffectiveSettings;
use super::exclusive;
use super::files::LoadedFile;
use super::paths::ConfigPaths;
use super::schema::{self, KEYS, KeyId};
use super::session;
use super::source::{Scope, Source};
use super::value::{Layer, SettingValue};
use super::warning::{ConfigWarning, Origin, WarningKind};
use super::write::SaveError;

/// A key's value and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub value: SettingValue,
    pub source: Source,
}

/// A value to set in the session layer.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub key: KeyId,
    pub value: SettingValue,
}

/// What "save as … default" did.
#[derive(Clone, Debug, PartialEq)]
pub struct SaveReport {
    pub path: PathBuf,
    pub written: Vec<KeyId>,
    /// Saved keys whose value still has to come from the session, because a file of higher
    /// priority (the project file, after a global save) sets them otherwise.
    pub still_in_session: Vec<KeyId>,
}

/// All of pokeshell's configuration: the files as last read, the session and command-line layers,
/// and the resolved values.
#[derive(Clone, Debug)]
pub struct Settings {
    paths: ConfigPaths,
    files: Vec<LoadedFile>,
    session: Layer,
    session_warnings: Vec<ConfigWarning>,
    cli: Layer,
    resolved: Vec<Resolved>,
    resolve_warnings: Vec<ConfigWarning>,
    /// False when pi declined to trust the project folder: its files are then not used.
    project_trusted: bool,
}

impl Settings {
    /// Builds settings from files already read (lowest priority first).
    pub fn from_loaded(paths: ConfigPaths, files: Vec<LoadedFile>) -> Self {
        let mut s = Settings {
            paths,
            files,
            session: Layer::new(),
            session_warnings: Vec::new(),
            cli: Layer::new(),
            resolved: Vec::new(),
            resolve_warnings: Vec::new(),
            project_trusted: true,
        };
        s.resolve();
        s
    }

    /// Takes the files as just read; session and command-line values stay.
    pub fn set_files(&mut self, files: Vec<LoadedFile>) {
        self.files = files;
        self.resolve();
    }

    pub fn paths(&self) -> &ConfigPaths {
        &self.paths
    }

    /// The files read, lowest priority first, with their state.
    pub fn files(&self) -> &[LoadedFile] {
        &self.files
    }

    /// pi loads project settings only once the folder is trusted. Call with `false` when pi declined
    /// trust: the project files then take no part (values, tool timeout, warnings). Default: used.
    pub fn set_project_trusted(&mut self, trusted: bool) {
        self.project_trusted = trusted;
        self.resolve();
    }

    pub fn project_trusted(&self) -> bool {
        self.project_trusted
    }

    /// The files whose values count: all of them, or only the global ones when the project is not trusted.
    fn used_files(&self) -> impl DoubleEndedIterator<Item = &LoadedFile> {
        self.files
            .iter()
            .filter(|f| self.project_trusted || f.file.scope == Scope::Global)
    }

    pub fn resolved(&self, key: KeyId) -> &Resolved {
        &self.resolved[key as usize]
    }

    pub fn get(&self, key: KeyId) -> &SettingValue {
        &self.resolved(key).value
    }

    pub fn source(&self, key: KeyId) -> &Source {
        &self.resolved(key).source
    }

    pub fn effective(&self) -> EffectiveSettings {
        EffectiveSettings::from_settings(self)
    }

    /// pi's `toolTimeoutMs` and the file it came from (the project file beats the global one).
    pub fn tool_timeout(&self) -> Option<(u64, &Path)> {
        self.used_files()
            .rev()
            .find_map(|f| f.tool_timeout_ms.map(|ms| (ms, f.file.path.as_path())))
    }

    /// Every warning: the files', the restored session entry's, and clashes between resolved values.
    pub fn warnings(&self) -> Vec<ConfigWarning> {
        let files = self.used_files().flat_map(|f| f.warnings.iter());
        files
            .chain(&self.session_warnings)
            .chain(&self.resolve_warnings)
            .cloned()
            .collect()
    }

    /// Sets the one-run overrides from the command line (they beat every other layer).
    pub fn set_cli_overrides(&mut self, layer: Layer) {
        self.cli = layer
            .into_iter()
            .filter(|(k, v)| schema::spec(*k).accepts(v))
            .collect();
        self.resolve();
    }

    /// The values changed in the dialog, as the session layer holds them.
    pub fn session_layer(&self) -> &Layer {
        &self.session
    }

    /// Sets `key` in the session layer together with what POKE-C6 implies (turning `autoAbort` on
    /// turns `autoPoke` off and the other way round). Returns every change made.
    pub fn change(&mut self, key: KeyId, value: SettingValue) -> Result<Vec<Change>, String> {
        let spec = schema::spec(key);
        if !spec.accepts(&value) {
            return Err(format!("{}: expected {}", spec.full_name(), spec.range_text()));
        }
        let changes = exclusive::with_implied(key, value, |k| self.get(k).clone());
        self.apply_session_changes(&changes)?;
        Ok(changes)
    }

    /// Puts values into the session layer as they are (the dialog has already applied POKE-C6).
    /// A value set here also drops a command-line override of the same key: the latest choice wins.
    pub fn apply_session_changes(&mut self, changes: &[Change]) -> Result<(), String> {
        if let Some(bad) = changes.iter().find(|c| !schema::spec(c.key).accepts(&c.value)) {
            let spec = schema::spec(bad.key);
            return Err(format!("{}: expected {}", spec.full_name(), spec.range_text()));
        }
        for c in changes {
            self.cli.remove(&c.key);
            self.session.insert(c.key, c.value.clone());
        }
        self.resolve();
        Ok(())
    }

    /// The `data` of a `pokeshell-config` session entry holding the session layer.
    pub fn session_entry_data(&self) -> Value {
        session::encode(&self.session)
    }

    /// Replaces the session layer with the last `pokeshell-config` entry among the branch's entries
    /// (root to leaf); no such entry means no session values.
    pub fn restore_session<'a>(&mut self, branch_entries: impl IntoIterator<Item = &'a Value>) {
        let (layer, warnings) = match session::last_entry_data(branch_entries) {
            Some(data) => session::decode(data),
            None => (Layer::new(), Vec::new()),
        };
        self.session = layer;
        self.session_warnings = warnings;
        self.resolve();
    }

    /// What saving the session layer into the `scope` file writes: the file and the values. The
    /// writing itself is the caller's (`config::write_values`), then [`Settings::finish_save`].
    pub fn save_plan(&self, scope: Scope) -> Result<(PathBuf, Vec<(KeyId, SettingValue)>), SaveError> {
        if self.session.is_empty() {
            return Err(SaveError::NothingToSave);
        }
        let path = match scope {
            Scope::Global => self.paths.global_settings(),
            Scope::Project => self.paths.project_settings(),
        };
        let values = self.session.iter().map(|(k, v)| (*k, v.clone())).collect();
        Ok((path, values))
    }

    /// After `values` were written to `path`, with the files as read again: session values the
    /// files now give are dropped from the session layer, so the caller should append a new session
    /// entry afterwards.
    pub fn finish_save(
        &mut self,
        path: PathBuf,
        values: Vec<(KeyId, SettingValue)>,
        files: Vec<LoadedFile>,
    ) -> SaveReport {
        self.set_files(files);
        let mut still_in_session = Vec::new();
        for (key, value) in &values {
            if self.resolve_below_session(*key).value == *value {
                self.session.remove(key);
            } else {
                still_in_session.push(*key);
            }
        }
        self.resolve();
        SaveReport {
            path,
            written: values.into_iter().map(|(k, _)| k).collect(),
            still_in_session,
        }
    }

    /// The value from files and defaults only.
    fn resolve_below_session(&self, key: KeyId) -> Resolved {
        let from_files = self.used_files().rev().find_map(|f| {
            let value = f.values.get(&key)?.clone();
            let source = match f.file.scope {
                Scope::Global => Source::Global(f.file.path.clone()),
                Scope::Project => Source::Project(f.file.path.clone()),
            };
            Some(Resolved { value, source })
        });
        from_files.unwrap_or_else(|| Resolved {
            value: schema::spec(key).default_value(),
            source: Source::Default,
        })
    }

    fn resolve(&mut self) {
        self.resolved = KEYS
            .iter()
            .map(|spec| {
                if let Some(v) = self.cli.get(&spec.id) {
                    Resolved {
                        value: v.clone(),
                        source: Source::CommandLine,
                    }
                } else if let Some(v) = self.session.get(&spec.id) {
                    Resolved {
                        value: v.clone(),
                        source: Source::Session,
                    }
                } else {
                    self.resolve_below_session(spec.id)
                }
            })
            .collect();
        self.resolve_warnings.clear();
        self.check_wakeup_clamp();
        self.check_tool_timeout();
        self.check_ntfy_url();
    }

    /// `ntfyUrl` plain `http://` to another machine: the access token is not sent there (the
    /// server's log says so at each push); said here too, where settings warnings go.
    fn check_ntfy_url(&mut self) {
        let url = self.get(KeyId::NtfyUrl).edit_text();
        let Some(host) = super::warning::plain_http_elsewhere(&url) else {
            return;
        };
        let origin = match &self.resolved[KeyId::NtfyUrl as usize].source {
            Source::Global(path) | Source::Project(path) => Origin::File(path.clone()),
            _ => Origin::Resolved,
        };
        let warning = ConfigWarning::new(origin, WarningKind::NtfyPlainHttp { host });
        self.resolve_warnings.push(warning);
    }

    fn check_wakeup_clamp(&mut self) {
        let (min_key, max_key) = (KeyId::WakeupMinSeconds, KeyId::WakeupMaxSeconds);
        let (Some(min), Some(max)) = (self.get(min_key).as_int(), self.get(max_key).as_int()) else {
            return;
        };
        if min > max {
            for key in [min_key, max_key] {
                self.resolved[key as usize] = Resolved {
                    value: schema::spec(key).default_value(),
                    source: Source::Default,
                };
            }
            let kind = WarningKind::WakeupClampInverted { min, max };
            self.resolve_warnings
                .push(ConfigWarning::new(Origin::Resolved, kind));
        }
    }

    fn check_tool_timeout(&mut self) {
        let Some((ms, path)) = self.tool_timeout() else {
            return;
        };
        let Some(threshold) = self.get(KeyId::PokeThresholdSeconds).as_int() else {
            return;
        };
        // The watch ticks once a second, so a tool is seen overdue up to 1 s after the threshold.
        let seen_overdue_by_ms = u64::try_from(threshold)
            .unwrap_or(0)
            .saturating_mul(1000)
            .saturating_add(1000);
        if ms <= seen_overdue_by_ms {
            let kind = WarningKind::ToolTimeoutRace {
                tool_timeout_ms: ms,
                threshold_seconds: threshold,
            };
            let warning = ConfigWarning::new(Origin::File(path.to_path_buf()), kind);
            self.resolve_warnings.push(warning);
        }
    }
}
