//! Reading pi 1.6.0's command line the way pi reads it, only far enough to know whether pi will open
//! its conversation screen. pi's parser is hand-written: an option that takes a value swallows the
//! next argument whatever it looks like (`--model --version` names a model), `-p` takes the next
//! argument as the prompt unless it starts with `-` or `@`, an unknown `--flag` (an extension's)
//! takes the next argument unless it starts with `-` or `@`, and its management commands are
//! recognised only as the very first argument.

/// Why pi, given these arguments, runs without its conversation screen even in a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlainRun {
    /// `pi install`, `pi config`, `pi auth …`: one of pi's management commands.
    Command(String),
    /// pi rejects these arguments and exits with its message.
    Refused,
    /// `--version` / `-v`.
    Version,
    /// `--export FILE [OUTPUT]`.
    Export,
    /// `--mode rpc`: JSON commands on stdin, JSON events on stdout.
    Rpc,
    /// `--mode json`: the run's events as JSON lines.
    Json,
    /// `--print` / `-p`: one prompt, the answer on stdout.
    Print,
    /// `--help` / `-h`.
    Help,
    /// `--list-models [SEARCH]`.
    ListModels,
}

/// pi's commands, recognised only as the first argument (`pi <command> --help` for each).
const COMMANDS: [&str; 8] = [
    "install",
    "remove",
    "uninstall",
    "update",
    "list",
    "config",
    "auth",
    "mcp",
];

/// Options whose value is the next argument, taken whatever it looks like (when there is one).
pub(crate) const TAKES_NEXT: [&str; 21] = [
    "--provider",
    "--model",
    "--api-key",
    "--system-prompt",
    "--append-system-prompt",
    "--session",
    "--session-id",
    "--fork",
    "--session-dir",
    "--models",
    "--tools",
    "-t",
    "--exclude-tools",
    "-xt",
    "--thinking",
    "--export",
    "--extension",
    "-e",
    "--skill",
    "--prompt-template",
    "--theme",
];

/// Switches without a value that change nothing here.
const SWITCHES: [&str; 25] = [
    "--continue",
    "-c",
    "--resume",
    "-r",
    "--no-session",
    "--no-tools",
    "-nt",
    "--no-builtin-tools",
    "-nbt",
    "--no-extensions",
    "-ne",
    "--no-mcp",
    "--no-skills",
    "-ns",
    "--no-prompt-templates",
    "-np",
    "--no-themes",
    "--no-context-files",
    "-nc",
    "--verbose",
    "--approve",
    "-a",
    "--no-approve",
    "-na",
    "--offline",
];

#[derive(Default)]
struct Seen {
    help: bool,
    version: bool,
    print: bool,
    mode: Option<String>,
    export: bool,
    list_models: bool,
    error: bool,
    /// A message for pi to send at once (an argument that is neither an option, its value nor an
    /// `@file`).
    messages: bool,
    /// Where the prompts are: the message arguments, and `-p`'s prompt.
    prompts: Vec<usize>,
}

/// What pi will do with `args` when stdin and stdout are terminals: `None` when it opens its
/// conversation screen, else why not: what pi does first when several apply (commands, argument
/// errors, `--version`, `--export`, `--help`, `--list-models`, then the output mode).
pub fn plain_run(args: &[String]) -> Option<PlainRun> {
    if let Some(first) = args.first().filter(|a| COMMANDS.contains(&a.as_str())) {
        return Some(PlainRun::Command(first.clone()));
    }
    let seen = scan(args);
    let mode = seen.mode.as_deref();
    [
        (seen.error, PlainRun::Refused),
        (seen.version, PlainRun::Version),
        (seen.export, PlainRun::Export),
        (seen.help, PlainRun::Help),
        (seen.list_models, PlainRun::ListModels),
        (mode == Some("rpc"), PlainRun::Rpc),
        (mode == Some("json"), PlainRun::Json),
        (seen.print, PlainRun::Print),
    ]
    .into_iter()
    .find_map(|(hit, why)| hit.then_some(why))
}

/// pi was given a first prompt on its command line (`pi "fix the test"`): its conversation starts
/// with a run.
pub fn has_messages(args: &[String]) -> bool {
    scan(args).messages
}

/// `args` with every prompt in them (a message argument, `-p`'s prompt) as a sent text goes to pi
/// ([`crate::drive::defused`]): pi draws them on its screen as they are. Options, their values and
/// `@file`s are left as they are.
pub fn prompts_defused(mut args: Vec<String>) -> Vec<String> {
    for i in scan(&args).prompts {
        if let Some(arg) = args.get_mut(i) {
            *arg = crate::drive::defused(arg);
        }
    }
    args
}

fn scan(args: &[String]) -> Seen {
    let mut seen = Seen::default();
    let mut i = 0;
    while i < args.len() {
        i += step(args, i, &mut seen);
    }
    seen
}

/// Reads the argument at `i` into `seen`; returns how many arguments it used.
fn step(args: &[String], i: usize, seen: &mut Seen) -> usize {
    let arg = args[i].as_str();
    let next = args.get(i + 1).map(String::as_str);
    // pi's test for a value an option may take but need not: not an option, not an `@file`.
    let plain = |v: &str| !v.starts_with('-') && !v.starts_with('@');
    match arg {
        // Everything after it is a message or a file.
        "--" => {
            let messages = (i + 1..args.len()).filter(|&j| !args[j].starts_with('@'));
            seen.prompts.extend(messages);
            seen.messages |= args[i + 1..].iter().any(|a| !a.starts_with('@'));
            return args.len() - i;
        }
        "--help" | "-h" => seen.help = true,
        "--version" | "-v" => seen.version = true,
        "--mode" => match next {
            Some(v) if !v.starts_with('-') => {
                if matches!(v, "text" | "json" | "rpc") {
                    seen.mode = Some(v.to_string());
                } else {
                    seen.error = true;
                }
                return 2;
            }
            _ => seen.error = true,
        },
        "--print" | "-p" => {
            seen.print = true;
            // A prompt may start with `---` (a YAML front matter, say), not with one or two dashes.
            if next.is_some_and(|v| !v.starts_with('@') && (!v.starts_with('-') || v.starts_with("---"))) {
                seen.prompts.push(i + 1);
                return 2;
            }
        }
        "--name" | "-n" => match next {
            Some(_) => return 2,
            None => seen.error = true,
        },
        "--list-models" => {
            seen.list_models = true;
            if next.is_some_and(plain) {
                return 2;
            }
        }
        "--use-theme" => match next {
            Some(v) if !v.starts_with('-') => return 2,
            _ => seen.error = true,
        },
        "--tui-mode" => match next {
            Some(v) if !v.starts_with('-') => {
                seen.error |= !matches!(v, "regular" | "fullscreen");
                return 2;
            }
            _ => seen.error = true,
        },
        _ if TAKES_NEXT.contains(&arg) && next.is_some() => {
            seen.export |= arg == "--export";
            return 2;
        }
        _ if SWITCHES.contains(&arg) => {}
        _ if arg.starts_with('@') => {}
        // An unknown long option, perhaps an extension's: `--flag=value`, `--flag value` or a switch.
        _ if arg.starts_with("--") && !arg.contains('=') && next.is_some_and(plain) => return 2,
        _ if arg.starts_with("--") => {}
        _ if arg.starts_with('-') => seen.error = true,
        _ => {
            seen.messages = true;
            seen.prompts.push(i);
        }
    }
    1
}

#[cfg(test)]
mod tests;
