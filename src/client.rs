//! The terminal's side of pokeshell: a client of the per-user server ([`crate::server`]). It starts
//! the server when none runs, opens or attaches to a session and shows it, and carries out
//! `pokeshell ls`, `kill` and `new -d`.

pub mod attach;
pub mod completions;
pub mod connect;
pub mod deadline;
pub mod diff;
pub mod drive;
pub mod drive_cli;
pub mod mcp;
mod pager;
pub mod remote;
pub mod remove_worktree;
pub mod skill;
mod upward;
pub mod web;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use deadline::OPEN_LIMIT;

use pokeshell_core::safe_text::escape;
use pokeshell_core::wire::{self, Down, Listing, Target, Up};

/// What the user sees when an attachment ends, and the exit code.
pub fn finish(ending: attach::Ending, label: &str) -> i32 {
    match ending {
        attach::Ending::Exited { code, farewell } => {
            if !farewell.is_empty() {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&farewell);
                let _ = out.flush();
            }
            if let Some(note) = exit_note(label, code) {
                eprintln!("{note}");
            }
            code
        }
        attach::Ending::Detached(reason) => {
            eprintln!(
                "[pokeshell: {}; `pokeshell attach` to come back]",
                escape(&reason)
            );
            0
        }
        attach::Ending::Signal(sig) => 128 + sig,
        attach::Ending::Hop { dest, name } => crate::client::remote::hop(&dest, &name),
        attach::Ending::Failed(message) => {
            // A server that went away may have said why in its log.
            let log = connect::log_path()
                .filter(|_| message == attach::GONE)
                .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
                .map(|p| format!(" (the server's log: {})", p.display()))
                .unwrap_or_default();
            eprintln!("pokeshell: {}{log}", escape(&message));
            1
        }
    }
}

