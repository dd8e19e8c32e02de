//! Finding the pi executable.

use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum NotFound {
    /// An explicit path (flag or environment) that does not point at an executable file.
    BadPath { path: PathBuf, from: &'static str },
    /// Nothing called `pi` on PATH.
    NotOnPath,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotFound::BadPath { path, from } => writeln!(
                f,
                "pokeshell: {} (from {from}) is not an executable file.",
                path.display()
            )?,
            NotFound::NotOnPath => writeln!(f, "pokeshell: cannot find pi: there is no `pi` on your PATH.")?,
        }
        writeln!(f, "Install pi (it needs Node.js 22.19 or newer):")?;
        writeln!(f, "    npm install -g @earendil-works/pi-coding-agent")?;
        write!(
            f,
            "or tell pokeshell where it is: pokeshell --pi /path/to/pi  (or set POKESHELL_PI)"
        )
    }
}

/// A regular file (after symlinks) with an execute bit.
pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn checked(path: PathBuf, from: &'static str) -> Result<PathBuf, NotFound> {
    if is_executable(&path) {
        Ok(path)
    } else {
        Err(NotFound::BadPath { path, from })
    }
}

/// `--pi PATH`, else `$POKESHELL_PI`, else `pi` on PATH.
pub fn find_pi(flag: Option<&Path>) -> Result<PathBuf, NotFound> {
    if let Some(p) = flag {
        return checked(p.to_path_buf(), "--pi");
    }
    if let Some(p) = std::env::var_os("POKESHELL_PI").filter(|v| !v.is_empty()) {
        return checked(PathBuf::from(p), "POKESHELL_PI");
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("pi"))
        .find(|p| is_executable(p))
        .ok_or(NotFound::NotOnPath)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_path_must_be_executable() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pi");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        assert!(matches!(find_pi(Some(&f)), Err(NotFound::BadPath { .. })));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_pi(Some(&f)).unwrap(), f);
        let msg = NotFound::NotOnPath.to_string();
        assert!(
            msg.contains("npm install -g @earendil-works/pi-coding-agent"),
            "{msg}"
        );
    }
}
