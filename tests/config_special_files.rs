//! Settings files that are not plain files (a named pipe, a device, something huge) are refused with
//! a warning naming them instead of hanging or eating memory; numbers keep their written form when
//! a file is rewritten.

#[path = "common/config_fixture.rs"]
mod config_fixture;

use pokeshell::pi::settings_files::SettingsFiles;
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use config_fixture::Fixture;
use pokeshell::pi::settings_files::read::MAX_SETTINGS_BYTES;
use pokeshell_core::config::{KeyId, SaveError, Scope, SettingValue, Settings};

/// Runs `f` on a thread and waits for it with a deadline: a read that blocks fails the test.
fn within_deadline<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("loading the settings did not finish: a read blocked")
}

fn make_fifo(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

fn load_in_thread(f: &Fixture) -> Settings {
    let paths = f.paths();
    within_deadline(move || Settings::load(paths))
}

fn warning_about(s: &Settings, path: &Path) -> String {
    let shown = path.display().to_string();
    let warnings: Vec<String> = s.warnings().iter().map(|w| w.to_string()).collect();
    warnings
        .iter()
        .find(|w| w.contains(&shown))
        .cloned()
        .unwrap_or_else(|| panic!("no warning names {shown}: {warnings:?}"))
}

#[test]
fn a_named_pipe_is_refused_without_blocking_and_the_other_files_still_apply() {
    let f = Fixture::new();
    f.write(&f.agent("settings.json"), r#"{"poke": {"thresholdSeconds": 45}}"#);
    let fifo = f.project("settings.json");
    make_fifo(&fifo);
    let s = load_in_thread(&f);
    assert!(warning_about(&s, &fifo).contains("a named pipe, not a regular file"));
    assert_eq!(s.get(KeyId::PokeThresholdSeconds), &SettingValue::Int(45));
    // --show-config prints from the same loaded settings.
    assert!(s.show_config().contains("45"));
}

#[test]
fn a_symlink_to_an_endless_device_is_refused() {
    let f = Fixture::new();
    let link = f.agent("settings.json");
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let s = load_in_thread(&f);
    assert!(warning_about(&s, &link).contains("a device"));
}

#[test]
fn a_file_over_the_size_limit_is_refused() {
    let f = Fixture::new();
    let big = f.agent("settings.json");
    let padding = " ".repeat(MAX_SETTINGS_BYTES as usize);
    f.write(
        &big,
        &format!("{{\"poke\": {{\"thresholdSeconds\": 45}}{padding}}}"),
    );
    let s = load_in_thread(&f);
    assert!(warning_about(&s, &big).contains("larger than 1024 KiB"));
    assert_eq!(s.get(KeyId::PokeThresholdSeconds), &SettingValue::Int(30));
}

#[test]
fn a_file_at_the_size_limit_is_read() {
    let f = Fixture::new();
    let path = f.agent("settings.json");
    let body = r#"{"poke": {"thresholdSeconds": 45}}"#;
    let padding = " ".repeat(MAX_SETTINGS_BYTES as usize - body.len());
    f.write(&path, &format!("{body}{padding}"));
    let s = load_in_thread(&f);
    assert_eq!(s.get(KeyId::PokeThresholdSeconds), &SettingValue::Int(45));
}

#[test]
fn saving_over_a_named_pipe_is_refused_without_blocking() {
    let f = Fixture::new();
    let fifo = f.project("settings.json");
    make_fifo(&fifo);
    let mut s = load_in_thread(&f);
    s.change(KeyId::PokeThresholdSeconds, SettingValue::Int(45))
        .unwrap();
    let result = within_deadline(move || s.save_session(Scope::Project));
    match result {
        Err(SaveError::Io { error, .. }) => assert!(error.contains("named pipe"), "{error}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn the_largest_tool_timeout_is_a_whole_number() {
    let f = Fixture::new();
    let path = f.agent("settings.json");
    f.write(&path, &format!(r#"{{"toolTimeoutMs": {}}}"#, u64::MAX));
    let s = f.load();
    assert_eq!(s.tool_timeout(), Some((u64::MAX, path.as_path())));
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    f.write(&path, r#"{"toolTimeoutMs": 1e30}"#);
    assert_eq!(f.load().tool_timeout().map(|(ms, _)| ms), Some(u64::MAX));
    f.write(&path, r#"{"toolTimeoutMs": -1}"#);
    assert!(f.load().warnings()[0].to_string().contains("whole number"));
}

#[test]
fn numbers_keep_their_written_form_when_the_file_is_rewritten() {
    let f = Fixture::new();
    let path = f.agent("settings.json");
    let original = r#"{
  "hundred": 1e2,
  "negativeZero": -0,
  "huge": 123456789012345678901234567890,
  "precise": 0.1000000000000000055511151231257827,
  "list": [1E+2, 2.50],
  "poke": {
    "thresholdSeconds": 4.5e1,
    "futureKey": 1.0
  }
}
"#;
    f.write(&path, original);
    let mut s = f.load();
    assert_eq!(s.get(KeyId::PokeThresholdSeconds), &SettingValue::Int(45));
    s.change(KeyId::PokePostCompactCooldownSeconds, SettingValue::Int(90))
        .unwrap();
    s.save_session(Scope::Global).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    let expected = r#"{
  "hundred": 1e2,
  "negativeZero": -0,
  "huge": 123456789012345678901234567890,
  "precise": 0.1000000000000000055511151231257827,
  "list": [1E+2, 2.50],
  "poke": {
    "thresholdSeconds": 4.5e1,
    "futureKey": 1.0,
    "postCompactCooldownSeconds": 90
  }
}
"#;
    assert_eq!(text, expected);
}

#[test]
fn a_changed_value_replaces_the_one_json_reads_and_keeps_its_place() {
    let f = Fixture::new();
    let path = f.agent("settings.json");
    f.write(
        &path,
        "\u{feff}{\"poke\": {\"thresholdSeconds\": 1e1, \"thresholdSeconds\": 2e1}, \"x\": 1e0}",
    );
    let mut s = f.load();
    assert_eq!(s.get(KeyId::PokeThresholdSeconds), &SettingValue::Int(20));
    s.change(KeyId::PokeThresholdSeconds, SettingValue::Int(45))
        .unwrap();
    s.save_session(Scope::Global).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "{\n  \"poke\": {\n    \"thresholdSeconds\": 1e1,\n    \"thresholdSeconds\": 45\n  },\n  \"x\": 1e0\n}"
    );
    assert_eq!(f.load().get(KeyId::PokeThresholdSeconds), &SettingValue::Int(45));
}
