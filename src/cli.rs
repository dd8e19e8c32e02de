//! Command-line interface.

use std::path::PathBuf;

use clap::Parser;

use crate::config::ConfigArgs;
use crate::input::prefix::PrefixKey;

#[derive(Debug, Parser)]
#[command(
    name = "pokeshell",
    version,
    about = "Run the pi coding agent in a supervising terminal that pokes a stalled agent back into action",
    after_help = "Everything after `--` goes to pi unchanged, e.g. `pokeshell -- --continue`.\n\
                  Inside pokeshell, press the prefix key (Ctrl+] by default) and then ? for the keys."
)]
pub struct Cli {
    /// The pi executable (default: $POKESHELL_PI, else `pi` on PATH).
    #[arg(long, value_name = "PATH")]
    pub pi: Option<PathBuf>,

    /// Host another program instead of pi, given as one shell command line.
    #[arg(long, value_name = "COMMAND LINE", conflicts_with = "pi")]
    pub command: Option<String>,

    /// The prefix key for pokeshell's own commands, e.g. ctrl+b.
    #[arg(long, value_name = "KEY")]
    pub prefix: Option<PrefixKey>,

    #[command(flatten)]
    pub config: ConfigArgs,

    /// Arguments passed to pi unchanged.
    #[arg(last = true, value_name = "PI_ARGS")]
    pub pi_args: Vec<String>,
}
