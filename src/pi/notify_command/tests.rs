use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::*;

/// Generous: the machine may be loaded; a passing run returns much sooner.
const WAIT: Duration = Duration::from_secs(20);

/// A script (run through `sh`: executing a file just written can fail with "text file busy" while
/// another test forks) that writes its arguments and the two variables to `out`, one item a line, then
/// renames the file into place so a reader never sees half of it.
fn recorder(dir: &Path) -> (PathBuf, PathBuf) {
    let out = dir.join("record");
    let script = dir.join("record.sh");
    let text = format!(
        "#!/bin/sh\n\
         {{ printf 'count=%s\\n' \"$#\"; for a in \"$@\"; do printf 'arg=[%s]\\n' \"$a\"; done;\n\
         printf 'message=[%s]\\nsession=[%s]\\n' \"$POKESHELL_MESSAGE\" \"$POKESHELL_SESSION\"; }} > '{tmp}'\n\
         mv '{tmp}' '{out}'\n",
        tmp = dir.join("record.tmp").display(),
        out = out.display(),
    );
    std::fs::write(&script, text).unwrap();
    (script, out)
}

fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never appeared", path.display());
}

#[test]
fn the_message_is_the_last_argument_and_in_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let (script, out) = recorder(dir.path());
    let command = format!("sh '{}' --title pokeshell", script.display());
    run(&command, "the agent gave up", "api").unwrap();
    let text = wait_for_file(&out);
    assert_eq!(
        text,
        "count=3\narg=[--title]\narg=[pokeshell]\narg=[the agent gave up]\n\
         message=[the agent gave up]\nsession=[api]\n"
    );
}

#[test]
fn a_hostile_message_arrives_verbatim_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (script, out) = recorder(dir.path());
    let pwned = dir.path().join("pwned");
    let p = pwned.display();
    let message =
        format!("it's \"done\"; touch '{p}'\n$(touch '{p}') `touch '{p}'` && touch '{p}' | x $HOME \\ end");
    run(&format!("sh '{}'", script.display()), &message, "s; rm -rf /").unwrap();
    let text = wait_for_file(&out);
    assert_eq!(
        text,
        format!("count=1\narg=[{message}]\nmessage=[{message}]\nsession=[s; rm -rf /]\n")
    );
    assert!(!pwned.exists(), "the message was run as shell text");
}

#[test]
fn an_empty_command_does_nothing() {
    let (tx, rx) = mpsc::channel();
    run_then("   ", "hello", "s", move |end| tx.send(end).unwrap()).unwrap();
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "nothing was started"
    );
}

#[test]
fn a_missing_command_does_not_block_or_panic() {
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    let result = run_then("/no/such/notifier", "hello", "s", move |end| {
        tx.send(end).unwrap()
    });
    assert_eq!(
        result,
        Ok(()),
        "the shell starts; the command inside it is what fails"
    );
    assert!(started.elapsed() < Duration::from_secs(2), "the caller waited");
    match rx.recv_timeout(WAIT).unwrap() {
        Ended::Exited(status) => assert_eq!(status.code(), Some(127), "{status:?}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_shell_that_cannot_start_is_an_error() {
    let err = start("/no/such/shell", TIME_LIMIT, "true", "m", "s", |_| {}).unwrap_err();
    assert!(
        err.contains("could not be started") && err.contains("/no/such/shell"),
        "{err}"
    );
}

/// Whether `pid` is a live process (a zombie is not).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses, which may itself hold spaces.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn a_hanging_command_is_killed_with_what_it_started_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // The shell itself and a child it started in the background both hang.
    let command = format!("sleep 300 & echo \"$$ $!\" > '{}'; wait; true", pids.display());
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    start(
        SHELL,
        Duration::from_millis(300),
        &command,
        "m",
        "s",
        move |end| tx.send(end).unwrap(),
    )
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "the caller waited");
    let text = wait_for_file(&pids);
    let ended = rx.recv_timeout(WAIT).unwrap();
    assert!(matches!(ended, Ended::Killed), "{ended:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "killed before the limit"
    );
    let pids: Vec<i32> = text.split_whitespace().map(|p| p.parse().unwrap()).collect();
    assert_eq!(pids.len(), 2, "{text}");
    let deadline = Instant::now() + WAIT;
    while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in pids {
        assert!(!alive(pid), "{pid} still runs");
    }
}
