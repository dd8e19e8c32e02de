//! The commands that reach other machines: `ls --json`, `ls --all`, `attach DEST:NAME`,
//! `new --on DEST`. The pure parts are in `crate::machines`; this is the wiring.

use std::time::Duration;

use crate::cli::{Cli, LsArgs, NewArgs};
use crate::machines::ask::{self, Answer};
use crate::machines::schema::{LsJson, SCHEMA, SessionJson, host_name};
use crate::machines::{cache, merge, now_ms, parse_machines, ssh};
use pokeshell_core::config::KeyId;
use pokeshell_core::safe_text::escape;

/// The machines and the time each gets, from the settings.
fn machines(cli: &Cli) -> Result<(Vec<String>, Duration), String> {
    let settings = crate::cli::launch::settings_here(cli)?;
    let list = parse_machines(&settings.get(KeyId::Machines).edit_text());
    let secs = settings
        .get(KeyId::MachineTimeoutSeconds)
        .as_int()
        .and_then(|s| u64::try_from(s).ok())
        .unwrap_or(5);
    Ok((list, Duration::from_secs(secs)))
}

/// This machine's sessions as the document; `server` false when no server runs.
fn local() -> Result<LsJson, String> {
    let machine = host_name();
    let (server, sessions) = match crate::client::listing()? {
        Some(list) => (
            true,
            list.iter()
                .map(|l| SessionJson::from_listing(l, &machine))
                .collect(),
        ),
        None => (false, Vec::new()),
    };
    Ok(LsJson {
        schema: SCHEMA,
        version: env!("CARGO_PKG_VERSION").to_string(),
        machine,
        server,
        sessions,
    })
}

fn print_json(value: &impl serde::Serialize) -> i32 {
    match serde_json::to_string(value) {
        Ok(text) => {
            println!("{text}");
            0
        }
        Err(e) => {
            eprintln!("pokeshell: {e}");
            1
        }
    }
}

/// `pokeshell ls --json` and `pokeshell ls --all [--json]`.
pub fn ls(cli: &Cli, args: &LsArgs) -> i32 {
    if !args.all {
        if !args.json {
            return crate::client::ls();
        }
        return match local() {
            Ok(doc) => print_json(&doc),
            Err(e) => {
                eprintln!("pokeshell: {e}");
                1
            }
        };
    }
    let (dests, timeout) = match machines(cli) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("pokeshell: {e}");
            return 2;
        }
    };
    if dests.is_empty() && !args.json {
        eprintln!("pokeshell: no other machine is set (`pokeshell.machines` in the global settings)");
    }
    // The others are asked while this machine's server answers.
    let asking = std::thread::spawn(move || ask::ask_all(&dests, timeout));
    let here = local();
    let answers = asking.join().unwrap_or_default();
    let here = match here {
        Ok(doc) => doc.sessions,
        Err(e) => {
            eprintln!("pokeshell: this machine: {e}");
            Vec::new()
        }
    };
    let path = cache::default_path();
    let mut known = path.as_deref().map(cache::load).unwrap_or_default();
    let now = now_ms();
    let merged = merge::merge(here, answers, &mut known, now);
    if let Some(p) = &path
        && let Err(e) = cache::save(p, &known)
    {
        eprintln!("pokeshell: {e}");
    }
    if args.json {
        print_json(&merged)
    } else {
        print!("{}", merge::format(&merged, now));
        0
    }
}

/// Asks `dest` for its listing before acting there, so a missing or different pokeshell is told
/// in plain words instead of through ssh's exit code.
fn check(cli: &Cli, dest: &str) -> Result<LsJson, String> {
    let timeout = machines(cli).map_or(Duration::from_secs(5), |(_, t)| t);
    let Answer { result, .. } = ask::ask(dest, timeout);
    result.map_err(|e| format!("{dest}: {e}"))
}

