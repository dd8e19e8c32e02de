//! pi's settings files on disk, for the pure settings of `pokeshell_core::config`: which files exist
//! and what they say (read safely, `read`), and "save as … default" written back (`write`).
//! `SettingsFiles` gives `Settings` the verbs that touch the disk.

pub mod read;
pub mod write;

use std::path::{Path, PathBuf};

use pokeshell_core::config::files::{self, ConfigFile, LoadedFile};
use pokeshell_core::config::write::SaveError;
use pokeshell_core::config::{ConfigPaths, SaveReport, Scope, Settings};

pub use self::write::write_values;

/// The paths from this process's home directory and environment, the way pi finds them.
pub fn paths_from_env(cwd: &Path) -> Result<ConfigPaths, String> {
    ConfigPaths::resolve(
        std::env::home_dir().as_deref(),
        std::env::var_os(pokeshell_core::config::paths::AGENT_DIR_ENV).as_deref(),
        cwd,
    )
}

/// Whether two paths name one file (the legacy global file may be pi's own).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Reads and parses one file.
pub fn load(file: ConfigFile) -> LoadedFile {
    match read::read_settings_text(&file.path) {
        Ok(Some(text)) => files::parse(file, &text),
        Ok(None) => files::missing(file),
        Err(e) => files::unreadable(file, e.to_string()),
    }
}

/// Reads every settings file under `paths`, lowest priority first.
pub fn read_files(paths: &ConfigPaths) -> Vec<LoadedFile> {
    files::config_files(paths, same_file)
        .into_iter()
        .map(load)
        .collect()
}

/// What `Settings` does with the disk.
pub trait SettingsFiles: Sized {
    /// Reads every settings file under `paths`.
    fn load(paths: ConfigPaths) -> Self;
    /// Reads the files again (at session_start and session_tree); session and command-line values
    /// stay.
    fn reload_files(&mut self);
    /// Writes the session layer into the global or project `settings.json`, then reads the files
    /// again (both on this thread; the event loop does the same in two steps, off its thread).
    fn save_session(&mut self, scope: Scope) -> Result<SaveReport, SaveError>;
}

impl SettingsFiles for Settings {
    fn load(paths: ConfigPaths) -> Self {
        let files = read_files(&paths);
        Settings::from_loaded(paths, files)
    }

    fn reload_files(&mut self) {
        let files = read_files(self.paths());
        self.set_files(files);
    }

    fn save_session(&mut self, scope: Scope) -> Result<SaveReport, SaveError> {
        let (path, values): (PathBuf, _) = self.save_plan(scope)?;
        write_values(&path, &values)?;
        let files = read_files(self.paths());
        Ok(self.finish_save(path, values, files))
    }
}
