//! Who a session is and how it starts, kept in one shape from the request that makes it to the
//! session that shows it: the server's core decides it (a new session, a restored one), the session's
//! thread builds the session from it, the session keeps it to name itself and to resume.

use serde::{Deserialize, Serialize};

/// A session's identity and its start. The saved list writes it down (`server_store`) without the
/// environment and the resume flag, which belong to one start.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SessionSpec {
    /// Stable, 1-based, given at creation and never reused (prefix+1…9 use it); 0 only in tests that
    /// run a session alone.
    pub number: u32,
    /// As the session list shows it.
    pub name: String,
    /// The directory pi runs in.
    pub dir: String,
    /// pokeshell's command line for the session (without the program name): pi's arguments after
    /// `--`, or `--command` for another program. Named `args` in the saved list, as since its first
    /// version.
    #[serde(default, rename = "args")]
    pub argv: Vec<String>,
    /// The commit the session's changes are read against (`pokeshell diff`, the changes overlay,
    /// the web view's Changes): the commit checked out when it started, or for a worktree
    /// `new --worktree` made, the one it was made from. Recorded once, when the session first
    /// starts, and kept across server restarts; `None` outside a git checkout or until it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Where `dir` led when the session first started, links followed (`dir` may be a symbolic
    /// link, or lie under one): recorded once and kept across server restarts. A start, relaunch or
    /// restore finds `dir` leading elsewhere (a link pointed at another tree meanwhile) and does not
    /// start the program there (issue 34). `None` until it first starts (and in older lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_dir: Option<String>,
    /// The environment the program runs in: the client's that asked for it.
    #[serde(skip)]
    pub env: Vec<(String, String)>,
    /// pi was mid-run when a previous server ended: the first pi is asked to carry on (RST-S1).
    #[serde(skip)]
    pub resume: bool,
    /// The session whose agent started this one (`pokeshell new` run from inside it), by name:
    /// such sessions are bounded (`pokeshell.maxAgentSessions`), and the ledger names the parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// pi was given a first prompt on its command line: its first run counts as the session's
    /// first message, which `pokeshell wait` waits for. Only for a new session's first start.
    #[serde(skip)]
    pub prompted: bool,
}

impl SessionSpec {
    /// pi's own arguments on the command line: the words after `--`.
    pub fn pi_args(&self) -> &[String] {
        pi_args_of(&self.argv)
    }

    /// The session runs pi (not `--command`'s program) and was given a first prompt.
    pub fn first_prompt(&self) -> bool {
        runs_pi(&self.argv) && crate::pi_args::has_messages(self.pi_args())
    }
}

/// The words after `--` in a pokeshell command line `argv`: pi's own arguments.
fn pi_args_of(argv: &[String]) -> &[String] {
    let at = argv.iter().position(|a| a == "--");
    at.map_or(&[], |i| &argv[i + 1..])
}

/// Whether the command line `argv` runs pi, not `--command`'s program.
fn runs_pi(argv: &[String]) -> bool {
    let options = &argv[..argv.len() - pi_args_of(argv).len()];
    !options
        .iter()
        .any(|a| a == "--command" || a.starts_with("--command="))
}

/// A new session's command line `argv` with pi's first prompt written out as a sent text is
/// ([`crate::drive::defused`]): pi draws it as it is, so an escape sequence in it would act on
/// every terminal showing the session. A `--command` program's arguments are its own.
pub fn first_prompt_defused(mut argv: Vec<String>) -> Vec<String> {
    if !runs_pi(&argv) {
        return argv;
    }
    let pi = pi_args_of(&argv).len();
    let args = argv.split_off(argv.len() - pi);
    argv.extend(crate::pi_args::prompts_defused(args));
    argv
}
