//! Command-line interface.

pub mod about;
pub mod config_args;
pub mod drive_args;
pub mod launch;

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::cli::config_args::ConfigArgs;
use crate::cli::drive_args::{EventsArgs, ReadArgs, SendArgs, SkillArgs, WaitArgs};
use pokeshell_core::input::prefix::PrefixKey;

#[derive(Debug, Parser)]
#[command(
    name = "pokeshell",
    version,
    about = "Run the pi coding agent in a supervising terminal that pokes a stalled agent back into action",
    after_help = "Everything after `--` goes to pi unchanged, e.g. `pokeshell -- --continue`.\n\
                  `pokeshell demo` shows pokeshell rescuing a stalled agent, with no API key.\n\
                  Sessions live in a per-user server: closing the terminal only detaches;\n\
                  `pokeshell attach` comes back, `pokeshell ls` lists them.\n\
                  Inside pokeshell, press the prefix key (Ctrl+] by default) and then ? for the keys.\n\
                  \n\
                  When pi's arguments ask for a run without its conversation screen (-p/--print,\n\
                  --mode json or rpc, --help, --version, --list-models, --export, or a command\n\
                  such as `install`, `config` or `auth` first), or when stdin or stdout is not a\n\
                  terminal, pokeshell adds nothing: it runs pi in its own place, with the same\n\
                  input, output and exit status as pi alone. No side pane, no footer, no bridge,\n\
                  no supervision; its options other than --pi and its settings do not apply.\n\
                  So with `alias pi='pokeshell --'`, scripts that run `pi -p ...` still work.",
    disable_version_flag = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub mode: Option<Mode>,

    /// Print pokeshell's version, the pi it finds and that pi's version.
    #[arg(short = 'V', long, global = true)]
    pub version: bool,

    /// The pi executable (default: $POKESHELL_PI, else `pi` on PATH).
    #[arg(long, value_name = "PATH", global = true)]
    pub pi: Option<PathBuf>,

    /// Host another program instead of pi, given as one shell command line.
    #[arg(long, value_name = "COMMAND LINE", conflicts_with = "pi", global = true)]
    pub command: Option<String>,

    /// The prefix key for pokeshell's own commands, e.g. ctrl+b.
    #[arg(long, value_name = "KEY", global = true)]
    pub prefix: Option<PrefixKey>,

    #[command(flatten)]
    pub config: ConfigArgs,

    /// Arguments passed to pi unchanged.
    #[arg(last = true, value_name = "PI_ARGS")]
    pub pi_args: Vec<String>,
}

impl Cli {
    /// Parses a command line given without the program's name (as a client hands it to the server).
    pub fn try_parse_from_argv(argv: &[String]) -> Result<Cli, String> {
        Cli::try_parse_from(std::iter::once("pokeshell").chain(argv.iter().map(String::as_str)))
            .and_then(Cli::with_globals)
            .map_err(|e| e.to_string())
    }
}

