//! What a session changed in its checkout, against the commit it started from (its base): committed,
//! uncommitted and new files, read by git and parsed into the pure model
//! ([`pokeshell_core::diff`]). New files are shown through a private copy of the index where they
//! are added with intent (`git add -N`): the repository's own index is never written. Every git
//! run has a deadline and a bound on its output.

pub mod base;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::term::bounded_command::{self, Ran};
use pokeshell_core::diff::{self, Changes, Limits};

/// The deadline of each git run: a diff of a large tree takes a while, and nothing waits on it but
/// the view that asked.
pub const DEADLINE: Duration = Duration::from_secs(20);
/// git's output kept for a view (the overlay, the web view) and for `pokeshell diff`.
pub const VIEW_OUTPUT: usize = 8 << 20;
pub const COMMAND_OUTPUT: usize = 64 << 20;
/// The list of new files kept: past it, the rest are left out of the diff (and said).
const UNTRACKED_OUTPUT: usize = 4 << 20;
/// Answers of a line or two.
const SMALL_OUTPUT: usize = 64 << 10;
/// The largest index copied for a reading: an index of a few hundred thousand files is tens of
/// MiB. The checkout is the agent's, so its index may be a link to anything.
pub const INDEX_LIMIT: u64 = 256 << 20;

/// How much a reading of the changes may cost.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub limits: Limits,
    /// Bytes of git's diff output read; past it, git is stopped and the rest said to be left out.
    pub output: usize,
}

impl Bounds {
    pub const VIEW: Bounds = Bounds {
        limits: Limits::VIEW,
        output: VIEW_OUTPUT,
    };
    pub const COMMAND: Bounds = Bounds {
        limits: Limits::COMMAND,
        output: COMMAND_OUTPUT,
    };
}

/// git in `dir`, reading only (no optional locks), with `index` as its index when given. The
/// repository's own `core.fsmonitor` is not run: the checkout is the agent's, and its configuration
/// could name any program, which a look at the diff (every 5 s while the agent works) would run as
/// the server. (Its clean filters still run: Git LFS is one, and without it every large file would
/// show as changed.)
pub(crate) fn git(dir: &Path, args: &[&str], index: Option<&Path>, limit: usize) -> Result<Ran, String> {
    let mut cmd = Command::new("git");
    cmd.arg("--no-optional-locks")
        .args(["-c", "core.fsmonitor=false"])
        .arg("-C")
        .arg(dir)
        .args(args);
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    // Nothing of the user's may wait for an answer: no pager, no credential prompt.
    cmd.env("GIT_PAGER", "cat").env("GIT_TERMINAL_PROMPT", "0");
    bounded_command::run(cmd, DEADLINE, limit).map_err(|e| format!("cannot run git: {e}"))
}

/// Why a run gave nothing usable, in a few words.
pub(crate) fn failed(what: &str, ran: &Ran) -> String {
    if ran.timed_out {
        format!("{what}: git did not finish within {} s", DEADLINE.as_secs())
    } else {
        format!("{what}: {}", ran.stderr_line())
    }
}

/// The first line of a successful run's output.
pub(crate) fn answer(ran: &Ran) -> Option<String> {
    if !ran.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&ran.stdout);
    text.lines()
        .next()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
}

/// The changes in the checkout `dir` is in, against `base` (a commit id).
pub fn changes(dir: &Path, base: &str, bounds: Bounds) -> Result<Changes, String> {
    if !base::is_commit_id(base) {
        return Err(format!("{base:?} is not a commit id"));
    }
    let top = toplevel(dir)?;
    let scratch = tempfile::Builder::new()
        .prefix("pokeshell-diff-")
        .tempdir()
        .map_err(|e| format!("cannot make a private directory for the diff: {e}"))?;
    let index = scratch.path().join("index");
    let own_index = git(
        &top,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
        None,
        SMALL_OUTPUT,
    )
    .ok()
    .and_then(|r| answer(&r))
    .map(PathBuf::from);
    if let Some(own) = own_index {
        copy_index(&own, &index)?;
    }
    let left_out = add_new_files(&top, &index, scratch.path())?;
    let ran = git(
        &top,
        &[
            "-c",
            "core.quotePath=false",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            "--submodule=short",
            "-M",
            "-D",
            "--raw",
            "--numstat",
            "-p",
            "-z",
            base,
            "--",
        ],
        Some(&index),
        bounds.output,
    )?;
    if !(ran.success() || ran.overflowed) {
        return Err(failed("git could not compare the checkout with its base", &ran));
    }
    let mut model = diff::parse(&ran.stdout, ran.overflowed, base, bounds.limits);
    if left_out {
        let note = "some new files were left out: there are more than git's list of them holds";
        model.note = Some(match model.note.take() {
            Some(n) => format!("{n}; {note}"),
            None => note.to_string(),
        });
    }
    Ok(model)
}

