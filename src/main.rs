use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use pokeshell::cli::{Cli, Mode};
use pokeshell::config::{ConfigPaths, KeyId, SettingValue, Settings};
use pokeshell::event_loop::NoLayer;
use pokeshell::event_loop::start::{RunConfig, run};
use pokeshell::locate;
use pokeshell::pty::CommandSpec;

fn probe_timeout() -> Duration {
    std::env::var("POKESHELL_PROBE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(pokeshell::host::probe::DEFAULT_TIMEOUT, Duration::from_millis)
}

/// The settings files, with this run's command-line overrides on top.
fn load_settings(cli: &Cli) -> Result<Settings, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let mut settings = Settings::load(ConfigPaths::from_env(&cwd)?);
    let mut layer = cli.config.overrides();
    if let Some(p) = cli.prefix {
        layer.insert(KeyId::PrefixKey, SettingValue::Text(p.canonical()));
    }
    settings.set_cli_overrides(layer);
    Ok(settings)
}

/// A line for the user when the hosted program did not end well; silence for a clean exit.
fn exit_note(label: &str, code: i32) -> Option<String> {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Mode::Demo(args)) = &cli.mode {
        let code = pokeshell::demo::launch::run_demo(args, probe_timeout());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let settings = match load_settings(&cli) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pokeshell: {e}");
            return ExitCode::from(2);
        }
    };
    if cli.config.show_config {
        print!("{}", settings.show_config());
        return ExitCode::SUCCESS;
    }
    let spec = match &cli.command {
        Some(line) => CommandSpec::shell(line),
        None => match locate::find_pi(cli.pi.as_deref()) {
            Ok(pi) => CommandSpec {
                label: format!("pi {}", cli.pi_args.join(" ")).trim_end().to_string(),
                program: pi,
                args: cli.pi_args.clone(),
                env: Vec::new(),
                cwd: None,
            },
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(127);
            }
        },
    };
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if !terminal {
        eprintln!(
            "pokeshell: it needs a terminal: run it in a terminal window, with stdin and stdout not redirected"
        );
        return ExitCode::from(2);
    }
    let bridge = cli.command.is_none();
    let label = if bridge {
        "pi".to_string()
    } else {
        spec.label.clone()
    };
    let config = RunConfig {
        label: spec.label.clone(),
        spec,
        settings,
        bridge,
        probe_timeout: probe_timeout(),
        ledger_dir: None,
        final_screen: true,
    };
    match run(config, NoLayer) {
        Ok(code) => {
            if let Some(note) = exit_note(&label, code) {
                eprintln!("{note}");
            }
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
        Err(e) => {
            eprintln!("pokeshell: {e:#}");
            ExitCode::from(1)
        }
    }
}
