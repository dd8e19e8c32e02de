//! The demo's throw-away world: one private directory (inside the demo's own, see `launch.rs`)
//! holding pi's agent dir (models.json pointing at the scripted model, settings.json), a home, a
//! work dir without `.pi/`, a session dir and pokeshell's ledger. Nothing of the user's own pi setup
//! is read; everything goes when the demo's session ends.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::pi_files::{AgentFiles, DEMO};
use pokeshell_core::config::ConfigPaths;

/// A pi extension loaded for the demo: it refuses `rm -rf` and ends the tool batch, which is how a
/// run in pi 1.6.0 comes to end on a failed tool call (docs/supervision.md, the loop guard).
pub const GUARD_EXTENSION: &str = include_str!("../../assets/demo/guard.ts");

pub struct DemoEnv {
    root: PathBuf,
    pub agent_dir: PathBuf,
    pub home_dir: PathBuf,
    pub work_dir: PathBuf,
    pub session_dir: PathBuf,
    /// Where the intervention ledger goes during the demo.
    pub state_dir: PathBuf,
    /// The guard extension's file.
    pub guard: PathBuf,
}

/// pokeshell's own demo-friendly timers and layout, over the common settings of [`AgentFiles`].
fn demo_settings() -> Value {
    json!({
        "pokeshell": {
            "injectionCooldownSeconds": 1,
            "wakeupMinSeconds": 1,
            "sidePane": "shown",
            "sidePaneWidth": 42
        }
    })
}

impl DemoEnv {
    /// Creates the directories and pi's two files under a new private directory in `parent`.
    /// `settings` (a tour's top-level settings) is merged over the demo's own.
    pub fn create(parent: &Path, base_url: &str, settings: &Map<String, Value>) -> io::Result<DemoEnv> {
        let root = fresh_private_dir(parent)?;
        let env = DemoEnv {
            agent_dir: root.join("agent"),
            home_dir: root.join("home"),
            work_dir: root.join("work"),
            session_dir: root.join("sessions"),
            state_dir: root.join("state"),
            guard: root.join("demo-guard.ts"),
            root,
        };
        for dir in [
            &env.agent_dir,
            &env.home_dir,
            &env.work_dir,
            &env.session_dir,
            &env.state_dir,
        ] {
            std::fs::create_dir(dir).map_err(|e| with_path(e, dir))?;
        }
        let mut files = AgentFiles::new(&DEMO, base_url);
        files.merge_settings(&demo_settings());
        files.merge_settings(&Value::Object(settings.clone()));
        files.write(&env.agent_dir)?;
        std::fs::write(&env.guard, GUARD_EXTENSION).map_err(|e| with_path(e, &env.guard))?;
        Ok(env)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// pokeshell's settings files for the demo: the demo's agent dir and work dir, never `~/.pi`.
    pub fn config_paths(&self) -> ConfigPaths {
        ConfigPaths {
            agent_dir: self.agent_dir.clone(),
            project_dir: self.work_dir.join(".pi"),
            legacy_settings: None,
        }
    }

    /// The variables pi runs with, on top of pokeshell's own environment.
    pub fn pi_env(&self) -> Vec<(String, String)> {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        vec![
            ("HOME".into(), path(&self.home_dir)),
            ("PI_CODING_AGENT_DIR".into(), path(&self.agent_dir)),
            ("PI_OFFLINE".into(), "1".into()),
            ("PI_SKIP_VERSION_CHECK".into(), "1".into()),
            ("PI_TELEMETRY".into(), "0".into()),
        ]
    }

    /// pi's arguments: its sessions go into the demo's session dir, and it loads the guard.
    pub fn pi_args(&self) -> Vec<String> {
        vec![
            "--session-dir".into(),
            self.session_dir.to_string_lossy().into_owned(),
            "-e".into(),
            self.guard.to_string_lossy().into_owned(),
        ]
    }
}

impl Drop for DemoEnv {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// `<parent>/pokeshell-demo-<pid>-<n>`, created 0700 and new: an existing path is never reused.
pub fn fresh_private_dir(parent: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for attempt in 0..64u32 {
        let dir = parent.join(format!(
            "pokeshell-demo-{}-{:x}",
            std::process::id(),
            nanos.wrapping_add(attempt.wrapping_mul(7919))
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(with_path(e, &dir)),
        }
    }
    Err(io::Error::other(format!(
        "could not create a fresh directory in {}",
        parent.display()
    )))
}

fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::settings_files::SettingsFiles;
    use pokeshell_core::config::{KeyId, SettingValue, Settings, Source};

    #[test]
    fn the_environment_points_pi_and_pokeshell_at_its_own_files_and_is_removed_on_drop() {
        let mut tour_settings = Map::new();
        tour_settings.insert("poke".into(), json!({"thresholdSeconds": 3}));
        tour_settings.insert("retry".into(), json!({"maxRetries": 0}));
        let parent = tempfile::tempdir().unwrap();
        let env = DemoEnv::create(parent.path(), "http://127.0.0.1:9/v1", &tour_settings).unwrap();
        let root = env.root().to_path_buf();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&root).unwrap().permissions().mode() & 0o777,
            0o700,
            "private to the user"
        );
        assert!(!env.work_dir.join(".pi").exists(), "no project settings to trust");

        let models: Value =
            serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap())
                .unwrap();
        assert_eq!(models["providers"][DEMO.id]["baseUrl"], "http://127.0.0.1:9/v1");
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("settings.json")).unwrap())
                .unwrap();
        assert_eq!(
            settings["retry"],
            json!({"enabled": true, "maxRetries": 0, "baseDelayMs": 200})
        );
        assert_eq!(settings["fullscreenExitOutput"], "resume-hint");
        assert_eq!(settings["pokeshell"]["wakeupMinSeconds"], 1);

        let loaded = Settings::load(env.config_paths());
        assert_eq!(loaded.get(KeyId::PokeThresholdSeconds), &SettingValue::Int(3));
        assert_eq!(
            loaded.source(KeyId::InjectionCooldownSeconds),
            &Source::Global(env.agent_dir.join("settings.json"))
        );
        assert!(loaded.warnings().is_empty(), "{:?}", loaded.warnings());

        let args = env.pi_args();
        assert_eq!(
            args[2..],
            ["-e".to_string(), env.guard.to_string_lossy().into_owned()]
        );
        assert!(
            std::fs::read_to_string(&env.guard)
                .unwrap()
                .contains("terminate: true")
        );

        let vars = env.pi_env();
        assert!(vars.contains(&("PI_OFFLINE".into(), "1".into())));
        assert!(
            vars.iter()
                .any(|(k, v)| k == "PI_CODING_AGENT_DIR" && Path::new(v) == env.agent_dir)
        );
        assert!(
            vars.iter()
                .any(|(k, v)| k == "HOME" && Path::new(v) == env.home_dir)
        );
        drop(env);
        assert!(!root.exists(), "the demo leaves nothing behind");
    }
}
