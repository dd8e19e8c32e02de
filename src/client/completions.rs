//! Shell completions and the manual page, both made from the one clap definition in `cli.rs`.
//!
//! Completion is dynamic (clap_complete's `CompleteEnv`): the script a shell loads only calls
//! `pokeshell` back with `COMPLETE=<shell>` set, and pokeshell answers from its own definition. So
//! the names of running sessions complete after `attach`, `kill` and `diff` (asked of the server, bounded
//! by a short deadline), and a script installed once never falls behind a newer pokeshell.

use std::io::Write;
use std::time::Duration;

use clap::CommandFactory;
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use clap_complete::env::{EnvCompleter, Shells};

use crate::cli::{Cli, Shell};

/// The environment variable that turns a run of pokeshell into a completion request.
pub const COMPLETE_VAR: &str = "COMPLETE";

/// How long completing a session name may wait for the server: a Tab must never hang.
const NAMES_DEADLINE: Duration = Duration::from_millis(300);

/// The completer clap_complete has for `shell`.
fn completer(shell: Shell) -> &'static dyn EnvCompleter {
    use clap_complete::env::{Bash, Elvish, Fish, Powershell, Zsh};
    match shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
        Shell::Elvish => &Elvish,
        Shell::Powershell => &Powershell,
    }
}

/// Answers a completion request when the shell made this run one (`COMPLETE` set), and exits;
/// otherwise returns at once. Called first in `main`, before anything is written.
pub fn answer_if_asked() {
    clap_complete::CompleteEnv::with_factory(completing_command)
        .var(COMPLETE_VAR)
        .shells(Shells::builtins())
        .complete();
}

/// The command line's definition with the running sessions' names as candidates after `attach` and
/// `kill`. They are added here, not in `cli.rs`, so that the definition of the options needs nothing
/// from the client.
fn completing_command() -> clap::Command {
    Cli::command()
        .mut_subcommand("attach", |c| c.mut_arg("name", |a| a.add(session_names())))
        .mut_subcommand("kill", |c| c.mut_arg("name", |a| a.add(session_names())))
        .mut_subcommand("diff", |c| c.mut_arg("name", |a| a.add(session_names())))
}

/// The script that makes `shell` complete pokeshell (it calls `pokeshell` on PATH back).
pub fn script(shell: Shell, out: &mut dyn Write) -> std::io::Result<()> {
    completer(shell).write_registration(COMPLETE_VAR, "pokeshell", "pokeshell", "pokeshell", out)
}

/// The candidates for a session name: those of the running server, none when no server runs.
fn session_names() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        super::session_names(NAMES_DEADLINE)
            .into_iter()
            .map(|(name, state)| CompletionCandidate::new(name).help(Some(state.into())))
            .collect::<Vec<_>>()
    })
}

/// The manual page: the command's own page, then a section per subcommand with its options.
pub fn man_page(out: &mut dyn Write) -> std::io::Result<()> {
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render(out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        writeln!(out, ".SH \"POKESHELL {}\"", name.to_uppercase())?;
        let page = clap_mangen::Man::new(sub.clone().bin_name(format!("pokeshell {name}")));
        page.render_synopsis_section(out)?;
        page.render_description_section(out)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            page.render_options_section(out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_that_calls_pokeshell_back() {
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::Elvish,
            Shell::Powershell,
        ] {
            let mut out = Vec::new();
            script(shell, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.contains("pokeshell"), "{shell:?}: {text}");
            assert!(text.contains(COMPLETE_VAR), "{shell:?}: {text}");
        }
    }
}