/// Runs ssh for the user and explains its failures; returns the exit code.
fn run_ssh(dest: &str, mut cmd: std::process::Command) -> i32 {
    match cmd.status() {
        Ok(s) => match s.code() {
            Some(255) => {
                eprintln!("pokeshell: ssh to {dest} failed (see its message above)");
                255
            }
            Some(c) => c,
            None => 1,
        },
        Err(e) => {
            eprintln!("pokeshell: cannot run {}: {e}", ssh::ssh_words()[0]);
            1
        }
    }
}

/// `pokeshell attach DEST:NAME`.
pub fn attach(cli: &Cli, dest: &str, name: &str) -> i32 {
    let listing = match check(cli, dest) {
        Ok(l) => l,
        Err(e) => {
            // The other machine's words (its version, ssh's message) may hold escapes: shown, not run.
            eprintln!("pokeshell: {}", escape(&e));
            return 1;
        }
    };
    let known = listing
        .sessions
        .iter()
        .any(|s| s.name == name || s.label == name || s.number.to_string() == name);
    if listing.server && !known {
        let names: Vec<String> = listing.sessions.iter().map(|s| escape(&s.label)).collect();
        eprintln!(
            "pokeshell: {dest} has no session named {name:?} (it has: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        return 1;
    }
    let remote = ssh::command_line(&["pokeshell", "attach", name]);
    run_ssh(dest, ssh::interactive(dest, &remote, true))
}

/// From the switcher to a session on another machine: this terminal attaches there through ssh.
pub fn hop(dest: &str, name: &str) -> i32 {
    let remote = ssh::command_line(&["pokeshell", "attach", name]);
    run_ssh(dest, ssh::interactive(dest, &remote, true))
}

/// The remote `pokeshell new` command line for `new --on`.
pub fn remote_new(args: &NewArgs, pi: Option<&std::path::Path>, detached: bool) -> String {
    let mut words: Vec<String> = vec!["pokeshell".into(), "new".into()];
    // `--flag=VALUE`, one word: a value starting with `-` is not taken for an option there.
    let mut opt = |flag: &str, v: Option<String>| {
        if let Some(v) = v {
            words.push(format!("{flag}={v}"));
        }
    };
    opt("--name", args.name.clone());
    opt(
        "--dir",
        args.dir.as_ref().map(|d| d.to_string_lossy().into_owned()),
    );
    opt("--worktree", args.worktree.clone());
    opt("--pi", pi.map(|p| p.to_string_lossy().into_owned()));
    if detached {
        words.push("-d".into());
    }
    if !args.pi_args.is_empty() {
        words.push("--".into());
        words.extend(args.pi_args.iter().cloned());
    }
    ssh::command_line(&words)
}

/// `pokeshell new --on DEST [...]`.
pub fn new_on(cli: &Cli, dest: &str, args: &NewArgs, terminal: bool) -> i32 {
    if let Err(e) = check(cli, dest) {
        eprintln!("pokeshell: {}", escape(&e));
        return 1;
    }
    let detached = args.detached || !terminal;
    run_ssh(
        dest,
        ssh::interactive(dest, &remote_new(args, cli.pi.as_deref(), detached), !detached),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn new_on_passes_every_option_quoted() {
        let args = NewArgs {
            name: Some("my api".into()),
            dir: Some(PathBuf::from("src/api")),
            detached: true,
            worktree: Some("feat/x".into()),
            on: Some("gpu".into()),
            pi_args: vec!["--model".into(), "a b".into()],
        };
        assert_eq!(
            remote_new(&args, None, true),
            "pokeshell new '--name=my api' --dir=src/api --worktree=feat/x -d -- --model 'a b'"
        );
        let bare = NewArgs {
            name: None,
            dir: None,
            detached: false,
            worktree: None,
            on: Some("gpu".into()),
            pi_args: Vec::new(),
        };
        assert_eq!(remote_new(&bare, None, false), "pokeshell new");
        // Issue 34, low 13: a value starting with `-` was sent as a word of its own, and the other
        // machine took it for an option.
        let dashed = NewArgs {
            dir: Some(PathBuf::from("-notes")),
            ..bare
        };
        assert_eq!(remote_new(&dashed, None, true), "pokeshell new --dir=-notes -d");
    }
}
