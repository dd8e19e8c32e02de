//! Issue 21: the server takes nothing in without a bound and does nothing without saying so. These
//! run the real `pokeshell` binary (client and server) in a runtime and state directory of the
//! test's own, with a stand-in pi (a shell script: the server's side of things is under test, not
//! pi's), so they are quick and need no model.

#[path = "server_hardening/common.rs"]
mod common;
#[path = "server_hardening/flood.rs"]
mod flood;
mod support;

use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Home, rss_kib, save_idle_sessions, saved_list};
use flood::RawClient;

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

/// Item 7: a directory named with escape sequences (names default to it) reaches neither `new -d`'s
/// output nor `ls`'s raw: they show it written out.
#[test]
fn names_and_directories_reach_the_terminal_escaped() {
    let home = Home::new();
    let evil = home.work.join("x\x1b]0;pwned\x07\x1b[2J\u{202e}y");
    fs::create_dir(&evil).unwrap();
    let pi = home.pi.to_string_lossy().into_owned();
    let out = home
        .command(&["new", "-d", "--pi", &pi])
        .current_dir(&evil)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    for text in [&out.stdout, &out.stderr] {
        assert!(
            !text.contains(&0x1b) && !text.contains(&0x07),
            "raw controls: {out:?}"
        );
    }
    let started = String::from_utf8_lossy(&out.stdout);
    assert!(started.contains("started session 1:x-]0;pwned-"), "{started}");
    let listing = home.wait_listed("x-]0;pwned--[2J-y");
    assert!(
        !listing.contains('\x1b') && !listing.contains('\u{202e}'),
        "{listing:?}"
    );
    assert!(
        listing.contains("x\\x1b]0;pwned\\x07"),
        "the directory, written out: {listing}"
    );
}

/// Item 7: a name with a newline, or of 10,000 characters, is refused with a clear error.
#[test]
fn names_with_controls_or_too_long_are_refused() {
    let home = Home::new();
    let pi = home.pi.to_string_lossy().into_owned();
    // A session that keeps the server up between the refusals.
    assert!(home.new_detached("keeper").status.success());
    let out = home.pokeshell(&["new", "-d", "--pi", &pi, "--name", "two\nlines"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("control characters") && stderr.contains("two\\nlines"),
        "{stderr}"
    );
    let long = "n".repeat(10_000);
    let out = home.pokeshell(&["new", "-d", "--pi", &pi, "--name", &long]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("at most 64 characters"), "{stderr}");
    let ls = home.pokeshell(&["ls"]);
    assert!(!String::from_utf8_lossy(&ls.stdout).contains("two"), "{ls:?}");
}

/// A saved list of one session, as a server writes it.
fn write_list(home: &Home, session: serde_json::Value) {
    let list = serde_json::json!({"version": 1, "sessions": [session]});
    fs::write(saved_list(home), serde_json::to_vec(&list).unwrap()).unwrap();
}

/// Item 4: a saved session whose directory is gone is not relaunched in `$HOME` (or anywhere):
/// the next client is told, with the way to go on by hand, and `ls` does not list it.
#[test]
fn a_saved_session_whose_directory_is_gone_is_said_not_moved() {
    let home = Home::new();
    let conversation = home.work.join("conversation.jsonl");
    fs::write(&conversation, "{}\n").unwrap();
    let gone = home.work.join("gone-project");
    write_list(
        &home,
        serde_json::json!({
            "number": 1, "name": "gone", "dir": gone.to_string_lossy(),
            "args": ["--pi", home.pi.to_string_lossy(), "--"],
            "session_file": conversation.to_string_lossy(), "mid_run": true
        }),
    );
    let out = home.new_detached("here");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("session 1:gone was not brought back") && stderr.contains("gone-project"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("pi --session {}", conversation.display())),
        "{stderr}"
    );
    let listing = home.wait_listed("here");
    assert!(!listing.contains(":gone"), "started elsewhere: {listing}");
    assert!(home.log().contains("was not brought back"), "{}", home.log());
}

