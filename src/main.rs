use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use pokeshell::cli::{Cli, Mode, NewArgs};
use pokeshell::client;
use pokeshell::pi::passthrough;
use pokeshell::term::pty::CommandSpec;
use pokeshell_core::wire::Target;

fn probe_timeout() -> Duration {
    std::env::var("POKESHELL_PROBE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(
            pokeshell::term::host::probe::DEFAULT_TIMEOUT,
            Duration::from_millis,
        )
}

/// The kinds of session the server runs besides pi's: the demo's.
fn kinds() -> pokeshell::server::kind::Kinds {
    std::sync::Arc::new([
        Box::new(pokeshell::demo::kind::DemoKind) as Box<dyn pokeshell::server::kind::SessionKind>
    ])
}

fn code(c: i32) -> ExitCode {
    ExitCode::from(u8::try_from(c).unwrap_or(1))
}

fn current_dir() -> Result<PathBuf, ExitCode> {
    std::env::current_dir().map_err(|e| {
        eprintln!("pokeshell: cannot read the current directory: {e}");
        ExitCode::from(2)
    })
}

/// What runs: pi with its arguments, or `--command`'s program line. Err: the exit code after the
/// message is printed.
fn child_spec(cli: &Cli) -> Result<CommandSpec, ExitCode> {
    pokeshell::cli::launch::child_spec(cli).map_err(|e| {
        eprintln!("{e}");
        ExitCode::from(127)
    })
}

/// The session's pokeshell command line for the server: this one's, with pi found here (the
/// server runs elsewhere, with another PATH and directory).
fn server_argv(raw: &[String], spec: &CommandSpec, command: bool) -> Vec<String> {
    let mut out = Vec::new();
    if !command {
        let pi = std::path::absolute(&spec.program).unwrap_or_else(|_| spec.program.clone());
        out.extend(["--pi".to_string(), pi.to_string_lossy().into_owned()]);
    }
    let mut i = 0;
    while i < raw.len() {
        let a = &raw[i];
        if a == "--" {
            out.extend(raw[i..].iter().cloned());
            break;
        }
        if !command && a == "--pi" {
            i += 2;
            continue;
        }
        if command || !a.starts_with("--pi=") {
            out.push(a.clone());
        }
        i += 1;
    }
    out
}

