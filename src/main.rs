use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use pokeshell::app::AppOptions;
use pokeshell::app::run::{RunConfig, run};
use pokeshell::cli::Cli;
use pokeshell::locate;
use pokeshell::pty::CommandSpec;

fn probe_timeout() -> Duration {
    std::env::var("POKESHELL_PROBE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(pokeshell::host::probe::DEFAULT_TIMEOUT, Duration::from_millis)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let spec = match &cli.command {
        Some(line) => CommandSpec::shell(line),
        None => match locate::find_pi(cli.pi.as_deref()) {
            Ok(pi) => CommandSpec {
                label: format!("pi {}", cli.pi_args.join(" ")).trim_end().to_string(),
                program: pi,
                args: cli.pi_args.clone(),
                env: Vec::new(),
            },
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(127);
            }
        },
    };
    let mut app = AppOptions {
        label: spec.label.clone(),
        ..AppOptions::default()
    };
    if let Some(p) = cli.prefix {
        app.prefix = p;
    }
    match run(RunConfig {
        spec,
        app,
        probe_timeout: probe_timeout(),
    }) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("pokeshell: {e:#}");
            ExitCode::from(1)
        }
    }
}