/// Item 8: a saved session whose pi session file is gone is relaunched as a fresh conversation,
/// and that is said (the resume it no longer gets is checked with the real pi in
/// e2e_server_surprises).
#[test]
fn a_saved_session_whose_session_file_is_gone_is_said() {
    let home = Home::new();
    let missing = home.work.join("deleted.jsonl");
    write_list(
        &home,
        serde_json::json!({
            "number": 1, "name": "fresh", "dir": home.work.to_string_lossy(),
            "args": ["--pi", home.pi.to_string_lossy(), "--"],
            "session_file": missing.to_string_lossy(), "mid_run": true
        }),
    );
    let out = home.pokeshell(&["new", "-d", "--name", "other", "--pi", &home.pi.to_string_lossy()]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("session 1:fresh") && stderr.contains("is gone") && stderr.contains("not resumed"),
        "{stderr}"
    );
    home.wait_listed("fresh");
}

/// Item 9: against a stopped server (SIGSTOP), `ls`, `kill` and `new -d` each end within their
/// deadline with a message that says the server is stopped and how to let it go on (before, each
/// hung for ever).
#[test]
fn client_calls_to_a_stopped_server_end_in_time_and_say_why() {
    let home = Home::new();
    assert!(home.new_detached("one").status.success());
    let pid = home.server.server_pid().expect("a server runs");
    // SAFETY: signals to the server of this test's own runtime dir; continued below.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let pi = home.pi.to_string_lossy().into_owned();
    let calls: [&[&str]; 3] = [&["ls"], &["kill", "one"], &["new", "-d", "--pi", &pi]];
    let mut outs = Vec::new();
    for args in calls {
        let started = std::time::Instant::now();
        let mut child = home
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = started + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() >= deadline {
                let _ = child.kill();
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGCONT) };
                panic!("`pokeshell {}` still waits after 30 s", args.join(" "));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        outs.push((args.join(" "), child.wait_with_output().unwrap()));
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    for (args, out) in outs {
        assert_eq!(out.status.code(), Some(1), "`{args}`: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("(pid {pid}) is stopped"))
                && stderr.contains(&format!("kill -CONT {pid}")),
            "`{args}`: {stderr}"
        );
    }
    home.wait_listed("one");
}

/// Item 2: a client that writes far more input than its session's program reads (here a program
/// that reads nothing, on a raw terminal) is held back: the server stops reading its socket after
/// about a megabyte, stays small, answers `ls` meanwhile, and drops the client with a message once
/// it has been held for a minute (here 5 s: the server is started with the limit lowered). Before, the server took all it was sent (hundreds of MB, in
/// memory) and `ls` waited behind it.
#[test]
fn input_for_a_program_that_reads_nothing_is_held_back_then_dropped() {
    let home = Home::new();
    home.deaf_session_with("deaf", &[("POKESHELL_TEST_INPUT_HELD_SECS", "5")]);
    let pid = home.server.server_pid().expect("a server");
    let (before, peak_before) = rss_kib(pid);
    let mut client = RawClient::attach(&home, "deaf");
    let offered = 256 << 20;
    let took = client.flood(offered, Duration::from_secs(3));
    let (after, peak) = rss_kib(pid);
    println!(
        "offered {} MiB, the server took {} KiB; its memory: {before} KiB before (peak \
         {peak_before}), {after} KiB after, {peak} KiB at its peak",
        offered >> 20,
        took >> 10
    );
    assert!(
        took < 32 << 20,
        "the server took {} MiB of input nobody reads",
        took >> 20
    );
    // A bound, not a measure of speed: without back-pressure the server holds all it took.
    assert!(
        after.saturating_sub(before) < 128 << 10,
        "the server grew from {before} KiB to {after} KiB"
    );
    let listing = home.wait_listed("deaf");
    assert!(listing.contains(":deaf"), "{listing}");
    // Held past the limit: dropped, and told why.
    let deadline = Instant::now() + Duration::from_secs(5 + 30);
    while client.errors().is_empty() {
        assert!(Instant::now() < deadline, "the held client was never dropped");
        std::thread::sleep(Duration::from_millis(200));
    }
    let errors = client.errors();
    assert!(
        errors[0].contains("dropped this client") && errors[0].contains("not read its input"),
        "{errors:?}"
    );
    // The session lives on for the others.
    home.wait_listed("deaf");
}

