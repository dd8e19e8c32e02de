//! Where the settings files are: pi's agent dir (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`), the
//! project's `.pi/` dir, and pi-poke's legacy global file `~/.pi/settings.json` (POKE-C2).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The environment variable pi reads its agent dir from.
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigPaths {
    /// pi's agent dir: global `settings.json`, `stalled-agent-recovery.json`, `auto-handoff.json`.
    pub agent_dir: PathBuf,
    /// The project's `.pi` dir (`<cwd>/.pi`): project `settings.json` and `auto-handoff.json`.
    pub project_dir: PathBuf,
    /// `~/.pi/settings.json`, which pi-poke read as its global file; `None` without a home dir.
    pub legacy_settings: Option<PathBuf>,
}

impl ConfigPaths {
    /// The paths from the home directory and `$PI_CODING_AGENT_DIR` as pi finds them: `~` in the
    /// agent dir is expanded, a relative agent dir is taken from `cwd` (as pi does).
    pub fn resolve(home: Option<&Path>, agent_dir_env: Option<&OsStr>, cwd: &Path) -> Result<Self, String> {
        let agent_dir = match agent_dir_env.filter(|v| !v.is_empty()) {
            Some(raw) => expand_home(Path::new(raw), home, cwd)?,
            None => match home {
                Some(home) => home.join(".pi").join("agent"),
                None => {
                    return Err(format!(
                        "cannot find pi's agent dir: no home directory and {AGENT_DIR_ENV} is not set"
                    ));
                }
            },
        };
        Ok(ConfigPaths {
            agent_dir,
            project_dir: cwd.join(".pi"),
            legacy_settings: home.map(|h| h.join(".pi").join("settings.json")),
        })
    }

    pub fn global_settings(&self) -> PathBuf {
        self.agent_dir.join("settings.json")
    }

    pub fn project_settings(&self) -> PathBuf {
        self.project_dir.join("settings.json")
    }

    pub fn global_recovery(&self) -> PathBuf {
        self.agent_dir.join("stalled-agent-recovery.json")
    }

    pub fn global_handoff(&self) -> PathBuf {
        self.agent_dir.join("auto-handoff.json")
    }

    pub fn project_handoff(&self) -> PathBuf {
        self.project_dir.join("auto-handoff.json")
    }
}

fn expand_home(raw: &Path, home: Option<&Path>, cwd: &Path) -> Result<PathBuf, String> {
    let path = match raw.strip_prefix("~") {
        Ok(rest) => match home {
            Some(home) => home.join(rest),
            None => {
                return Err(format!(
                    "{AGENT_DIR_ENV} starts with ~ but there is no home directory"
                ));
            }
        },
        Err(_) => raw.to_path_buf(),
    };
    Ok(if path.is_absolute() { path } else { cwd.join(path) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poke_c2_default_agent_dir_and_legacy_path() {
        let p = ConfigPaths::resolve(Some(Path::new("/h")), None, Path::new("/w")).unwrap();
        assert_eq!(p.global_settings(), PathBuf::from("/h/.pi/agent/settings.json"));
        assert_eq!(p.legacy_settings, Some(PathBuf::from("/h/.pi/settings.json")));
        assert_eq!(p.project_settings(), PathBuf::from("/w/.pi/settings.json"));
        assert_eq!(p.project_handoff(), PathBuf::from("/w/.pi/auto-handoff.json"));
    }

    #[test]
    fn agent_dir_env_is_expanded() {
        let env = |v: &str| ConfigPaths::resolve(Some(Path::new("/h")), Some(OsStr::new(v)), Path::new("/w"));
        assert_eq!(env("~/agent").unwrap().agent_dir, PathBuf::from("/h/agent"));
        assert_eq!(env("rel").unwrap().agent_dir, PathBuf::from("/w/rel"));
        assert_eq!(
            env("/abs").unwrap().global_recovery(),
            PathBuf::from("/abs/stalled-agent-recovery.json")
        );
        assert_eq!(env("").unwrap().agent_dir, PathBuf::from("/h/.pi/agent"));
    }

    #[test]
    fn no_home_is_an_error_not_a_panic() {
        assert!(ConfigPaths::resolve(None, None, Path::new("/w")).is_err());
        let p = ConfigPaths::resolve(None, Some(OsStr::new("/a")), Path::new("/w")).unwrap();
        assert_eq!(p.legacy_settings, None);
    }
}
