//! "Save as default": atomic, keeps what pokeshell does not own, never touches a malformed file.

#[path = "common/config_fixture.rs"]
mod config_fixture;

use pokeshell::pi::settings_files::SettingsFiles;
use std::fs;
use std::path::Path;

use config_fixture::Fixture;
use pokeshell_core::config::{KeyId, SaveError, Scope, SettingValue, Source};
use serde_json::{Value, json};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp") || n.ends_with(".lock"))
        .collect()
}

#[test]
fn save_project_creates_the_file_and_the_value_now_comes_from_it() {
    let f = Fixture::new();
    let mut s = f.load();
    s.change(KeyId::PokeThresholdSeconds, SettingValue::Int(45))
        .unwrap();
    s.change(KeyId::HandoffPercent, SettingValue::Number(72.5))
        .unwrap();
    let report = s.save_session(Scope::Project).unwrap();
    assert_eq!(report.path, f.project("settings.json"));
    assert_eq!(
        report.written,
        vec![KeyId::PokeThresholdSeconds, KeyId::HandoffPercent]
    );
    assert!(report.still_in_session.is_empty());
    assert_eq!(
        read_json(&f.project("settings.json")),
        json!({"poke": {"thresholdSeconds": 45}, "handoff": {"percent": 72.5}})
    );
    assert_eq!(
        s.source(KeyId::PokeThresholdSeconds),
        &Source::Project(f.project("settings.json"))
    );
    assert!(
        s.session_layer().is_empty(),
        "saved values leave the session layer"
    );
    assert!(leftovers(&f.cwd.join(".pi")).is_empty());
}

#[test]
fn save_global_keeps_unknown_keys_other_settings_and_their_order() {
    let f = Fixture::new();
    let original = r#"{
  "theme": "dark",
  "poke": {"enabled": false, "futureKey": [1, 2]},
  "lastChangelogVersion": "1.6.0",
  "zeta": {"nested": {"deep": true}}
}"#;
    f.write(&f.agent("settings.json"), original);
    let mut s = f.load();
    s.change(KeyId::PokeThresholdSeconds, SettingValue::Int(45))
        .unwrap();
    s.change(KeyId::Bell, SettingValue::Bool(false)).unwrap();
    s.save_session(Scope::Global).unwrap();

    let text = fs::read_to_string(f.agent("settings.json")).unwrap();
    let written: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        written,
        json!({
            "theme": "dark",
            "poke": {"enabled": false, "futureKey": [1, 2], "thresholdSeconds": 45},
            "lastChangelogVersion": "1.6.0",
            "zeta": {"nested": {"deep": true}},
            "pokeshell": {"bell": false}
        })
    );
    let order: Vec<_> = written.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        order,
        ["theme", "poke", "lastChangelogVersion", "zeta", "pokeshell"]
    );
    assert!(!text.ends_with('\n'), "the original had no final newline");
    assert!(leftovers(&f.home.join(".pi/agent")).is_empty());
}

#[test]
fn a_malformed_file_is_never_rewritten() {
    let f = Fixture::new();
    let garbage = "{\"poke\": {\"enabled\": tru";
    f.write(&f.agent("settings.json"), garbage);
    let mut s = f.load();
    s.change(KeyId::Bell, SettingValue::Bool(false)).unwrap();
    let err = s.save_session(Scope::Global).unwrap_err();
    assert!(matches!(err, SaveError::Malformed { .. }), "{err:?}");
    assert!(err.to_string().contains("not valid JSON"), "{err}");
    assert_eq!(fs::read_to_string(f.agent("settings.json")).unwrap(), garbage);
    assert_eq!(
        s.source(KeyId::Bell),
        &Source::Session,
        "the change stays for the session"
    );
    assert!(leftovers(&f.home.join(".pi/agent")).is_empty());
}

#[test]
fn a_block_that_is_not_an_object_is_not_overwritten() {
    let f = Fixture::new();
    let text = r#"{"pokeshell": "mine", "theme": "x"}"#;
    f.write(&f.project("settings.json"), text);
    let mut s = f.load();
    s.change(KeyId::Bell, SettingValue::Bool(false)).unwrap();
    let err = s.save_session(Scope::Project).unwrap_err();
    assert_eq!(
        err,
        SaveError::NotAnObject {
            path: f.project("settings.json"),
            what: "\"pokeshell\"".to_string()
        }
    );
    assert_eq!(fs::read_to_string(f.project("settings.json")).unwrap(), text);
}

