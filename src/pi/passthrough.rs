//! When pokeshell steps aside. pokeshell is a terminal around pi's conversation screen; when there is
//! no such screen to host (pi's arguments ask for a one-shot run: `-p`, `--mode json|rpc`, `--help`,
//! `--version`, `--list-models`, `--export`, a command such as `pi install`), or no terminal to draw
//! in (stdin or stdout redirected), pokeshell replaces itself with pi (`exec`): the same process,
//! stdin, stdout and stderr, output and exit code as pi run alone, so `alias pi='pokeshell --'`
//! breaks no script.
//!
//! No bridge and no supervisor in that case, on purpose. A scripted `pi -p` is read by a program
//! that expects pi's output and nothing else; a poke would add a turn the script did not ask for,
//! and without a screen nobody would see why. pokeshell's own options have no effect there.

use std::os::unix::process::CommandExt;

pub use pokeshell_core::pi_args::PlainRun;

use crate::term::pty::CommandSpec;

/// Why the child runs directly, without pokeshell around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Direct {
    /// pi's arguments ask for a run without its conversation screen.
    Args(PlainRun),
    /// stdin or stdout is not a terminal (a pipe, a file): pi prints its answer and exits, and
    /// pokeshell would have nowhere to draw.
    NoTerminal,
}

/// Whether to run the child directly. `pi_args`: pi's arguments, `None` when the child is not pi
/// (`--command`). stdin and stdout are what pi itself looks at; stderr is not.
pub fn direct(pi_args: Option<&[String]>, stdin_is_tty: bool, stdout_is_tty: bool) -> Option<Direct> {
    if !stdin_is_tty || !stdout_is_tty {
        return Some(Direct::NoTerminal);
    }
    pi_args
        .and_then(pokeshell_core::pi_args::plain_run)
        .map(Direct::Args)
}

/// Replaces this process with the child. Returns only when that failed, with the exit status a
/// shell gives a command it cannot run (127 not found, 126 otherwise) and the message to print.
pub fn exec(spec: &CommandSpec) -> (u8, String) {
    let mut cmd = std::process::Command::new(&spec.program);
    cmd.args(&spec.args).envs(spec.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    // std resets the signal mask and SIGPIPE before the exec, as it does for a spawned child.
    let err = cmd.exec();
    let code = if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    (
        code,
        format!("pokeshell: cannot run {}: {err}", spec.program.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_missing_terminal_wins_over_everything() {
        let interactive = args(&["--continue"]);
        for (stdin, stdout) in [(false, true), (true, false), (false, false)] {
            assert_eq!(
                direct(Some(&interactive), stdin, stdout),
                Some(Direct::NoTerminal)
            );
            assert_eq!(direct(None, stdin, stdout), Some(Direct::NoTerminal));
        }
    }

    #[test]
    fn in_a_terminal_only_pi_arguments_decide() {
        let print = args(&["-p", "say hi"]);
        assert_eq!(
            direct(Some(&print), true, true),
            Some(Direct::Args(PlainRun::Print))
        );
        assert_eq!(direct(Some(&args(&["--continue"])), true, true), None);
        assert_eq!(direct(None, true, true), None, "another program is always hosted");
    }

    #[test]
    fn a_program_that_cannot_run_gets_a_shell_status() {
        let missing = CommandSpec {
            program: "/nonexistent/pi".into(),
            args: Vec::new(),
            env: Vec::new(),
            label: "pi".into(),
            cwd: None,
            cwd_real: None,
            base_env: None,
        };
        let (code, message) = exec(&missing);
        assert_eq!(code, 127);
        assert!(message.contains("/nonexistent/pi"), "{message}");
        let dir = tempfile::tempdir().expect("temp dir");
        let not_executable = dir.path().join("pi");
        std::fs::write(&not_executable, "").expect("write");
        let (code, _) = exec(&CommandSpec {
            program: not_executable,
            ..missing
        });
        assert_eq!(code, 126);
    }
}
