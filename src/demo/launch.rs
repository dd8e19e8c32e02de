//! `pokeshell demo`: finds (or installs) pi, starts a pokeshell server of the demo's own and asks
//! it for the demo's session, then attaches this terminal to it as any client attaches. The
//! server starts the scripted model, the throw-away environment and the tour's director
//! (`session.rs`). The demo ends with its session; a detach, a closed terminal or a signal end it
//! too, since nothing could come back to a throw-away server.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::own_server::OwnServer;
use super::session;
use crate::cli::DemoArgs;
use crate::client::attach::{self, Ending};
use crate::pi::install;
use crate::pi::locate::{self, NotFound};
use pokeshell_core::safe_text::escape;
use pokeshell_core::wire::Target;

/// The exit code when pi is missing, as for the main command.
pub const EXIT_NO_PI: i32 = 127;
/// Bad input (a scenario file, a chapter range).
pub const EXIT_USAGE: i32 = 2;

/// Why there is no pi to run, and the exit code to leave with.
#[derive(Debug, PartialEq, Eq)]
pub struct NoPi {
    pub message: String,
    pub code: i32,
}

/// pi, in the order src/install.rs describes: `--pi`, else `$POKESHELL_PI` or `pi` on PATH, else an
/// earlier `--install-pi` in `cache`. Nothing is installed here; `None` means there is none.
pub fn find_pi(flag: Option<&Path>, cache: &Path) -> Result<Option<PathBuf>, NoPi> {
    let bad_path = |e: NotFound| NoPi {
        message: e.to_string(),
        code: EXIT_NO_PI,
    };
    if flag.is_some() {
        return locate::find_pi(flag).map(Some).map_err(bad_path);
    }
    match locate::find_pi(None) {
        Ok(pi) => Ok(Some(pi)),
        Err(e @ NotFound::BadPath { .. }) => Err(bad_path(e)),
        Err(NotFound::NotOnPath) => Ok(install::find_installed(cache)),
    }
}

fn is_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Runs the demo; returns the exit code (pi's own when it ran).
pub fn run_demo(args: &DemoArgs, probe_timeout: Duration) -> i32 {
    // The tour is checked here, before anything is installed or started; the server reads it again.
    if let Err(e) = super::session::tour_and_plans(args) {
        eprintln!("pokeshell demo: {e}");
        return EXIT_USAGE;
    }
    let cache = install::cache_dir();
    let found = match find_pi(args.pi.as_deref(), &cache) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("{}", e.message);
            return e.code;
        }
    };
    if found.is_none() && !args.install_pi {
        eprintln!("{}", install::missing_pi_message());
        return EXIT_NO_PI;
    }
    // Checked before installing, so that nothing is installed for a demo that cannot run.
    if !is_terminal() {
        eprintln!(
            "pokeshell demo: it needs a terminal: run it in a terminal window, with stdin and stdout not redirected"
        );
        return EXIT_USAGE;
    }
    let pi = match found {
        Some(pi) => pi,
        None => match install::install_pi(&cache, &mut |line| eprintln!("pokeshell: {line}")) {
            Ok(pi) => pi,
            Err(e) => {
                eprintln!("pokeshell: {e}");
                return 1;
            }
        },
    };
    let server = match OwnServer::create() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pokeshell demo: cannot prepare its temporary directory: {e}");
            return 1;
        }
    };
    let target = Target::New {
        name: Some("demo".to_string()),
        dir: server.root().to_string_lossy().into_owned(),
        args: args.session_argv(&pi),
        base: None,
    };
    let ending = attach::run(server.connector(), target, probe_timeout);
    let pi_exited = matches!(ending, Ok(Ending::Exited { .. }));
    if !server.end(pi_exited) {
        eprintln!(
            "pokeshell demo: its server (in {}) would not end",
            server.root().display()
        );
    }
    let code = match ending {
        Ok(Ending::Exited { code, .. }) => {
            if code != 0 {
                eprintln!("pokeshell demo: pi exited with code {code}");
            }
            code
        }
        Ok(Ending::Detached(reason)) => {
            eprintln!(
                "pokeshell demo: {}: the demo ends with it (it ran in a server of its own)",
                escape(&reason)
            );
            0
        }
        Ok(Ending::Failed(message)) => {
            eprintln!("pokeshell demo: {}", escape(&message));
            // Its log goes with its directory: what it said is shown now.
            if let Some(log) = server.log_tail() {
                eprintln!("pokeshell demo: its server's log ends with:\n{}", escape(&log));
            }
            1
        }
        Ok(ending @ (Ending::Signal(_) | Ending::Hop { .. })) => {
            crate::client::finish(ending, session::LABEL)
        }
        Err(e) => {
            eprintln!("pokeshell demo: {}", escape(&format!("{e:#}")));
            1
        }
    };
    drop(server);
    eprintln!("pokeshell demo: finished; its temporary files are removed.");
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_pi_that_is_not_executable_is_refused_with_127() {
        let dir = std::env::temp_dir().join("pokeshell-no-such-dir-for-demo-test");
        let err = find_pi(Some(&dir.join("pi")), &dir).unwrap_err();
        assert_eq!(err.code, EXIT_NO_PI);
        assert!(
            err.message.contains("(from --pi) is not an executable file"),
            "{}",
            err.message
        );
    }
}
