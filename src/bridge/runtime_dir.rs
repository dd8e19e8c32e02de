//! The private directory pokeshell keeps its runtime files in (the bridge script, per-run socket dirs).
//! `$XDG_RUNTIME_DIR/pokeshell/` when that variable names an absolute path, else
//! `<temp dir>/pokeshell-<uid>/`. Either way the directory must be ours, not a symlink, and 0700:
//! a shared temp dir lets anyone create the path before us.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Returns the private runtime directory, creating it when missing.
pub fn private_runtime_dir() -> io::Result<PathBuf> {
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(base) if base.is_absolute() && base.is_dir() => base.join("pokeshell"),
        _ => std::env::temp_dir().join(format!("pokeshell-{}", current_uid())),
    };
    ensure_private_dir(&dir)?;
    Ok(dir)
}

/// The effective uid of this process.
pub fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates `dir` with mode 0700, or checks that an existing `dir` is a real directory owned by us
/// (tightening its mode to 0700 when it is looser).
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return fs::set_permissions(dir, fs::Permissions::from_mode(0o700)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(with_path(e, "cannot create", dir)),
    }
    let meta = fs::symlink_metadata(dir).map_err(|e| with_path(e, "cannot inspect", dir))?;
    check_private_dir(dir, &meta, current_uid())?;
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| with_path(e, "cannot restrict the mode of", dir))?;
    }
    Ok(())
}

/// Refuses a path that is not a plain directory or that belongs to another user.
pub fn check_private_dir(dir: &Path, meta: &fs::Metadata, uid: u32) -> io::Result<()> {
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a plain directory; refusing to use it for pokeshell's private files",
            dir.display()
        )));
    }
    if meta.uid() != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to uid {}, not to us (uid {uid}); refusing to use it for pokeshell's private files",
                dir.display(),
                meta.uid()
            ),
        ));
    }
    Ok(())
}

/// Creates a new private directory `<parent>/<prefix>-<random>` that did not exist before.
pub fn create_unique_dir(parent: &Path, prefix: &str) -> io::Result<PathBuf> {
    for _ in 0..16 {
        let suffix = super::auth::random_hex(6)?;
        let dir = parent.join(format!("{prefix}-{suffix}"));
        match DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))?;
                return Ok(dir);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(with_path(e, "cannot create", &dir)),
        }
    }
    Err(io::Error::other(format!(
        "could not create a fresh directory in {}",
        parent.display()
    )))
}

fn with_path(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_missing_dir_with_mode_0700() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("p");
        ensure_private_dir(&dir).unwrap();
        let meta = fs::symlink_metadata(&dir).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.mode() & 0o777, 0o700);
    }

    #[test]
    fn tightens_a_loose_dir_of_ours() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("p");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        ensure_private_dir(&dir).unwrap();
        assert_eq!(fs::symlink_metadata(&dir).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn refuses_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("target");
        fs::create_dir(&target).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = ensure_private_dir(&link).unwrap_err();
        assert!(err.to_string().contains("not a plain directory"), "{err}");
    }

    #[test]
    fn refuses_a_regular_file() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        fs::write(&file, b"x").unwrap();
        assert!(ensure_private_dir(&file).is_err());
    }

    #[test]
    fn refuses_a_dir_of_another_user() {
        let tmp = tempfile::tempdir().unwrap();
        let meta = fs::symlink_metadata(tmp.path()).unwrap();
        let other = meta.uid().wrapping_add(1);
        let err = check_private_dir(tmp.path(), &meta, other).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert!(check_private_dir(tmp.path(), &meta, meta.uid()).is_ok());
    }

    #[test]
    fn unique_dirs_differ_and_are_private() {
        let tmp = tempfile::tempdir().unwrap();
        let a = create_unique_dir(tmp.path(), "run").unwrap();
        let b = create_unique_dir(tmp.path(), "run").unwrap();
        assert_ne!(a, b);
        assert_eq!(fs::symlink_metadata(&a).unwrap().mode() & 0o777, 0o700);
    }
}
