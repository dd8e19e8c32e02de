//! A mark of a checkout's files that changes whenever they do, for the watch: `git status` alone
//! says a file is modified, not that it was modified again. The status text (HEAD, the index, the
//! list of changed and new paths) and the size and modification time of each path it lists, hashed.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;

/// Paths looked at: a checkout with more changes than this is marked by its first ones (and by the
/// status text, which holds them all up to its bound).
const MOST_PATHS: usize = 2_000;

/// The mark of the checkout at `top` whose `git status --porcelain=v2` printed `status`.
pub fn mark(top: &Path, status: &str) -> u64 {
    let mut h = DefaultHasher::new();
    status.hash(&mut h);
    let mut budget = MOST_PATHS;
    for path in status.lines().filter_map(listed_path) {
        stat_into(&top.join(path), &mut h, &mut budget);
        if budget == 0 {
            break;
        }
    }
    h.finish()
}

/// The path a porcelain v2 line is about (its new path for a rename).
fn listed_path(line: &str) -> Option<&str> {
    let field = |n: usize| line.splitn(n + 1, ' ').nth(n);
    match line.as_bytes().first()? {
        b'?' => line.get(2..),
        b'1' => field(8),
        b'2' => field(9).and_then(|p| p.split('\t').next()),
        b'u' => field(10),
        _ => None,
    }
}

/// Size and modification time of `path`, and of what is under it when it is a directory (an
/// untracked directory is listed once, with its files inside), within `budget` entries.
fn stat_into(path: &Path, h: &mut DefaultHasher, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        "missing".hash(h);
        return;
    };
    meta.len().hash(h);
    meta.modified().ok().hash(h);
    if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        let mut names: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        for p in names {
            p.hash(h);
            stat_into(&p, h, budget);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_lines_give_their_paths() {
        assert_eq!(listed_path("? new dir/"), Some("new dir/"));
        assert_eq!(
            listed_path("1 .M N... 100644 100644 100644 abc abc src/a b.rs"),
            Some("src/a b.rs")
        );
        assert_eq!(
            listed_path("2 R. N... 100644 100644 100644 abc abc R100 new.rs\told.rs"),
            Some("new.rs")
        );
        assert_eq!(listed_path("# branch.head main"), None);
    }

    #[test]
    fn writing_a_listed_file_again_changes_the_mark() {
        let t = tempfile::tempdir().expect("a temp dir");
        std::fs::write(t.path().join("a.txt"), "one").expect("write");
        let status = "# branch.oid abc\n? a.txt\n";
        let first = mark(t.path(), status);
        assert_eq!(mark(t.path(), status), first, "nothing changed");
        std::fs::write(t.path().join("a.txt"), "one and two").expect("write");
        assert_ne!(mark(t.path(), status), first);
    }
}
