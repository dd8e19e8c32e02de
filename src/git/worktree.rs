//! A git worktree per agent: `pokeshell new --worktree BRANCH` creates or reuses a worktree for the
//! branch beside the repository, `ls` shows each session's branch and whether its tree has changes,
//! `pokeshell kill --remove-worktree` removes a clean one. Everything goes through `git` itself
//! (bounded in time and output, see [`crate::term::bounded_command`]); pokeshell never writes into a
//! repository otherwise.
//!
//! The path scheme: the worktree of BRANCH for the repository whose main checkout is `/src/app` is
//! `/src/app-worktrees/BRANCH` (a branch `feat/x` is `/src/app-worktrees/feat/x`).

mod commands;
mod list;
mod mark;
pub mod watch;

use std::path::{Path, PathBuf};

pub use commands::{TreeState, tree_state};
pub use list::{Worktree, parse_porcelain, worktree_path};

/// What `ensure` did.
#[derive(Debug, PartialEq)]
pub struct Ensured {
    pub path: PathBuf,
    /// false: the branch had a worktree already, which is reused.
    pub created: bool,
}

/// The session name for a branch: the branch itself (git already forbids `:` and spaces in it).
pub fn session_name(branch: &str) -> String {
    branch.to_string()
}

/// Creates the worktree of `branch` for the repository `dir` is in, or finds the one it has.
/// Nothing is created when the branch name is refused or the path is taken by something else.
pub fn ensure(dir: &Path, branch: &str) -> Result<Ensured, String> {
    commands::check_branch_name(dir, branch)?;
    let trees = commands::worktrees(dir)?;
    if let Some(t) = trees.iter().find(|t| t.branch.as_deref() == Some(branch)) {
        if !t.path.is_dir() {
            return Err(format!(
                "git lists a worktree of {branch} at {}, which is missing; `git worktree prune` forgets it",
                t.path.display()
            ));
        }
        return Ok(Ensured {
            path: t.path.clone(),
            created: false,
        });
    }
    let main = trees.first().filter(|t| !t.bare).ok_or_else(|| {
        format!(
            "{} is in a bare repository: no checkout to put worktrees beside",
            dir.display()
        )
    })?;
    let path = worktree_path(&main.path, branch)
        .ok_or_else(|| format!("cannot place a worktree beside {}", main.path.display()))?;
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(format!(
            "{} exists and is not a worktree of {branch}; nothing was created",
            path.display()
        ));
    }
    commands::add(&main.path, &path, branch)?;
    Ok(Ensured { path, created: true })
}

/// The main checkout of the repository `dir` is in.
pub fn main_checkout(dir: &Path) -> Result<PathBuf, String> {
    let trees = commands::worktrees(dir)?;
    trees
        .into_iter()
        .next()
        .filter(|t| !t.bare)
        .map(|t| t.path)
        .ok_or_else(|| {
            format!(
                "{} is in a bare repository: it has no main checkout",
                dir.display()
            )
        })
}

/// The repository's main checkout and the worktree at `dir`, when `dir` is a linked worktree with
/// no uncommitted changes; else why it may not be removed.
pub fn removable(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let trees = commands::worktrees(dir)?;
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let same = |p: &Path| std::fs::canonicalize(p).is_ok_and(|c| c == real);
    let Some(pos) = trees.iter().position(|t| same(&t.path)) else {
        return Err(format!(
            "{} is not a git worktree; nothing removed",
            dir.display()
        ));
    };
    if pos == 0 {
        return Err(format!(
            "{} is the repository's main checkout, not a worktree; nothing removed",
            dir.display()
        ));
    }
    // Only a worktree pokeshell would have made (beside the repository, at its branch's place): one
    // made by hand elsewhere and reused because its branch matched is the user's to remove.
    let tree = &trees[pos];
    let ours = tree
        .branch
        .as_deref()
        .and_then(|b| worktree_path(&trees[0].path, b))
        .is_some_and(|p| same(&p));
    if !ours {
        return Err(format!(
            "{} is not where pokeshell puts the worktrees it makes (beside the repository, in {}-worktrees): \
             it was made some other way and is kept; `git worktree remove` it yourself",
            dir.display(),
            trees[0].path.display()
        ));
    }
    let ignored = commands::ignored(dir)?;
    if !ignored.is_empty() {
        const SHOWN: usize = 5;
        let mut list = ignored.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
        if ignored.len() > SHOWN {
            list.push_str(&format!(" and {} more", ignored.len() - SHOWN));
        }
        return Err(format!(
            "the worktree {} holds files git ignores, which removing it would delete: {}; it is \
             kept. Move what you need out of it, then `git worktree remove --force` it yourself",
            dir.display(),
            pokeshell_core::safe_text::escape(&list)
        ));
    }
    match tree_state(dir) {
        Some(TreeState { dirty: false, .. }) => Ok((trees[0].path.clone(), trees[pos].path.clone())),
        Some(state) => Err(format!(
            "the worktree {} has uncommitted changes ({}); it is kept. Commit or stash them, then \
             remove it again (or `git worktree remove --force` it yourself)",
            dir.display(),
            state.changes_text()
        )),
        None => Err(format!("cannot read the state of {}; it is kept", dir.display())),
    }
}

/// Removes the worktree at `dir` when [`removable`] allows it.
pub fn remove(dir: &Path) -> Result<String, String> {
    let (main, path) = removable(dir)?;
    commands::remove(&main, &path)?;
    Ok(format!("removed the worktree {}", path.display()))
}

/// Fills each listed session's branch and tree state from its directory, all at once (each `git
/// status` is bounded, see [`git`]).
pub fn fill_trees(list: &mut [pokeshell_core::wire::Listing]) {
    let handles: Vec<_> = list
        .iter()
        .map(|l| {
            let dir = PathBuf::from(&l.dir);
            std::thread::spawn(move || tree_state(&dir))
        })
        .collect();
    for (l, h) in list.iter_mut().zip(handles) {
        if let Ok(Some(state)) = h.join() {
            l.branch = state.branch;
            l.dirty = Some(state.dirty);
        }
    }
}