/// The changes of a session in `dir` against its `base`; without one (a session older than the
/// record of bases), against the commit checked out now, which the note says.
pub fn of_session(dir: &str, base: Option<&str>, bounds: Bounds) -> Result<Changes, String> {
    let path = Path::new(dir);
    let (base, guessed) = match base {
        Some(b) => (b.to_string(), false),
        None => match base::checked_out(path)? {
            Some(b) => (b, true),
            None => {
                return Err(format!(
                    "{dir} is not in a git repository: there are no changes to show"
                ));
            }
        },
    };
    let mut model = changes(path, &base, bounds)?;
    if guessed {
        let note =
            "no base was recorded for this session: these are the changes since the commit checked out now";
        model.note = Some(match model.note.take() {
            Some(n) => format!("{note}; {n}"),
            None => note.to_string(),
        });
    }
    Ok(model)
}

/// Copies the repository's index `own` to `to`, bounded: a regular file (a link to one is followed,
/// as git does) of at most [`INDEX_LIMIT`] bytes. None there (a repository where nothing was ever
/// added) copies nothing. The file is opened without blocking (a FIFO put there answers at once)
/// and its kind and size are checked on what was opened, and the copy stops at the bound whatever
/// the file does meanwhile.
fn copy_index(own: &Path, to: &Path) -> Result<(), String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = own.display();
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(own);
    let from = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot read the index {shown}: {e}")),
    };
    let meta = from
        .metadata()
        .map_err(|e| format!("cannot read the index {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "the index {shown} is not a regular file: the changes are not read through it"
        ));
    }
    let too_big = || {
        format!(
            "the index {shown} is larger than {} MiB: the changes are not read through it",
            INDEX_LIMIT >> 20
        )
    };
    if meta.len() > INDEX_LIMIT {
        return Err(too_big());
    }
    let mut out = std::fs::File::create(to).map_err(|e| format!("cannot copy the index: {e}"))?;
    let copied = std::io::copy(&mut from.take(INDEX_LIMIT + 1), &mut out)
        .map_err(|e| format!("cannot read the index {shown}: {e}"))?;
    if copied > INDEX_LIMIT {
        return Err(too_big());
    }
    Ok(())
}

/// The top of the checkout `dir` is in.
pub(crate) fn toplevel(dir: &Path) -> Result<PathBuf, String> {
    let ran = git(dir, &["rev-parse", "--show-toplevel"], None, SMALL_OUTPUT)?;
    answer(&ran)
        .map(PathBuf::from)
        .ok_or_else(|| format!("{} is not in a git checkout", dir.display()))
}

/// Adds the checkout's new files (untracked, not ignored) to the private index with intent, so
/// that the diff shows them as added. Returns whether their list was cut at its bound.
fn add_new_files(top: &Path, index: &Path, scratch: &Path) -> Result<bool, String> {
    let ran = git(
        top,
        &["ls-files", "--others", "--exclude-standard", "-z"],
        Some(index),
        UNTRACKED_OUTPUT,
    )?;
    if !(ran.success() || ran.overflowed) {
        return Err(failed("git could not list the new files", &ran));
    }
    // Whole names only: a list cut at its bound ends inside one.
    let whole = match ran.stdout.iter().rposition(|&b| b == 0) {
        Some(end) => &ran.stdout[..=end],
        None => return Ok(ran.overflowed),
    };
    let list = scratch.join("new-files");
    std::fs::write(&list, whole).map_err(|e| format!("cannot write the list of new files: {e}"))?;
    let from = format!("--pathspec-from-file={}", list.display());
    let added = git(
        top,
        // Names, not patterns: a file called `*.rs` is that file.
        &[
            "--literal-pathspecs",
            "add",
            "--intent-to-add",
            "--pathspec-file-nul",
            &from,
        ],
        Some(index),
        SMALL_OUTPUT,
    )?;
    if !added.success() {
        return Err(failed("git could not take in the new files", &added));
    }
    Ok(ran.overflowed)
}

#[cfg(test)]
mod tests;
