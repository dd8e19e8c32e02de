use std::os::unix::fs::PermissionsExt;

use super::*;
use pokeshell_core::spec::SessionSpec;

fn sample() -> Vec<SavedSession> {
    vec![
        SavedSession {
            spec: SessionSpec {
                number: 1,
                name: "api".into(),
                dir: "/home/u/api".into(),
                argv: vec!["--model".into(), "x".into()],
                ..SessionSpec::default()
            },
            session_file: Some("/home/u/.pi/agent/sessions/a.jsonl".into()),
            mid_run: true,
        },
        SavedSession {
            spec: SessionSpec {
                number: 3,
                name: "logs \"quoted\" ünï".into(),
                dir: "/tmp".into(),
                argv: Vec::new(),
                ..SessionSpec::default()
            },
            session_file: None,
            mid_run: false,
        },
    ]
}

#[test]
fn a_saved_list_loads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/pokeshell/sessions.json");
    save(&path, &sample()).unwrap();
    assert_eq!(read(&path), Ok(sample()));
    let json: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["version"], 1);
    save(&path, &[]).unwrap();
    assert_eq!(read(&path), Ok(Vec::new()));
}

#[test]
fn a_missing_file_is_an_empty_list() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(read(&dir.path().join("sessions.json")), Ok(Vec::new()));
}

#[test]
fn unknown_fields_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    // `command` was written by earlier versions and is read no more.
    let text = r#"{"version": 1, "later": true, "sessions": [
        {"number": 2, "name": "n", "dir": "/d", "args": ["--", "-c"], "command": null,
         "mid_run": false, "colour": "red"}]}"#;
    fs::write(&path, text).unwrap();
    let list = read(&path).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(
        (list[0].spec.number, list[0].spec.argv.clone()),
        (2, vec!["--".to_string(), "-c".to_string()])
    );
    assert!(
        list[0].spec.env.is_empty() && !list[0].spec.resume,
        "a start's own, never saved"
    );
}

fn bad_files(dir: &Path) -> Vec<PathBuf> {
    let mut bad: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("sessions.json.bad-"))
        .collect();
    bad.sort();
    bad
}

/// Issue 21, item 5: reading a bad list (as `pokeshell ls` does with no server) moves nothing; only
/// the server's settle moves it aside, and says where.
#[test]
fn a_malformed_file_is_left_by_a_read_and_moved_aside_by_settle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    fs::write(&path, "{\"version\": 1, \"sessions\": [").unwrap();
    let problem = read(&path).unwrap_err();
    assert!(matches!(problem, Problem::Invalid(_)), "{problem:?}");
    assert!(path.exists(), "a read moved the user's file");
    assert!(bad_files(dir.path()).is_empty());
    let settled = settle(&path, &problem);
    assert!(settled.may_save);
    let bad = bad_files(dir.path());
    assert_eq!(bad.len(), 1, "{bad:?}");
    let err = settled.message;
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("not a valid session list"), "{err}");
    assert!(err.contains(&bad[0].display().to_string()), "{err}");
    assert_eq!(
        fs::read_to_string(&bad[0]).unwrap(),
        "{\"version\": 1, \"sessions\": ["
    );
    assert!(!path.exists());
    assert_eq!(read(&path), Ok(Vec::new()));
    save(&path, &sample()).unwrap();
    assert_eq!(read(&path), Ok(sample()));
}

/// Issue 21, item 5: an older pokeshell never discards a newer one's list: it says which version
/// wrote it and leaves it where and as it is.
#[test]
fn a_newer_list_is_left_alone_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    let text = r#"{"version": 9, "written_by": "7.1.0", "sessions": [{"later": "shape"}]}"#;
    fs::write(&path, text).unwrap();
    let problem = read(&path).unwrap_err();
    assert_eq!(
        problem,
        Problem::Newer {
            version: 9,
            written_by: Some("7.1.0".into())
        }
    );
    let settled = settle(&path, &problem);
    assert!(!settled.may_save, "a newer list must not be saved over");
    assert!(settled.message.contains("pokeshell 7.1.0"), "{}", settled.message);
    assert!(settled.message.contains("version 9"), "{}", settled.message);
    assert!(bad_files(dir.path()).is_empty());
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn a_second_bad_file_does_not_replace_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    fs::write(&path, "first").unwrap();
    settle(&path, &read(&path).unwrap_err());
    fs::write(&path, r#"{"version": 0, "sessions": []}"#).unwrap();
    let problem = read(&path).unwrap_err();
    assert!(problem.to_string().contains("version 0"), "{problem}");
    settle(&path, &problem);
    let contents: Vec<String> = bad_files(dir.path())
        .iter()
        .map(|p| fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(contents.len(), 2);
    assert!(contents.contains(&"first".to_string()));
}

#[test]
fn a_failed_save_leaves_the_old_file_whole_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    save(&path, &sample()).unwrap();
    let before = fs::read(&path).unwrap();
    // A directory where the temporary file goes makes the write fail even for root, who ignores
    // a read-only directory.
    fs::create_dir(dir.path().join("sessions.json.tmp")).unwrap();
    let err = save(&path, &sample()[..1]).unwrap_err();
    assert!(err.contains("cannot save the session list"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), before);
    assert!(dir.path().join("sessions.json.tmp").is_dir());
    assert_eq!(read(&path), Ok(sample()));
}

#[test]
fn a_read_only_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    save(&path, &sample()).unwrap();
    let before = fs::read(&path).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o500)).unwrap();
    let result = save(&path, &[]);
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
    // Root writes through a read-only directory; the save must then have fully succeeded.
    match result {
        Err(err) => {
            assert!(err.contains("cannot save"), "{err}");
            assert_eq!(fs::read(&path).unwrap(), before);
        }
        Ok(()) => assert_eq!(read(&path), Ok(Vec::new())),
    }
    assert!(!dir.path().join("sessions.json.tmp").exists());
}

#[test]
fn the_file_and_its_new_directory_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new/sessions.json");
    // A stale temporary file with a loose mode must not pass its mode on.
    fs::create_dir(dir.path().join("new")).unwrap();
    fs::set_permissions(dir.path().join("new"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(dir.path().join("new/sessions.json.tmp"), "old").unwrap();
    fs::set_permissions(
        dir.path().join("new/sessions.json.tmp"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    save(&path, &sample()).unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let fresh = dir.path().join("a/b/sessions.json");
    save(&fresh, &sample()).unwrap();
    let dir_mode = fs::metadata(dir.path().join("a/b")).unwrap().permissions().mode() & 0o777;
    assert_eq!(dir_mode, 0o700);
    assert_eq!(fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn the_default_path_is_in_the_state_dir() {
    let path = default_path();
    let dir = crate::pi::ledger::default_dir();
    assert_eq!(path, dir.map(|d| d.join("sessions.json")));
}
