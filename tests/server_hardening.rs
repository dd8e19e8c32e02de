//! Issue 21: the server takes nothing in without a bound and does nothing without saying so. These
//! run the real `pokeshell` binary (client and server) in a runtime and state directory of the
//! test's own, with a stand-in pi (a shell script: the server's side of things is under test, not
//! pi's), so they are quick and need no model.

#[path = "server_hardening/common.rs"]
mod common;
mod support;

use std::fs;

use common::{Home, saved_list};

/// Item 5: `pokeshell ls` with no server reads the saved list and changes nothing: an unreadable
/// list stays where it is, and the user is told why it will not come back.
#[test]
fn ls_without_a_server_never_moves_a_bad_list() {
    let home = Home::new();
    let list = saved_list(&home);
    fs::write(&list, "{\"version\": 1, \"sessions\": [").unwrap();
    let out = home.pokeshell(&["ls"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a valid session list"), "{stderr}");
    assert_eq!(
        fs::read_to_string(&list).unwrap(),
        "{\"version\": 1, \"sessions\": ["
    );
    assert_eq!(home.bad_lists(), Vec::<String>::new(), "ls moved the list aside");
}

/// Item 5: the server moves a list it cannot parse aside, writes so in its log, and the next
/// client hears it (once).
#[test]
fn the_server_sets_a_bad_list_aside_logs_it_and_tells_the_next_client() {
    let home = Home::new();
    let list = saved_list(&home);
    fs::write(&list, "not json").unwrap();
    let out = home.new_detached("one");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stderr.contains("were not restored") && stderr.contains("moved to"),
        "{stderr}"
    );
    let bad = home.bad_lists();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        home.log().contains(&bad[0]),
        "the log says where it went:\n{}",
        home.log()
    );
    let again = home.pokeshell(&["ls"]);
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("not restored"),
        "told twice: {again:?}"
    );
}

/// Item 5: an older pokeshell never discards a newer one's list: it names the version, and
/// neither moves it nor saves its own sessions over it.
#[test]
fn a_newer_list_is_neither_moved_nor_saved_over() {
    let home = Home::new();
    let list = saved_list(&home);
    let newer = r#"{"version": 7, "written_by": "9.9.9", "sessions": [{"future": true}]}"#;
    fs::write(&list, newer).unwrap();
    let ls = home.pokeshell(&["ls"]);
    assert!(
        String::from_utf8_lossy(&ls.stderr).contains("pokeshell 9.9.9"),
        "{ls:?}"
    );
    let out = home.new_detached("one");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("version 7") && stderr.contains("9.9.9"),
        "{stderr}"
    );
    assert!(home.log().contains("does not save"), "{}", home.log());
    home.wait_listed("one");
    assert_eq!(
        fs::read_to_string(&list).unwrap(),
        newer,
        "the newer list was touched"
    );
    assert!(home.bad_lists().is_empty());
}