/// A line for the user when the hosted program did not end well; silence for a clean exit.
pub fn exit_note(label: &str, code: i32) -> Option<String> {
    match code {
        0 => None,
        c if c > 128 => {
            let sig = c - 128;
            // SAFETY: strsignal returns a pointer to a static or thread-local string, read at once.
            let name = unsafe {
                let p = libc::strsignal(sig);
                if p.is_null() {
                    String::new()
                } else {
                    std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            Some(format!(
                "pokeshell: {label} was killed by signal {sig} ({name}); exiting with {c}"
            ))
        }
        c => Some(format!("pokeshell: {label} exited with code {c}")),
    }
}

/// Opens `target` in this terminal (starting the server if needed). Returns the exit code.
pub fn open(target: Target, label: &str, probe_timeout: Duration) -> i32 {
    match attach::run(|| connect::session(true), target, probe_timeout) {
        Ok(ending) => finish(ending, label),
        Err(e) => {
            eprintln!("pokeshell: {}", escape(&format!("{e:#}")));
            1
        }
    }
}

/// One request and its answer within `limit`, for the commands that do not attach; past it, the
/// error names the server's state (`what` names the request).
pub(crate) fn ask(up: &Up, start: bool, what: &str, limit: Duration) -> Result<Down, String> {
    let (mut stream, restoring) = connect::session_with(start)?;
    let restoring = Some(restoring);
    let until = std::time::Instant::now() + limit;
    connect::send_within(&mut stream, &wire::encode_up(up), what, limit, restoring)?;
    // The answer to an Open comes after an Attached; the others answer at once.
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        let down = connect::read_down_within(&mut stream, what, left, restoring).map_err(|e| {
            if left.is_zero() {
                connect::no_answer_in(what, limit, restoring)
            } else {
                e
            }
        })?;
        match down {
            Down::Notice { message } => eprintln!("pokeshell: {}", escape(&message)),
            // `new -d` only waits for its session to be there; closing the connection detaches.
            Down::Attached { name } if matches!(up, Up::Open { .. }) => return Ok(Down::Attached { name }),
            Down::Attached { .. } | Down::Output(_) | Down::Welcome { .. } => continue,
            other => return Ok(other),
        }
    }
}

/// `pokeshell ls` as text: a line per session.
pub fn format_listing(list: &[Listing]) -> String {
    if list.is_empty() {
        return "no sessions\n".to_string();
    }
    let rows: Vec<[String; 10]> = list
        .iter()
        .map(|l| {
            // Every cell the server sent is written out safe: a directory may be named with escapes.
            [
                escape(&l.name),
                escape(&l.state),
                l.tool.as_deref().map_or_else(|| "-".into(), escape),
                l.last_intervention.as_deref().map_or_else(|| "-".into(), escape),
                crate::machines::merge::ago(l.age_secs),
                if l.attached > 0 {
                    format!("{}", l.attached)
                } else {
                    "-".into()
                },
                crate::machines::merge::token_cell(l.tokens_in, l.tokens_out, l.cache_read),
                l.cost_usd
                    .map_or_else(|| "-".into(), crate::machines::merge::dollar_cell),
                escape(&crate::machines::merge::branch_cell(l.branch.as_deref(), l.dirty)),
                escape(&l.dir),
            ]
        })
        .collect();
    let head = [
        "SESSION",
        "STATE",
        "TOOL",
        "LAST INTERVENTION",
        "AGE",
        "ATTACHED",
        "TOKENS IN/OUT",
        "COST",
        "BRANCH",
        "DIRECTORY",
    ];
    crate::machines::merge::table(&head, &rows)
}

/// The server's sessions, each with its checkout's branch and state; None when no server runs.
pub fn listing() -> Result<Option<Vec<Listing>>, String> {
    match ask(&Up::List, false, "`ls`", deadline::ANSWER_LIMIT) {
        Ok(Down::Listing { sessions: mut list }) => {
            crate::git::worktree::fill_trees(&mut list);
            Ok(Some(list))
        }
        Ok(other) => Err(format!("unexpected answer {other:?}")),
        Err(_) if connect::connect().is_err() => Ok(None),
        Err(e) => Err(e),
    }
}

/// `pokeshell ls`.
pub fn ls() -> i32 {
    match listing() {
        Ok(Some(list)) => {
            print!("{}", format_listing(&list));
            0
        }
        Ok(None) => {
            // Read only: the list is the server's to set aside, with a word to the user.
            let saved =
                match crate::server::store::default_path().map(|p| (crate::server::store::read(&p), p)) {
                    Some((Ok(list), _)) => list.len(),
                    Some((Err(problem), path)) => {
                        eprintln!(
                            "pokeshell: the saved sessions in {} cannot be brought back: {problem}",
                            path.display()
                        );
                        0
                    }
                    None => 0,
                };
            if saved > 0 {
                println!(
                    "no pokeshell server runs; {saved} saved session(s) come back with `pokeshell attach`"
                );
            } else {
                println!("no sessions (no pokeshell server runs)");
            }
            0
        }
        Err(e) => {
            eprintln!("pokeshell: {}", escape(&e));
            1
        }
    }
}

/// The running sessions' names and states, for completing a name: empty when no server runs or it
/// does not answer within `deadline` (the server is never started for this).
pub fn session_names(deadline: Duration) -> Vec<(String, String)> {
    let listing = || -> Result<Vec<Listing>, String> {
        let mut stream = connect::connect().map_err(|e| e.to_string())?;
        for set in [UnixStream::set_read_timeout, UnixStream::set_write_timeout] {
            set(&stream, Some(deadline)).map_err(|e| e.to_string())?;
        }
        connect::hello(&mut stream)?;
        stream
            .write_all(&wire::encode_up(&Up::List))
            .map_err(|e| e.to_string())?;
        match connect::read_down(&mut stream)? {
            Down::Listing { sessions: list } => Ok(list),
            other => Err(format!("{other:?}")),
        }
    };
    listing()
        .unwrap_or_default()
        .into_iter()
        .map(|l| {
            // The listing shows `N:name`; `attach` and `kill` take the bare name.
            let name = match l.name.split_once(':') {
                Some((n, bare)) if n.parse::<u32>().is_ok() => bare.to_string(),
                _ => l.name,
            };
            (name, l.state)
        })
        .collect()
}

/// `pokeshell kill NAME`.
pub fn kill(name: &str) -> i32 {
    match ask(
        &Up::Kill {
            name: name.to_string(),
            from: drive::origin(),
        },
        false,
        "`kill`",
        deadline::ANSWER_LIMIT,
    ) {
        Ok(Down::Done { message }) => {
            println!("{}", escape(&message));
            0
        }
        Ok(Down::Error { message }) => {
            eprintln!("pokeshell: {}", escape(&message));
            1
        }
        Ok(other) => {
            eprintln!("pokeshell: unexpected answer {}", escape(&format!("{other:?}")));
            1
        }
        Err(e) => {
            eprintln!("pokeshell: {}", escape(&e));
            1
        }
    }
}

/// `pokeshell new -d`: starts a session without attaching to it.
pub fn new_detached(target: Target) -> i32 {
    let open = Up::Open {
        target,
        cols: 120,
        rows: 40,
        caps: Vec::new(),
        caps_follow: false,
        env: std::env::vars().collect(),
        watch: false,
        terminal: None,
    };
    let mut answer = ask(&open, true, "the new session", OPEN_LIMIT);
    if answer.as_ref().err().map(String::as_str) == Some(connect::CLOSED)
        && connect::wait_gone(crate::ipc::socket::server_pid())
    {
        // The server was ending with its last session as this asked: the next one takes it.
        answer = ask(&open, true, "the new session", OPEN_LIMIT);
    }
    match answer {
        Ok(Down::Attached { name }) => {
            println!("started session {}", escape(&name));
            0
        }
        Ok(Down::Error { message }) => {
            eprintln!("pokeshell: {}", escape(&message));
            1
        }
        Ok(Down::Detached { reason }) => {
            eprintln!("pokeshell: {}", escape(&reason));
            1
        }
        Ok(Down::Exited { code, .. }) => {
            eprintln!("pokeshell: the new session ended at once (code {code})");
            1
        }
        Ok(other) => {
            eprintln!("pokeshell: unexpected answer {}", escape(&format!("{other:?}")));
            1
        }
        Err(e) => {
            eprintln!("pokeshell: {}", escape(&e));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_lines_up_its_columns() {
        let list = vec![
            Listing {
                name: "1:api".into(),
                dir: "/w/api".into(),
                state: "working".into(),
                tool: Some("bash 12s".into()),
                last_intervention: None,
                age_secs: 125,
                attached: 1,
                tokens_in: 12_000,
                tokens_out: 800,
                cache_read: 30_000,
                cost_usd: Some(0.0421),
                branch: Some("feat/x".into()),
                dirty: Some(true),
                context_percent: None,
                ..Default::default()
            },
            Listing {
                name: "2:web".into(),
                dir: "/w/web".into(),
                state: "waiting for you".into(),
                tool: None,
                last_intervention: Some("poked".into()),
                age_secs: 7_300,
                attached: 0,
                tokens_in: 0,
                tokens_out: 0,
                cache_read: 0,
                cost_usd: None,
                context_percent: None,
                ..Default::default()
            },
        ];
        let text = format_listing(&list);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("SESSION"));
        let col = lines[0].find("STATE").unwrap();
        assert_eq!(&lines[1][col..col + 7], "working");
        assert_eq!(&lines[2][col..col + 7], "waiting");
        assert!(lines[1].contains("bash 12s") && lines[1].contains("2m"));
        let branch = lines[0].find("BRANCH").unwrap();
        assert_eq!(&lines[1][branch..branch + 7], "feat/x*");
        assert_eq!(&lines[2][branch..branch + 2], "- ");
        assert!(lines[2].contains("poked") && lines[2].contains("2h01m"));
        let col = lines[0].find("TOKENS IN/OUT").unwrap();
        assert_eq!(
            &lines[1][col..col + 10],
            "42.0k/800 ",
            "cache reads count as input"
        );
        let col = lines[0].find("COST").unwrap();
        assert_eq!(&lines[1][col..col + 7], "$0.0421");
        assert_eq!(&lines[2][col..col + 1], "-", "no prices: no cost");
        assert_eq!(format_listing(&[]), "no sessions\n");
    }
}
