//! Pure parts of the worktree handling: `git worktree list --porcelain` read, and where a branch's
//! worktree goes.

use std::path::{Path, PathBuf};

/// One worktree as git lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Worktree {
    pub path: PathBuf,
    /// The branch checked out (without `refs/heads/`); None when detached.
    pub branch: Option<String>,
    pub bare: bool,
}

/// Reads `git worktree list --porcelain`: records separated by blank lines, the main one first.
pub fn parse_porcelain(text: &str) -> Vec<Worktree> {
    let mut out = Vec::new();
    let mut cur: Option<Worktree> = None;
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("worktree ") {
            out.extend(cur.take());
            cur = Some(Worktree {
                path: PathBuf::from(path),
                branch: None,
                bare: false,
            });
        } else if let Some(c) = cur.as_mut() {
            if let Some(b) = line.strip_prefix("branch ") {
                c.branch = Some(b.strip_prefix("refs/heads/").unwrap_or(b).to_string());
            } else if line == "bare" {
                c.bare = true;
            }
        }
    }
    out.extend(cur);
    out
}

/// `<parent>/<repo>-worktrees/<branch>` for the repository whose main checkout is `main`.
pub fn worktree_path(main: &Path, branch: &str) -> Option<PathBuf> {
    let name = main.file_name()?.to_string_lossy().into_owned();
    Some(main.parent()?.join(format!("{name}-worktrees")).join(branch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_gives_paths_branches_and_detached_trees() {
        let text = "worktree /src/app\nHEAD 1111\nbranch refs/heads/main\n\n\
                    worktree /src/app-worktrees/feat/x\nHEAD 2222\nbranch refs/heads/feat/x\n\n\
                    worktree /tmp/look\nHEAD 3333\ndetached\n\n";
        let trees = parse_porcelain(text);
        assert_eq!(trees.len(), 3);
        assert_eq!(trees[0].path, PathBuf::from("/src/app"));
        assert_eq!(trees[0].branch.as_deref(), Some("main"));
        assert_eq!(trees[1].branch.as_deref(), Some("feat/x"));
        assert_eq!(trees[2].branch, None);
        assert!(!trees[2].bare);
        let bare = parse_porcelain("worktree /srv/repo.git\nbare\n");
        assert!(bare[0].bare);
        assert!(parse_porcelain("").is_empty());
    }

    #[test]
    fn a_branch_worktree_sits_beside_the_repository() {
        assert_eq!(
            worktree_path(Path::new("/src/app"), "feat/x"),
            Some(PathBuf::from("/src/app-worktrees/feat/x"))
        );
        assert_eq!(worktree_path(Path::new("/"), "b"), None);
    }
}
