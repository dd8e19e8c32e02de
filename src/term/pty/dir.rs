//! The directory a child starts in: used as asked, or not at all.

use std::path::{Path, PathBuf};

/// A child not started because its working directory cannot be used (gone, not a directory, or
/// leading elsewhere than when the session first started: a link pointed at another tree). portable-pty would quietly start it in `$HOME`
/// instead: a program never runs anywhere but where it was asked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirUnusable(pub String);

impl std::fmt::Display for DirUnusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DirUnusable {}

/// Whether `dir` can be a child's working directory now, and, when `was` is given (where `dir`
/// led when the session first started, links followed), whether it still leads there; why not,
/// in words.
pub fn dir_usable(dir: &Path, was: Option<&Path>) -> Result<(), DirUnusable> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(DirUnusable(format!("{} is not a directory", dir.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(DirUnusable(format!("{} is gone", dir.display())));
        }
        Err(e) => return Err(DirUnusable(format!("{} cannot be used ({e})", dir.display()))),
    }
    let Some(was) = was else {
        return Ok(());
    };
    match leads_elsewhere(dir, was) {
        Ok(None) => Ok(()),
        Ok(Some(now)) => Err(DirUnusable(format!(
            "{} now leads to {}, not to {} where the session started",
            dir.display(),
            now.display(),
            was.display()
        ))),
        Err(e) => Err(DirUnusable(format!("{} cannot be used ({e})", dir.display()))),
    }
}

/// Where `dir` leads now (links followed), when that is not `was`.
pub fn leads_elsewhere(dir: &Path, was: &Path) -> std::io::Result<Option<PathBuf>> {
    let now = std::fs::canonicalize(dir)?;
    Ok((now != was).then_some(now))
}

/// Where `dir` leads now (links followed), as recorded for a session that first starts; `None`
/// when that cannot be said (the start then goes on, and the check after it is the plain one).
pub fn resolve(dir: &Path) -> Option<String> {
    std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.to_str().map(str::to_string))
}

/// Two directory trees and a link that leads to the first, for the tests of a link repointed since
/// a session started (restore and relaunch both refuse it).
#[cfg(test)]
pub struct LinkedTrees {
    _tmp: tempfile::TempDir,
    pub first: PathBuf,
    pub second: PathBuf,
    pub link: PathBuf,
}

#[cfg(test)]
impl LinkedTrees {
    /// Made in a temporary directory, removed when dropped.
    pub fn in_temp_dir() -> Self {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let (first, second, link) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("link"),
        );
        std::fs::create_dir(&first).expect("the first tree");
        std::fs::create_dir(&second).expect("the second tree");
        std::os::unix::fs::symlink(&first, &link).expect("the link");
        Self {
            _tmp: tmp,
            first,
            second,
            link,
        }
    }

    /// Points the link at the second tree.
    pub fn repoint(&self) {
        std::fs::remove_file(&self.link).expect("the old link removed");
        std::os::unix::fs::symlink(&self.second, &self.link).expect("the new link");
    }
}
