//! `pokeshell demo`: finds (or installs) pi, builds the throw-away environment, starts the scripted
//! model on the loopback interface and runs pi inside pokeshell with the tour's director.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::director::{Director, Pace};
use super::env::DemoEnv;
use super::model::ModelServer;
use super::tour::Tour;
use crate::cli::DemoArgs;
use crate::core::config::{KeyId, Layer, SettingValue, Settings};
use crate::demo::layer::DemoLayer;
use crate::event_loop::start::{RunConfig, run};
use crate::pi::install;
use crate::pi::locate::{self, NotFound};
use crate::term::pty::CommandSpec;

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
    let tour = match &args.script {
        Some(path) => Tour::from_file(path),
        None => Tour::built_in(),
    };
    let tour = match tour {
        Ok(t) => t,
        Err(e) => {
            eprintln!("pokeshell demo: {e:#}");
            return EXIT_USAGE;
        }
    };
    let plans = match tour.plans(args.chapters) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pokeshell demo: {e:#}");
            return EXIT_USAGE;
        }
    };
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

    let model = match ModelServer::start() {
        Ok(m) => Arc::new(m),
        Err(e) => {
            eprintln!("pokeshell demo: cannot start the scripted model on 127.0.0.1: {e}");
            return 1;
        }
    };
    model.load(tour.opening());
    let env = match DemoEnv::create(&model.base_url(), &tour.settings) {
        Ok(env) => env,
        Err(e) => {
            eprintln!("pokeshell demo: cannot prepare its temporary directory: {e}");
            return 1;
        }
    };
    let mut settings = Settings::load(env.config_paths());
    if let Some(p) = args.prefix {
        let mut layer = Layer::new();
        layer.insert(KeyId::PrefixKey, SettingValue::Text(p.canonical()));
        settings.set_cli_overrides(layer);
    }
    let title = match (&tour.title, &args.script) {
        (Some(t), _) => t.clone(),
        (None, Some(path)) => path.display().to_string(),
        (None, None) => "demo".to_string(),
    };
    let director = Director::new(title, plans, tour.chapters.len(), Pace::default());
    let spec = CommandSpec {
        label: "pi (demo)".to_string(),
        program: pi,
        args: env.pi_args(),
        env: env.pi_env(),
        cwd: Some(env.work_dir.clone()),
        base_env: None,
    };
    let config = RunConfig {
        spec,
        label: "pi (demo)".to_string(),
        settings,
        bridge: true,
        probe_timeout,
        ledger_dir: Some(env.state_dir.clone()),
        // pi's resume hint names the demo's session dir, which is removed on the way out.
        final_screen: false,
    };
    let result = run(config, DemoLayer::new(director, Some(model)));
    drop(env);
    match result {
        Ok(code) => {
            if code != 0 {
                eprintln!("pokeshell demo: pi exited with code {code}");
            }
            eprintln!("pokeshell demo: finished; its temporary files are removed.");
            code
        }
        Err(e) => {
            eprintln!("pokeshell demo: {e:#}");
            1
        }
    }
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