#[derive(Debug, Subcommand)]
pub enum Mode {
    /// Watch pokeshell rescue a stalled agent: real pi against a scripted model, no API key, no network.
    Demo(DemoArgs),
    /// Attach this terminal to a running session (default: the one used last).
    Attach {
        /// The session's name or number, as `pokeshell ls` shows them; DEST:NAME for a session on
        /// another machine (through `ssh -t DEST`).
        name: Option<String>,
    },
    /// List the sessions: name, state, running tool, last intervention, age, branch, directory.
    Ls(LsArgs),
    /// Start another session.
    New(NewArgs),
    /// End a session: pi is asked to quit (SIGTERM), then killed after a grace.
    Kill {
        /// The session's name or number.
        name: String,
        /// Also remove the session's git worktree, when it has no uncommitted changes.
        #[arg(long)]
        remove_worktree: bool,
    },
    /// Print the script that makes SHELL complete pokeshell's commands, options and session names.
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: Shell,
    },
    /// Print pokeshell's manual page (roff), e.g. `pokeshell man | man -l -`.
    Man,
    /// What a session's agent changed since the session started (committed, uncommitted and new
    /// files), through a pager as git does.
    Diff(DiffArgs),
    /// Serve the sessions to a browser (docs/web.md): prints a one-time login link and its QR code.
    Web {
        /// Where to listen (default 127.0.0.1:7878). An address beyond loopback lets anyone who
        /// reaches it and logs in drive your agents.
        #[arg(long, value_name = "ADDR:PORT")]
        listen: Option<String>,
        /// End every login to the web view instead (every browser's, and the links not used yet),
        /// every one-tap link from a push and every device's Web Push subscription: every open page
        /// is logged out at once.
        #[arg(long, conflicts_with = "listen")]
        logout_all: bool,
    },
    /// Give a session's agent a prompt; exits 0 once pi has it. While the agent works, the message
    /// waits as pi's follow-up (or is steered in at once with --steer).
    Send(SendArgs),
    /// Wait until a session is idle (right after a `send`: the run it started is over), needs you,
    /// or has exited. Exit status: 0 reached, 124 timeout, 3 the session ended first, 4 (idle) the
    /// run stopped on a question or a rule that gave up.
    Wait(WaitArgs),
    /// Print a session's last reply, or its last N messages; --json adds tool calls, tokens, cost
    /// and state.
    Read(ReadArgs),
    /// Follow the sessions' state changes and interventions, a line each, until interrupted.
    Events(EventsArgs),
    /// Serve the Model Context Protocol on standard input and output, for an agent to drive
    /// sessions (`pi mcp add pokeshell --exposure direct -- pokeshell mcp`).
    Mcp,
    /// Print the pi skill that teaches an agent to delegate work to other sessions; `skill
    /// install` puts it where pi loads skills.
    Skill(SkillArgs),
    /// The per-user server itself; started by pokeshell when needed.
    #[command(name = "__server", hide = true)]
    Server,
}

#[derive(Debug, Clone, Args)]
pub struct LsArgs {
    /// Write the list as JSON (docs/machines.md has the schema).
    #[arg(long)]
    pub json: bool,

    /// Also ask every machine of `pokeshell.machines`, through ssh.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The session's name or number, as `pokeshell ls` shows them; DEST:NAME for a session on
    /// another machine (through `ssh DEST pokeshell diff`).
    pub name: String,

    /// Only a line per file with its count of changed lines, and the totals.
    #[arg(long)]
    pub stat: bool,

    /// Colour the diff: auto (when writing to a terminal and NO_COLOR is not set), always or never.
    #[arg(long, value_enum, default_value_t = When::Auto, value_name = "WHEN")]
    pub color: When,

    /// Write to standard output even when it is a terminal, without $GIT_PAGER, $PAGER or less.
    #[arg(long)]
    pub no_pager: bool,
}

/// `--color`'s choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Args)]
pub struct NewArgs {
    /// The session's name (default: its directory's name).
    #[arg(long, short = 'n')]
    pub name: Option<String>,

    /// The directory pi runs in (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Start it without attaching this terminal.
    #[arg(long, short = 'd')]
    pub detached: bool,

    /// Run it in a git worktree of this branch beside the repository (created, or reused), named
    /// after the branch.
    #[arg(long, value_name = "BRANCH")]
    pub worktree: Option<String>,

    /// Start it on another machine, an SSH destination (through `ssh DEST pokeshell new`).
    #[arg(long, value_name = "DEST")]
    pub on: Option<String>,

    /// Arguments passed to pi unchanged.
    #[arg(last = true, value_name = "PI_ARGS")]
    pub pi_args: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// The global `--pi` (the demo also finds the one --install-pi installed).
    #[arg(skip)]
    pub pi: Option<PathBuf>,

    /// When pi cannot be found, install Node.js 22 (if needed) and pi 1.6.0 into pokeshell's cache
    /// directory through npm.
    #[arg(long)]
    pub install_pi: bool,

