//! `pokeshell diff NAME [--stat]`: what a session's agent changed since the session started, read
//! here with git (the server says the session's directory and base) and written as text, coloured
//! for a terminal, through a pager as git does. `DEST:NAME` asks the other machine through ssh and
//! pages its answer here.

use std::io::IsTerminal;
use std::time::Duration;

use crate::cli::{DiffArgs, When};
use crate::git::changes::{self, Bounds};
use crate::machines::ssh;
use crate::term::bounded_command;
use pokeshell_core::diff::{Changes, text};
use pokeshell_core::safe_text::escape;
use pokeshell_core::wire::{Down, Listing, Up};

/// A remote diff's answer kept: what a local one may print, and its messages.
const REMOTE_OUTPUT: usize = changes::COMMAND_OUTPUT + (1 << 20);
/// Time for the other machine: its ssh login and its git runs.
const REMOTE_DEADLINE: Duration = Duration::from_secs(90);

/// Runs the command; returns the exit code.
pub fn run(args: &DiffArgs) -> i32 {
    let tty = std::io::stdout().is_terminal();
    let colour = match args.color {
        When::Always => true,
        When::Never => false,
        When::Auto => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let page = tty && !args.no_pager;
    let made = match ssh::split_target(&args.name) {
        Some((dest, name)) => remote(dest, name, args.stat, colour),
        None => local(&args.name, args.stat, colour),
    };
    match made {
        Ok(text) => match super::pager::show(&text, page) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("pokeshell: cannot write the diff: {e}");
                1
            }
        },
        Err(message) => {
            eprintln!("pokeshell: {}", escape(&message));
            1
        }
    }
}

/// The session named `name` in the server's list: by name, number or `number:name`.
pub fn find<'a>(list: &'a [Listing], name: &str) -> Result<&'a Listing, String> {
    list.iter()
        .find(|l| l.answers_to(name))
        .ok_or_else(|| format!("no session named {name:?} (see `pokeshell ls`)"))
}

/// This machine's session `name`, its diff as text.
fn local(name: &str, stat: bool, colour: bool) -> Result<String, String> {
    let list = match super::ask(&Up::List, false, "`diff`", super::deadline::ANSWER_LIMIT) {
        Ok(Down::Listing { sessions }) => sessions,
        Ok(other) => return Err(format!("unexpected answer {other:?}")),
        Err(_) if super::connect::connect().is_err() => {
            return Err(format!(
                "no pokeshell server runs, so there is no session {name:?}"
            ));
        }
        Err(e) => return Err(e),
    };
    let session = find(&list, name)?;
    let model = changes::of_session(&session.dir, session.base.as_deref(), Bounds::COMMAND).map_err(|e| {
        if e.contains("not in a git repository") {
            format!(
                "session {} runs in {}, which is not in a git repository: it has no changes to show",
                session.name, session.dir
            )
        } else {
            format!("session {}: {e}", session.name)
        }
    })?;
    let title = title(&session.name, &model);
    Ok(if stat {
        text::stat(&model, &title, width(), colour)
    } else {
        text::patch(&model, &title, colour)
    })
}

/// "Changes of 1:api since 1a2b3c4d5e: 3 files changed, +12 -4".
fn title(session: &str, model: &Changes) -> String {
    let base = &model.base[..model.base.len().min(10)];
    format!("Changes of {session} since {base}: {}", model.summary())
}

/// The terminal's width, for `--stat`'s bars; 80 when writing elsewhere.
fn width() -> usize {
    crossterm::terminal::size()
        .ok()
        .filter(|_| std::io::stdout().is_terminal())
        .map_or(80, |(cols, _)| usize::from(cols))
}

/// Another machine's session: its `pokeshell diff`, asked through ssh, coloured as this terminal
/// wants and paged here.
fn remote(dest: &str, name: &str, stat: bool, colour: bool) -> Result<String, String> {
    let mut words = vec!["pokeshell", "diff", name, "--no-pager"];
    words.push(if colour { "--color=always" } else { "--color=never" });
    if stat {
        words.push("--stat");
    }
    let line = ssh::command_line(&words);
    let ran = bounded_command::run(
        ssh::batch(dest, &line, REMOTE_DEADLINE),
        REMOTE_DEADLINE,
        REMOTE_OUTPUT,
    )
    .map_err(|e| format!("cannot run {}: {e}", ssh::ssh_words()[0]))?;
    if ran.timed_out {
        return Err(format!(
            "{dest} did not answer within {} s",
            REMOTE_DEADLINE.as_secs()
        ));
    }
    if ran.overflowed {
        return Err(format!(
            "{dest}'s answer is larger than {} MiB",
            REMOTE_OUTPUT >> 20
        ));
    }
    match ran.status.and_then(|s| s.code()) {
        // Its colours, and nothing else a terminal would act on.
        Some(0) => Ok(String::from_utf8_lossy(&ran.stdout)
            .split('\n')
            .map(|l| pokeshell_core::safe_text::escape_line(l, colour))
            .collect::<Vec<_>>()
            .join("\n")),
        Some(127) => Err(format!(
            "{dest}: pokeshell is not installed there (or not on the PATH of a non-interactive ssh session)"
        )),
        Some(255) => Err(format!("ssh to {dest} failed: {}", ran.stderr_line())),
        _ => Err(format!(
            "{dest}: {}",
            ran.stderr_line().trim_start_matches("pokeshell: ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_by_name_number_or_label() {
        let list = vec![
            Listing {
                name: "1:api".into(),
                ..Listing::default()
            },
            Listing {
                name: "2:web".into(),
                ..Listing::default()
            },
        ];
        for name in ["web", "2", "2:web"] {
            assert_eq!(find(&list, name).map(|l| l.name.as_str()), Ok("2:web"));
        }
        assert!(find(&list, "nope").unwrap_err().contains("no session named"));
    }
}