#[test]
fn nothing_changed_nothing_saved() {
    let f = Fixture::new();
    let mut s = f.load();
    assert_eq!(s.save_session(Scope::Global), Err(SaveError::NothingToSave));
    assert!(!f.agent("settings.json").exists());
}

#[test]
fn global_save_under_a_project_override_keeps_the_session_value() {
    let f = Fixture::new();
    f.write(
        &f.project("settings.json"),
        r#"{"poke": {"thresholdSeconds": 50}}"#,
    );
    let mut s = f.load();
    s.change(KeyId::PokeThresholdSeconds, SettingValue::Int(45))
        .unwrap();
    let report = s.save_session(Scope::Global).unwrap();
    assert_eq!(report.still_in_session, vec![KeyId::PokeThresholdSeconds]);
    assert_eq!(s.get(KeyId::PokeThresholdSeconds), &SettingValue::Int(45));
    assert_eq!(s.source(KeyId::PokeThresholdSeconds), &Source::Session);
    assert_eq!(
        read_json(&f.agent("settings.json")),
        json!({"poke": {"thresholdSeconds": 45}})
    );
}

#[test]
fn the_file_is_replaced_by_rename_not_rewritten_in_place() {
    let f = Fixture::new();
    f.write(&f.agent("settings.json"), "{\"theme\": \"dark\"}\n");
    let old = f.home.join("old-link.json");
    fs::hard_link(f.agent("settings.json"), &old).unwrap();
    let mut s = f.load();
    s.change(KeyId::Bell, SettingValue::Bool(false)).unwrap();
    s.save_session(Scope::Global).unwrap();
    assert_eq!(
        fs::read_to_string(&old).unwrap(),
        "{\"theme\": \"dark\"}\n",
        "old inode untouched"
    );
    let new = fs::read_to_string(f.agent("settings.json")).unwrap();
    assert!(new.ends_with("}\n"));
    assert_eq!(
        read_json(&f.agent("settings.json"))["pokeshell"]["bell"],
        json!(false)
    );
}

#[cfg(unix)]
#[test]
fn permissions_and_symlinks_survive_a_save() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let real = f.home.join("dotfiles/pi-settings.json");
    f.write(&real, "{}");
    fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
    fs::create_dir_all(f.home.join(".pi/agent")).unwrap();
    std::os::unix::fs::symlink(&real, f.agent("settings.json")).unwrap();
    let mut s = f.load();
    s.change(KeyId::Bell, SettingValue::Bool(false)).unwrap();
    s.save_session(Scope::Global).unwrap();
    assert!(
        fs::symlink_metadata(f.agent("settings.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read_json(&real), json!({"pokeshell": {"bell": false}}));
    assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn a_lock_held_by_pi_blocks_the_save_and_leaves_the_file_alone() {
    let f = Fixture::new();
    f.write(&f.agent("settings.json"), "{}");
    let lock = f.home.join(".pi/agent/settings.json.lock");
    fs::create_dir(&lock).unwrap();
    let mut s = f.load();
    s.change(KeyId::Bell, SettingValue::Bool(false)).unwrap();
    let err = s.save_session(Scope::Global).unwrap_err();
    assert!(matches!(err, SaveError::Locked { .. }), "{err:?}");
    assert_eq!(fs::read_to_string(f.agent("settings.json")).unwrap(), "{}");
    assert!(lock.exists(), "someone else's lock is not removed");
}

#[test]
fn a_stale_lock_is_taken_over() {
    let f = Fixture::new();
    f.write(&f.agent("settings.json"), "{}");
    let lock = f.home.join(".pi/agent/settings.json.lock");
    fs::create_dir(&lock).unwrap();
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    fs::File::open(&lock).unwrap().set_modified(an_hour_ago).unwrap();
    let mut s = f.load();
    s.change(KeyId::Bell, SettingValue::Bool(false)).unwrap();
    s.save_session(Scope::Global).unwrap();
    assert_eq!(
        read_json(&f.agent("settings.json")),
        json!({"pokeshell": {"bell": false}})
    );
    assert!(!lock.exists());
}