fn new_session(globals: &Cli, args: &NewArgs) -> ExitCode {
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if let Some(dest) = &args.on {
        return code(pokeshell::client::remote::new_on(globals, dest, args, terminal));
    }
    let cli = Cli {
        mode: None,
        version: false,
        pi: globals.pi.clone(),
        command: globals.command.clone(),
        prefix: globals.prefix,
        config: globals.config.clone(),
        pi_args: args.pi_args.clone(),
    };
    let spec = match child_spec(&cli) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let mut dir = match &args.dir {
        Some(d) => std::path::absolute(d).unwrap_or_else(|_| d.clone()),
        None => match current_dir() {
            Ok(d) => d,
            Err(c) => return c,
        },
    };
    let mut name = args.name.clone();
    if let Some(branch) = &args.worktree {
        match pokeshell::git::worktree::ensure(&dir, branch) {
            Ok(w) => {
                let how = if w.created { "created" } else { "reusing" };
                eprintln!("pokeshell: {how} the worktree {}", w.path.display());
                dir = w.path;
                name = name.or_else(|| Some(pokeshell::git::worktree::session_name(branch)));
            }
            Err(e) => {
                eprintln!("pokeshell: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let mut own = cli.config.to_argv();
    if let Some(line) = &cli.command {
        own.extend(["--command".to_string(), line.clone()]);
    }
    if let Some(prefix) = cli.prefix {
        own.extend(["--prefix".to_string(), prefix.canonical()]);
    }
    let mut argv = server_argv(&own, &spec, cli.command.is_some());
    argv.push("--".to_string());
    argv.extend(args.pi_args.iter().cloned());
    let target = Target::New {
        name,
        dir: dir.to_string_lossy().into_owned(),
        args: argv,
    };
    if args.detached || !terminal {
        code(client::new_detached(target))
    } else {
        code(client::open(target, "pi", probe_timeout()))
    }
}

/// Writes what `write` makes to stdout; a closed pipe (`| head`) is not an error worth a message.
fn print_or_fail(write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match write(&mut out).and_then(|()| std::io::Write::flush(&mut out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pokeshell: cannot write: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    // First: the terminal is not in raw mode yet (see `quit_shield`).
    pokeshell::term::host::quit_shield(true);
    // A shell asking for completions (`COMPLETE` set) is answered before anything else runs.
    pokeshell::client::completions::answer_if_asked();
    let cli = Cli::parse_args();
    if cli.version {
        print!(
            "{}",
            pokeshell::cli::about::version_text(
                cli.pi.as_deref(),
                pokeshell::cli::about::PI_VERSION_DEADLINE
            )
        );
        return ExitCode::SUCCESS;
    }
    match &cli.mode {
        Some(Mode::Completions { shell }) => {
            return print_or_fail(|out| pokeshell::client::completions::script(*shell, out));
        }
        Some(Mode::Man) => return print_or_fail(pokeshell::client::completions::man_page),
        Some(Mode::Demo(args)) => return code(pokeshell::demo::launch::run_demo(args, probe_timeout())),
        Some(Mode::Server) => {
            let served = pokeshell::server::serve::detach_from_parent().and_then(|()| {
                eprintln!("pokeshell server: {}", pokeshell::server::file_limit::raise());
                pokeshell::server::serve::run(kinds())
            });
            return match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("pokeshell server: {e:#}");
                    ExitCode::from(1)
                }
            };
        }
        Some(Mode::Ls(args)) => return code(pokeshell::client::remote::ls(&cli, args)),
        Some(Mode::Kill {
            name,
            remove_worktree: true,
        }) => return code(pokeshell::client::remove_worktree::kill_and_remove(name)),
        Some(Mode::Kill { name, .. }) => return code(client::kill(name)),
        Some(Mode::New(args)) => return new_session(&cli, args),
        Some(Mode::Attach { name: Some(target) })
            if pokeshell::machines::ssh::split_target(target).is_some() =>
        {
            let (dest, name) = pokeshell::machines::ssh::split_target(target).unwrap_or_default();
            return code(pokeshell::client::remote::attach(&cli, dest, name));
        }
        Some(Mode::Web { logout_all: true, .. }) => return code(client::web::logout_all()),
        Some(Mode::Web { listen, .. }) => {
            // --listen, else the setting when it names another address than the default.
            let listen = listen.clone().or_else(|| {
                let set = pokeshell::cli::launch::settings_here(&cli).ok()?;
                let value = set.get(pokeshell_core::config::KeyId::WebListen).edit_text();
                (value.trim() != pokeshell::web::DEFAULT_LISTEN && !value.trim().is_empty())
                    .then(|| value.trim().to_string())
            });
            return code(client::web::run(listen));
        }
        Some(Mode::Attach { name }) => {
            let target = Target::Attach { name: name.clone() };
            return code(client::open(target, "pi", probe_timeout()));
        }
        None => {}
    }
    if cli.config.show_config {
        return match pokeshell::cli::launch::settings_here(&cli) {
            Ok(s) => {
                print!("{}", s.show_config());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("pokeshell: {e}");
                ExitCode::from(2)
            }
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
    // The server reads them again for the session; a broken file is reported here, at once.
    if let Err(e) = pokeshell::cli::launch::settings_here(&cli) {
        eprintln!("pokeshell: {e}");
        return ExitCode::from(2);
    }
    let dir = match current_dir() {
        Ok(d) => d,
        Err(c) => return c,
    };
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let label = if cli.command.is_none() {
        "pi".to_string()
    } else {
        spec.label.clone()
    };
    let target = Target::New {
        name: None,
        dir: dir.to_string_lossy().into_owned(),
        args: server_argv(&raw, &spec, cli.command.is_some()),
    };
    code(client::open(target, &label, probe_timeout()))
}
