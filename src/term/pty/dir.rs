//! The directory a child starts in: used as asked, or not at all.

/// A child not started because its working directory cannot be used (gone, not a directory, or,
/// for pi, not the one its conversation ran in). portable-pty would quietly start it in `$HOME`
/// instead: a program never runs anywhere but where it was asked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirUnusable(pub String);

impl std::fmt::Display for DirUnusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DirUnusable {}

/// Whether `dir` can be a child's working directory now; why not, in words.
pub fn dir_usable(dir: &std::path::Path) -> Result<(), DirUnusable> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(DirUnusable(format!("{} is not a directory", dir.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(DirUnusable(format!("{} is gone", dir.display())))
        }
        Err(e) => Err(DirUnusable(format!("{} cannot be used ({e})", dir.display()))),
    }
}
