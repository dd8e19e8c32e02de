//! The options of the commands that drive sessions (`send`, `wait`, `read`, `events`, `skill`),
//! docs/driving.md.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// A session: its name, its number, `number:name` as `ls` prints it, or `DEST:NAME` for a session
/// on another machine (through ssh).
const SESSION_HELP: &str = "The session: its name or number, or DEST:NAME on another machine (through ssh)";

#[derive(Debug, Clone, Args)]
pub struct SendArgs {
    #[arg(help = SESSION_HELP)]
    pub session: String,

    /// The prompt, its words joined by spaces; `-` alone reads it from standard input.
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub text: Vec<String>,

    /// While the agent works, steer the message into its run at once (by default it waits, as pi's
    /// follow-up, until the run's current work is done).
    #[arg(long)]
    pub steer: bool,
}

/// What `wait` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UntilArg {
    /// The agent's run is over and nothing carries it on by itself.
    Idle,
    /// The session needs you: a question, a rule that gave up, a provider limit, a stall.
    NeedsYou,
    /// The session ended.
    Exited,
}

#[derive(Debug, Clone, Args)]
pub struct WaitArgs {
    #[arg(help = SESSION_HELP)]
    pub session: String,

    /// The state to wait for. Right after a `send` (or a `new` with a first prompt), idle means the
    /// run that message started is over.
    #[arg(long, value_enum, default_value = "idle")]
    pub until: UntilArg,

    /// Give up after this many seconds (exit status 124).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
}

#[derive(Debug, Clone, Args)]
pub struct ReadArgs {
    #[arg(help = SESSION_HELP)]
    pub session: String,

    /// Write the transcript as JSON (docs/driving.md has the schema): tool calls, tokens, cost and
    /// state included.
    #[arg(long)]
    pub json: bool,

    /// The last N messages instead of the last reply.
    #[arg(long, value_name = "N")]
    pub last: Option<u32>,
}

#[derive(Debug, Clone, Args)]
pub struct EventsArgs {
    /// One JSON object per line (docs/driving.md has the schema).
    #[arg(long)]
    pub json: bool,

    /// Only these sessions (default: every session, those started later too).
    pub sessions: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct SkillArgs {
    #[command(subcommand)]
    pub action: Option<SkillAction>,
}

#[derive(Debug, Clone, Subcommand)]
pub enum SkillAction {
    /// Write the skill where pi loads skills: the user's (`~/.pi/agent/skills/`, or under
    /// $PI_CODING_AGENT_DIR), this project's `.pi/skills/`, or another directory.
    Install {
        /// Into the current project's `.pi/skills/` instead.
        #[arg(long)]
        project: bool,
        /// Into this skills directory instead.
        #[arg(long, value_name = "DIR", conflicts_with = "project")]
        dir: Option<PathBuf>,
    },
}
