use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use pokeshell::cli::{Cli, Mode};
use pokeshell::config::{ConfigPaths, KeyId, SettingValue, Settings};
use pokeshell::event_loop::NoLayer;
use pokeshell::event_loop::start::{RunConfig, run};
use pokeshell::locate;
use pokeshell::passthrough;
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

/// What runs: pi with its arguments, or `--command`'s program line. Err: the exit code after the
/// message is printed.
fn child_spec(cli: &Cli) -> Result<CommandSpec, ExitCode> {
    if let Some(line) = &cli.command {
        return Ok(CommandSpec::shell(line));
    }
    match locate::find_pi(cli.pi.as_deref()) {
        Ok(pi) => Ok(CommandSpec {
            label: format!("pi {}", cli.pi_args.join(" ")).trim_end().to_string(),
            program: pi,
            args: cli.pi_args.clone(),
            env: Vec::new(),
            cwd: None,
            base_env: None,
        }),
        Err(e) => {
            eprintln!("{e}");
            Err(ExitCode::from(127))
        }
    }
}

fn main() -> ExitCode {
    // First: the terminal is not in raw mode yet (see `quit_shield`).
    pokeshell::host::quit_shield(true);
    let cli = Cli::parse();
    if let Some(Mode::Demo(args)) = &cli.mode {
        let code = pokeshell::demo::launch::run_demo(args, probe_timeout());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let settings = || {
        load_settings(&cli).map_err(|e| {
            eprintln!("pokeshell: {e}");
            ExitCode::from(2)
        })
    };
    if cli.config.show_config {
        return match settings() {
            Ok(s) => {
                print!("{}", s.show_config());
                ExitCode::SUCCESS
            }
            Err(code) => code,
        };
    }
    let spec = match child_spec(&cli) {
        Ok(spec) => spec,
        Err(code) => return code,
    };
    // Before the settings are read: a broken settings file must not stop `pi --version`.
    let pi_args = cli.command.is_none().then_some(cli.pi_args.as_slice());
    let stdin_tty = std::io::stdin().is_terminal();
    let stdout_tty = std::io::stdout().is_terminal();
    if passthrough::direct(pi_args, stdin_tty, stdout_tty).is_some() {
        let (code, message) = passthrough::exec(&spec);
        eprintln!("{message}");
        return ExitCode::from(code);
    }
    let settings = match settings() {
        Ok(s) => s,
        Err(code) => return code,
    };
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
