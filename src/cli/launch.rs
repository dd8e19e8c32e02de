//! From a pokeshell command line to what runs: the child's command and the session's settings.
//! The same for a session in the user's terminal and one the server starts for a client (which
//! passes its environment and directory along).

use crate::pi::settings_files::SettingsFiles;
use std::ffi::OsStr;
use std::path::Path;

use crate::cli::Cli;
use crate::term::pty::CommandSpec;
use pokeshell_core::config::{ConfigPaths, KeyId, SettingValue, Settings};

/// What runs: pi with its arguments, or `--command`'s program line. `Err`: why pi cannot be found.
pub fn child_spec(cli: &Cli) -> Result<CommandSpec, String> {
    if let Some(line) = &cli.command {
        return Ok(CommandSpec::shell(line));
    }
    let pi = crate::pi::locate::find_pi(cli.pi.as_deref()).map_err(|e| e.to_string())?;
    Ok(CommandSpec {
        label: format!("pi {}", cli.pi_args.join(" ")).trim_end().to_string(),
        program: pi,
        args: cli.pi_args.clone(),
        env: Vec::new(),
        cwd: None,
        cwd_real: None,
        base_env: None,
    })
}

/// The settings files seen from `cwd` (with the home and pi agent dir of the environment the
/// session runs in), with the command line's overrides on top.
pub fn settings(
    cli: &Cli,
    cwd: &Path,
    home: Option<&Path>,
    agent_dir_env: Option<&OsStr>,
) -> Result<Settings, String> {
    let paths = ConfigPaths::resolve(home, agent_dir_env, cwd)?;
    let mut settings = Settings::load(paths);
    let mut layer = cli.config.overrides();
    if let Some(p) = cli.prefix {
        layer.insert(KeyId::PrefixKey, SettingValue::Text(p.canonical()));
    }
    settings.set_cli_overrides(layer);
    Ok(settings)
}

/// [`settings`] in this process's own environment and directory.
pub fn settings_here(cli: &Cli) -> Result<Settings, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    settings(
        cli,
        &cwd,
        std::env::home_dir().as_deref(),
        std::env::var_os(pokeshell_core::config::paths::AGENT_DIR_ENV).as_deref(),
    )
}
