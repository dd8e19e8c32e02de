//! The bridge extension, embedded in the binary and written where pi can load it with `-e <path>`.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::runtime_dir;

/// The TypeScript source of the bridge extension.
pub const BRIDGE_SOURCE: &str = include_str!("../../assets/bridge/pokeshell-bridge.ts");

/// File name of the extension inside the runtime dir.
pub const BRIDGE_FILE_NAME: &str = "pokeshell-bridge.ts";

/// Writes the extension into the private runtime dir and returns its path.
pub fn install_bridge() -> io::Result<PathBuf> {
    install_bridge_in(&runtime_dir::private_runtime_dir()?)
}

/// Writes the extension into `dir` (which must be private) unless an identical copy is already there:
/// pi caches the transpiled file, and an unchanged file keeps that cache warm.
pub fn install_bridge_in(dir: &Path) -> io::Result<PathBuf> {
    runtime_dir::ensure_private_dir(dir)?;
    let path = dir.join(BRIDGE_FILE_NAME);
    if let Ok(existing) = fs::read(&path)
        && existing == BRIDGE_SOURCE.as_bytes()
    {
        return Ok(path);
    }
    // Write a temporary file and rename it, so a pi starting meanwhile never reads half a file.
    let tmp = dir.join(format!(".{BRIDGE_FILE_NAME}.{}.tmp", std::process::id()));
    let written = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(BRIDGE_SOURCE.as_bytes()).and_then(|()| f.sync_all()))
        .and_then(|()| fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io::Error::new(
            e.kind(),
            format!("cannot write {}: {e}", path.display()),
        ));
    }
    Ok(path)
}

/// The arguments that make pi load the extension at `path`.
pub fn pi_args(path: &Path) -> [std::ffi::OsString; 2] {
    ["-e".into(), path.as_os_str().to_owned()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn writes_the_embedded_source_privately() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("rt");
        let path = install_bridge_in(&dir).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), BRIDGE_SOURCE);
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn an_identical_file_is_left_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let path = install_bridge_in(tmp.path()).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        install_bridge_in(tmp.path()).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), old);
    }

    #[test]
    fn a_changed_file_is_rewritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = install_bridge_in(tmp.path()).unwrap();
        fs::write(&path, "stale").unwrap();
        install_bridge_in(tmp.path()).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), BRIDGE_SOURCE);
        let leftovers: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }
}
