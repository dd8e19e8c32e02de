//! A session's base: the commit its changes are read against, recorded when it starts (and kept in
//! the saved list). For a session in a plain directory, the commit checked out then; for one in a
//! worktree `new --worktree` made, the commit it was made from; for one in a worktree it reused,
//! where that worktree's branch left the main checkout's (their merge base), so that the main
//! checkout's later commits are never in its diff.

use std::path::Path;

use super::{SMALL_OUTPUT, answer, git, toplevel};

pub use pokeshell_core::diff::is_commit_id;

/// The commit checked out in `dir` now; for a repository with no commit yet, its empty tree (every
/// file is then new). `Ok(None)`: `dir` is not in a git checkout.
pub fn checked_out(dir: &Path) -> Result<Option<String>, String> {
    if toplevel(dir).is_err() {
        return Ok(None);
    }
    let head = git(
        dir,
        &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
        None,
        SMALL_OUTPUT,
    )?;
    if let Some(oid) = answer(&head) {
        return Ok(Some(oid));
    }
    let empty = git(dir, &["hash-object", "-t", "tree", "--stdin"], None, SMALL_OUTPUT)?;
    answer(&empty)
        .map(Some)
        .ok_or_else(|| format!("cannot read the commit checked out in {}", dir.display()))
}

/// The base of a session in the worktree at `path` that `new --worktree` just `created` (its commit
/// now) or reused (where its branch left the main checkout's).
pub fn of_worktree(path: &Path, created: bool) -> Result<Option<String>, String> {
    let head = checked_out(path)?;
    if created {
        return Ok(head);
    }
    let Some(head) = head else { return Ok(None) };
    let main = crate::git::worktree::main_checkout(path)?;
    let main_head = git(
        &main,
        &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
        None,
        SMALL_OUTPUT,
    )?;
    let Some(main_head) = answer(&main_head) else {
        return Ok(Some(head));
    };
    let fork = git(path, &["merge-base", &head, &main_head], None, SMALL_OUTPUT)?;
    // No common history: the worktree's own commit is all there is to go by.
    Ok(Some(answer(&fork).unwrap_or(head)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hex_commit_ids_pass() {
        assert!(is_commit_id("1a2b3c4d"));
        assert!(is_commit_id(&"a".repeat(64)));
        assert!(!is_commit_id("abc"));
        assert!(!is_commit_id("--output=/tmp/x"));
        assert!(!is_commit_id("HEAD"));
        assert!(!is_commit_id(&"a".repeat(65)));
    }
}