/// Item 3: a server runs at most 64 sessions. Saved sessions past the bound are not brought back
/// and are named (they stay saved); a new session past it is refused with a clear message; the
/// others come back in the background while the server answers.
#[test]
fn sessions_past_the_bound_are_said_and_refused() {
    let home = Home::new();
    save_idle_sessions(&home, 66);
    let out = home.new_detached("one-more");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("2 saved sessions were not brought back")
            && stderr.contains("at most 64")
            && stderr.contains("65:s65")
            && stderr.contains("66:s66"),
        "{stderr}"
    );
    assert!(stderr.contains("already has 64 sessions"), "{stderr}");
    let listing = home.wait_listed("s64");
    assert_eq!(
        listing.lines().count(),
        65,
        "a header and 64 sessions:\n{listing}"
    );
    assert!(home.log().contains("not brought back"), "{}", home.log());
    // The two left out stay saved for a later server.
    let saved = fs::read_to_string(saved_list(&home)).unwrap();
    assert!(saved.contains("\"s66\"") && saved.contains("\"s65\""), "{saved}");
}

/// The figures for issue 21's closing note: what an idle session costs the server (threads, open
/// files, resident memory), from the server with one and with eleven idle sessions. Run by hand:
/// `cargo test --test server_hardening measure_ -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, run by hand"]
fn measure_idle_session_cost() {
    let home = Home::new();
    assert!(home.new_detached("s0").status.success());
    home.wait_listed("s0");
    let pid = home.server.server_pid().expect("a server");
    let sample = || {
        // Idle: let start-up threads (the blocking pools') time out first.
        std::thread::sleep(Duration::from_secs(15));
        let count = |what: &str| fs::read_dir(format!("/proc/{pid}/{what}")).unwrap().count();
        (count("task"), count("fd"), rss_kib(pid).0)
    };
    let one = sample();
    for n in 1..=10 {
        assert!(home.new_detached(&format!("s{n}")).status.success());
    }
    home.wait_listed("s10");
    let eleven = sample();
    println!(
        "one session (threads, fds, KiB): {one:?}; eleven: {eleven:?}; per idle session: {:.1} threads, \
         {:.1} fds, {:.0} KiB",
        (eleven.0 - one.0) as f64 / 10.0,
        (eleven.1 - one.1) as f64 / 10.0,
        (eleven.2 as f64 - one.2 as f64) / 10.0
    );
}

/// The figures for issue 21's closing note: the server's threads at their peak while 64 saved
/// sessions come back, and once they are idle. Run by hand (see `measure_idle_session_cost`).
#[test]
#[ignore = "a measurement, run by hand"]
fn measure_restore_peak() {
    let home = Home::new();
    save_idle_sessions(&home, 64);
    let started = Instant::now();
    let out = home.pokeshell(&["ls"]);
    assert!(out.status.success(), "{out:?}");
    let mut server = home.command(&["new", "-d", "--name", "x", "--pi", &home.pi.to_string_lossy()]);
    let _ = server.output();
    let pid = home.server.server_pid().expect("a server");
    let threads = || fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count());
    let mut peak = 0;
    while started.elapsed() < Duration::from_secs(20) {
        peak = peak.max(threads());
        std::thread::sleep(Duration::from_millis(5));
    }
    println!(
        "64 saved sessions: peak {peak} threads while they came back; {} once idle, {} KiB",
        threads(),
        rss_kib(pid).0
    );
}
