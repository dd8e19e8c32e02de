//! The `git` commands pokeshell runs, each bounded in time and output.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::list::{Worktree, parse_porcelain};
use crate::term::bounded_command::{self, Ran};

/// Reading commands answer fast; a checkout of a large tree may take a while.
const READ_DEADLINE: Duration = Duration::from_secs(10);
const WRITE_DEADLINE: Duration = Duration::from_secs(120);
const OUTPUT_LIMIT: usize = 1 << 20;

fn git(dir: &Path, args: &[&str], deadline: Duration) -> Result<Ran, String> {
    let mut cmd = Command::new("git");
    // Optional locks off: looking at a repository must not write its index.
    cmd.arg("--no-optional-locks").arg("-C").arg(dir).args(args);
    bounded_command::run(cmd, deadline, OUTPUT_LIMIT).map_err(|e| format!("cannot run git: {e}"))
}

fn failed(what: &str, ran: &Ran) -> String {
    if ran.timed_out {
        format!("{what}: git did not finish in time")
    } else {
        format!("{what}: {}", ran.stderr_line())
    }
}

/// git's own rule for branch names (`git check-ref-format --branch`), plus no leading `-`.
pub fn check_branch_name(dir: &Path, branch: &str) -> Result<(), String> {
    let refused = || format!("{branch:?} is not a branch name git accepts; nothing was created");
    if branch.is_empty() || branch.starts_with('-') || branch.starts_with('@') {
        return Err(refused());
    }
    let ran = git(dir, &["check-ref-format", "--branch", branch], READ_DEADLINE)?;
    if ran.success() { Ok(()) } else { Err(refused()) }
}

/// The repository's worktrees, its main checkout first.
pub fn worktrees(dir: &Path) -> Result<Vec<Worktree>, String> {
    let ran = git(dir, &["worktree", "list", "--porcelain"], READ_DEADLINE)?;
    if !ran.success() {
        return Err(failed(
            &format!("{} is not in a git repository", dir.display()),
            &ran,
        ));
    }
    Ok(parse_porcelain(&String::from_utf8_lossy(&ran.stdout)))
}

/// `git worktree add`: checks out `branch` at `path`, creating the branch from HEAD when it does not
/// exist yet.
pub fn add(main: &Path, path: &Path, branch: &str) -> Result<(), String> {
    let exists = git(
        main,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
        READ_DEADLINE,
    )?
    .success();
    let path = path.to_string_lossy();
    let args: Vec<&str> = if exists {
        vec!["worktree", "add", "--", &path, branch]
    } else {
        vec!["worktree", "add", "-b", branch, "--", &path]
    };
    let ran = git(main, &args, WRITE_DEADLINE)?;
    if ran.success() {
        Ok(())
    } else {
        Err(failed(
            &format!("git could not create the worktree of {branch}"),
            &ran,
        ))
    }
}

/// `git worktree remove` without force: git refuses a tree with changes too.
pub fn remove(main: &Path, path: &Path) -> Result<(), String> {
    let path_text = path.to_string_lossy();
    let ran = git(main, &["worktree", "remove", "--", &path_text], WRITE_DEADLINE)?;
    if ran.success() {
        Ok(())
    } else {
        Err(failed(&format!("git kept the worktree {}", path.display()), &ran))
    }
}

/// The files and directories git ignores in the checkout `dir` (`.env`, `build/`), which `git
/// worktree remove` deletes without a word.
pub fn ignored(dir: &Path) -> Result<Vec<String>, String> {
    let ran = git(
        dir,
        &[
            "status",
            "--porcelain",
            "--ignored=matching",
            "--untracked-files=normal",
        ],
        READ_DEADLINE,
    )?;
    if !ran.success() {
        return Err(failed(
            &format!("cannot read the state of {}", dir.display()),
            &ran,
        ));
    }
    Ok(String::from_utf8_lossy(&ran.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("!! "))
        .map(str::to_string)
        .collect())
}

/// A checkout's branch and whether it has uncommitted changes.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeState {
    /// None when detached.
    pub branch: Option<String>,
    pub dirty: bool,
    /// Changed and untracked paths counted (at least this many when `more`).
    pub changes: usize,
    pub more: bool,
}

impl TreeState {
    pub fn changes_text(&self) -> String {
        let plus = if self.more { "+" } else { "" };
        format!("{}{plus} changed or untracked files", self.changes)
    }
}

/// The state of the checkout `dir` is in; None when it is not in one (or git cannot say in time).
pub fn tree_state(dir: &Path) -> Option<TreeState> {
    let (text, cut) = status_text(dir)?;
    Some(parse_status(&text, cut))
}

/// `git status --porcelain=v2 --branch` of the checkout `dir` is in, and whether it was cut at its
/// bound; None outside a checkout (or when git cannot say in time).
pub fn status_text(dir: &Path) -> Option<(String, bool)> {
    let ran = git(
        dir,
        &["status", "--porcelain=v2", "--branch", "--untracked-files=normal"],
        READ_DEADLINE,
    )
    .ok()?;
    if !(ran.success() || ran.overflowed) {
        return None;
    }
    Some((String::from_utf8_lossy(&ran.stdout).into_owned(), ran.overflowed))
}

/// Reads `git status --porcelain=v2 --branch`; `cut`: the output was cut at its bound.
pub fn parse_status(text: &str, cut: bool) -> TreeState {
    let mut branch = None;
    let mut changes = 0;
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("# branch.head ") {
            branch = (head != "(detached)").then(|| head.to_string());
        } else if !line.starts_with('#') && !line.is_empty() {
            changes += 1;
        }
    }
    TreeState {
        branch,
        dirty: changes > 0 || cut,
        changes,
        more: cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_gives_the_branch_and_counts_changes() {
        let clean = parse_status("# branch.oid abc\n# branch.head feat/x\n", false);
        assert_eq!(clean.branch.as_deref(), Some("feat/x"));
        assert!(!clean.dirty);
        let dirty = parse_status(
            "# branch.head main\n1 .M N... 100644 100644 100644 a b src/x.rs\n? new.txt\n",
            false,
        );
        assert!(dirty.dirty);
        assert_eq!(dirty.changes_text(), "2 changed or untracked files");
        let detached = parse_status("# branch.head (detached)\n", false);
        assert_eq!(detached.branch, None);
        let cut = parse_status("# branch.head main\n", true);
        assert!(cut.dirty && cut.more);
    }
}