    /// Play this scenario file instead of the built-in tour (docs/scenario-format.md).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,

    /// Play only these chapters of the tour, e.g. 3 or 1-3.
    #[arg(long, value_name = "N-M")]
    pub chapters: Option<ChapterRange>,

    /// The global `--prefix`.
    #[arg(skip)]
    pub prefix: Option<PrefixKey>,
}

impl Cli {
    /// Parses the command line and hands the global options to the subcommands that use them.
    pub fn parse_args() -> Cli {
        Cli::parse().with_globals().unwrap_or_else(|e| e.exit())
    }

    /// The global options go to the subcommand that uses them. They are accepted before or after
    /// any subcommand (an alias such as `pokeshell --pi ~/bin/pi` must work with every command);
    /// commands that start nothing ignore them. Refused: what would be silently lost, that is
    /// `--command` or a settings flag with `demo` (it plays its own script with its own settings),
    /// and `--show-config` or pi's arguments with any subcommand.
    fn with_globals(mut self) -> Result<Cli, clap::Error> {
        let refuse = |what: &str, sub: &str| {
            Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("{what} does not apply to `pokeshell {sub}`"),
            ))
        };
        let Some(mode) = &mut self.mode else {
            return Ok(self);
        };
        let sub = mode.name();
        if self.config.show_config {
            return refuse("--show-config", sub);
        }
        if !self.pi_args.is_empty() {
            return refuse("arguments for pi (after `--`)", sub);
        }
        if let Mode::Demo(args) = mode {
            if self.command.is_some() {
                return refuse("--command", sub);
            }
            if !self.config.overrides().is_empty() {
                return refuse("a settings flag (--enable, --threshold, --no-postcompact)", sub);
            }
            args.pi = self.pi.clone();
            args.prefix = self.prefix;
        }
        Ok(self)
    }
}

impl Mode {
    /// The subcommand's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Demo(_) => "demo",
            Mode::Attach { .. } => "attach",
            Mode::Ls(_) => "ls",
            Mode::New(_) => "new",
            Mode::Kill { .. } => "kill",
            Mode::Completions { .. } => "completions",
            Mode::Man => "man",
            Mode::Diff(_) => "diff",
            Mode::Web { .. } => "web",
            Mode::Send(_) => "send",
            Mode::Wait(_) => "wait",
            Mode::Read(_) => "read",
            Mode::Events(_) => "events",
            Mode::Mcp => "mcp",
            Mode::Skill(_) => "skill",
            Mode::Server => "__server",
        }
    }
}

/// The shells `pokeshell completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

impl DemoArgs {
    /// The demo's command line for its session in the server, with the pi this terminal found or
    /// installed (the server has another directory: paths are made absolute).
    pub fn session_argv(&self, pi: &std::path::Path) -> Vec<String> {
        let path = |p: &std::path::Path| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .to_string_lossy()
                .into_owned()
        };
        let mut argv = vec!["demo".to_string(), "--pi".to_string(), path(pi)];
        if let Some(script) = &self.script {
            argv.extend(["--script".to_string(), path(script)]);
        }
        if let Some(c) = self.chapters {
            argv.extend(["--chapters".to_string(), format!("{}-{}", c.first, c.last)]);
        }
        if let Some(p) = self.prefix {
            argv.extend(["--prefix".to_string(), p.canonical()]);
        }
        argv
    }
}

/// `--chapters 2` or `--chapters 1-3` (1-based, inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChapterRange {
    pub first: usize,
    pub last: usize,
}

impl std::str::FromStr for ChapterRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let number = |t: &str| {
            t.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("{t:?} is not a chapter number (1, 2, …)"))
        };
        let (first, last) = match s.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(s)?, number(s)?),
        };
        if first > last {
            return Err(format!("{s}: the first chapter comes after the last"));
        }
        Ok(ChapterRange { first, last })
    }
}

#[cfg(test)]
mod tests;
