//! A throw-away home, agent dir and work dir for configuration tests.
#![allow(dead_code)] // each test binary uses a different part of the fixture

use pokeshell::pi::settings_files::SettingsFiles;
use std::fs;
use std::path::{Path, PathBuf};

use pokeshell_core::config::{ConfigPaths, Settings};

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub cwd: PathBuf,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("home");
        let cwd = dir.path().join("work");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&cwd).unwrap();
        Fixture { _dir: dir, home, cwd }
    }

    pub fn paths(&self) -> ConfigPaths {
        ConfigPaths::resolve(Some(&self.home), None, &self.cwd).unwrap()
    }

    pub fn agent(&self, name: &str) -> PathBuf {
        self.home.join(".pi/agent").join(name)
    }

    pub fn legacy(&self) -> PathBuf {
        self.home.join(".pi/settings.json")
    }

    pub fn project(&self, name: &str) -> PathBuf {
        self.cwd.join(".pi").join(name)
    }

    pub fn write(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    pub fn load(&self) -> Settings {
        Settings::load(self.paths())
    }
}
