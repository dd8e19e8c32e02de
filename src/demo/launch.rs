//! `pokeshell demo`: finds (or installs) pi, builds the throw-away environment, starts the scripted
//! model on the loopback interface and runs pi inside pokeshell with the tour's director.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::director::{Director, Pace};
use super::env::DemoEnv;
use super::model::ModelServer;
use super::tour::Tour;
use crate::app::AppOptions;
use crate::app::demo::DemoRun;
use crate::app::run::{RunConfig, run};
use crate::cli::DemoArgs;
use crate::config::{KeyId, Layer, SettingValue, Settings};
use crate::install;
use crate::locate::{self, NotFound};
use crate::pty::CommandSpec;

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
/// earlier `--install-pi` in `cache`, else (with `install`) a fresh install, else the message saying
/// what is missing and the command that installs it.
pub fn find_or_install_pi(
    flag: Option<&Path>,
    install: bool,
    cache: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, NoPi> {
    if flag.is_some() {
        return locate::find_pi(flag).map_err(|e| NoPi {
            message: e.to_string(),
            code: EXIT_NO_PI,
        });
    }
    match locate::find_pi(None) {
        Ok(pi) => return Ok(pi),
        Err(e @ NotFound::BadPath { .. }) => {
            return Err(NoPi {
                message: e.to_string(),
                code: EXIT_NO_PI,
            });
        }
        Err(NotFound::NotOnPath) => {}
    }
    if let Some(pi) = install::find_installed(cache) {
        return Ok(pi);
    }
    if !install {
        return Err(NoPi {
            message: install::missing_pi_message(),
            code: EXIT_NO_PI,
        });
    }
    install::install_pi(cache, progress).map_err(|e| NoPi {
        message: format!("pokeshell: {e}"),
        code: 1,
    })
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
    let pi = match find_or_install_pi(
        args.pi.as_deref(),
        args.install_pi,
        &install::cache_dir(),
        &mut |line| eprintln!("pokeshell: {line}"),
    ) {
        Ok(pi) => pi,
        Err(e) => {
            eprintln!("{}", e.message);
            return e.code;
        }
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
    };
    let result = run(RunConfig {
        spec,
        app: AppOptions {
            label: "pi (demo)".to_string(),
        },
        settings,
        bridge: true,
        probe_timeout,
        demo: Some(DemoRun { director, model }),
        ledger_dir: Some(env.state_dir.clone()),
        // pi's resume hint names the demo's session dir, which is removed on the way out.
        final_screen: false,
    });
    drop(env);
    match result {
        Ok(code) => {
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
        let err = find_or_install_pi(Some(&dir.join("pi")), true, &dir, &mut |_| {}).unwrap_err();
        assert_eq!(err.code, EXIT_NO_PI);
        assert!(
            err.message.contains("(from --pi) is not an executable file"),
            "{}",
            err.message
        );
    }
}
