//! Private files in pokeshell's state directory (the server's saved list, Web Push's keys and
//! subscriptions), treated as what they are: the saved list decides what a restored server runs,
//! the push keys sign what this user's server sends. The directory must be a plain directory of the user's, private like the runtime
//! directory; the file is read without following a link and only when it is the user's own; the
//! temporary file of a save is always created anew, never through a link planted at its name.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::pi::bridge::runtime_dir::{check_private_dir, current_uid, ensure_private_dir};

/// Far beyond any real list (a session is a few hundred bytes); a bigger file is not read.
pub const MAX_LIST_BYTES: u64 = 16 * 1024 * 1024;

/// Creates the state directory (its parents as needed) private to the user, or checks that the one
/// there is a plain directory of the user's, tightening a loose mode as the runtime directory's is.
pub fn ensure_state_dir(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    }
    ensure_private_dir(dir)
}

/// Checks, changing nothing, that `dir` is fit to hold a list that decides what runs: a plain
/// directory of the user's that nobody else may write to.
pub fn check_state_dir(dir: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(dir)?;
    check_private_dir(dir, &meta, current_uid())?;
    if meta.mode() & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} may be written by other users (mode {:o}); refusing to run what it lists",
                dir.display(),
                meta.mode() & 0o777
            ),
        ));
    }
    Ok(())
}

/// The file's bytes, read only if its directory passes [`check_state_dir`] and it is a regular file
/// of the user's (a link in its place is refused, not followed).
pub fn read_no_follow(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => io::Error::other(format!("{} is a symbolic link", path.display())),
            _ => e,
        })?;
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        check_state_dir(dir)?;
    }
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != current_uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a regular file of this user's", path.display()),
        ));
    }
    if meta.len() > MAX_LIST_BYTES {
        return Err(io::Error::other(format!(
            "{} holds {} bytes, more than the {} MiB a list may have",
            path.display(),
            meta.len(),
            MAX_LIST_BYTES >> 20
        )));
    }
    let mut bytes = Vec::new();
    Read::by_ref(&mut file)
        .take(MAX_LIST_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes `body` to a file created at `path` for this write only (O_EXCL, O_NOFOLLOW, mode 0600),
/// synced. Whatever is at `path` already (a temporary file a crash left, a planted link) is
/// unlinked first: a link is removed, never followed. On failure the file is removed.
pub fn write_new(path: &Path, body: &[u8]) -> io::Result<()> {
    let open = || {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    };
    let mut file = match open() {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            // remove_file unlinks a link itself; a directory in the way fails here and is left.
            fs::remove_file(path)?;
            open()?
        }
        other => other?,
    };
    let written = file.write_all(body).and_then(|()| file.sync_all());
    if written.is_err() {
        let _ = fs::remove_file(path);
    }
    written
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// Issue 21, item 6: a symlink planted at the temporary name must not be followed: its target
    /// stays as it was (not truncated, not overwritten, not made 0600).
    #[test]
    fn a_link_planted_at_the_name_is_replaced_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        fs::set_permissions(&victim, fs::Permissions::from_mode(0o644)).unwrap();
        let name = tmp.path().join("sessions.json.tmp");
        std::os::unix::fs::symlink(&victim, &name).unwrap();
        write_new(&name, b"list").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::metadata(&victim).unwrap().permissions().mode() & 0o777, 0o644);
        let meta = fs::symlink_metadata(&name).unwrap();
        assert!(meta.is_file(), "a file of its own, not the link");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::read_to_string(&name).unwrap(), "list");
    }

    #[test]
    fn a_directory_in_the_way_fails_and_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let name = tmp.path().join("x.tmp");
        fs::create_dir(&name).unwrap();
        assert!(write_new(&name, b"list").is_err());
        assert!(name.is_dir());
    }

    /// Issue 21, item 6: the list is not read through a link, nor from a directory others may write.
    #[test]
    fn a_linked_list_or_a_shared_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        ensure_state_dir(&dir).unwrap();
        let elsewhere = tmp.path().join("elsewhere.json");
        fs::write(&elsewhere, "{}").unwrap();
        let list = dir.join("sessions.json");
        std::os::unix::fs::symlink(&elsewhere, &list).unwrap();
        let err = read_no_follow(&list).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        fs::remove_file(&list).unwrap();
        fs::write(&list, "{}").unwrap();
        assert_eq!(read_no_follow(&list).unwrap(), b"{}");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let err = read_no_follow(&list).unwrap_err();
        assert!(err.to_string().contains("written by other users"), "{err}");
        // The server's save takes the directory back, as the runtime directory's check does.
        ensure_state_dir(&dir).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(read_no_follow(&list).unwrap(), b"{}");
    }

    #[test]
    fn a_state_dir_that_is_a_link_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        fs::create_dir(&real).unwrap();
        let link = tmp.path().join("state");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = ensure_state_dir(&link).unwrap_err();
        assert!(err.to_string().contains("not a plain directory"), "{err}");
    }
}
