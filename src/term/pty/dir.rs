//! The directory a child starts in: used as asked, or not at all.

use std::path::Path;

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
    match why_unusable(dir, was) {
        None => Ok(()),
        Some(why) => Err(DirUnusable(format!("{} {why}", dir.display()))),
    }
}

/// Why `dir` cannot be a child's working directory now (or no longer leads to `was`), said of it
/// without naming it ("is gone"): the one check behind a start and a restore's look, each of which
/// names the directory its own way.
pub fn why_unusable(dir: &Path, was: Option<&Path>) -> Option<String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Some("is not a directory".to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some("is gone".to_string()),
        Err(e) => return Some(format!("cannot be read ({e})")),
    }
    let was = was?;
    match std::fs::canonicalize(dir) {
        Ok(now) if now == was => None,
        Ok(now) => Some(format!(
            "now leads to {}, not to {} where the session started",
            now.display(),
            was.display()
        )),
        Err(e) => Some(format!("cannot be read ({e})")),
    }
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
    pub first: std::path::PathBuf,
    pub second: std::path::PathBuf,
    pub link: std::path::PathBuf,
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
