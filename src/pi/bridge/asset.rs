//! The bridge extension, embedded in the binary and written where pi can load it with `-e <path>`.
//!
//! The extension is several TypeScript modules that import each other by relative path, so they are
//! written side by side into one directory of the private runtime dir. The directory is named after a
//! fingerprint of the sources: two pokeshell versions running at once never mix each other's modules,
//! and an unchanged set is found as it is.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::runtime_dir;

/// File name of the entry module, the one pi is given.
pub const BRIDGE_FILE_NAME: &str = "pokeshell-bridge.ts";

macro_rules! modules {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../assets/bridge/", $name)))),*]
    };
}

/// Every module of the extension: (file name, source). The entry module comes last, so it is written
/// after everything it imports.
pub const BRIDGE_FILES: &[(&str, &str)] = modules![
    "util.ts",
    "limits.ts",
    "secrets.ts",
    "framing.ts",
    "outbox.ts",
    "link.ts",
    "summaries.ts",
    "context.ts",
    "heartbeat.ts",
    "progress.ts",
    "state.ts",
    "turns.ts",
    "wakeup-bounds.ts",
    "tools.ts",
    "handoff-text.ts",
    "ask-model.ts",
    "command-args.ts",
    "commands.ts",
    "slash-args.ts",
    "slash-commands.ts",
    "handoff.ts",
    "events.ts",
    "pokeshell-bridge.ts",
];

/// Writes the extension into the private runtime dir and returns the entry module's path.
pub fn install_bridge() -> io::Result<PathBuf> {
    install_bridge_in(&runtime_dir::private_runtime_dir()?)
}

/// Writes the extension into a fingerprinted directory inside `dir` (which must be private) and returns
/// the entry module's path. Files already there with the right content are left alone: pi caches the
/// transpiled modules, and unchanged files keep that cache warm.
pub fn install_bridge_in(dir: &Path) -> io::Result<PathBuf> {
    runtime_dir::ensure_private_dir(dir)?;
    let target = dir.join(format!("bridge-{:016x}", fingerprint(BRIDGE_FILES)));
    runtime_dir::ensure_private_dir(&target)?;
    for (name, source) in BRIDGE_FILES {
        write_if_changed(&target, name, source)?;
    }
    Ok(target.join(BRIDGE_FILE_NAME))
}

fn write_if_changed(dir: &Path, name: &str, source: &str) -> io::Result<()> {
    let path = dir.join(name);
    if let Ok(existing) = fs::read(&path)
        && existing == source.as_bytes()
    {
        return Ok(());
    }
    // Write a temporary file and rename it, so a pi starting meanwhile never reads half a file.
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(source.as_bytes()).and_then(|()| f.sync_all()))
        .and_then(|()| fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io::Error::new(
            e.kind(),
            format!("cannot write {}: {e}", path.display()),
        ));
    }
    Ok(())
}

/// FNV-1a over names and sources: stable across builds and Rust versions, which a std hasher is not.
fn fingerprint(files: &[(&str, &str)]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, source) in files {
        for byte in name.bytes().chain([0]).chain(source.bytes()).chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
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
    fn writes_every_module_privately_side_by_side() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("rt");
        let entry = install_bridge_in(&dir).unwrap();
        assert_eq!(entry.file_name().unwrap(), BRIDGE_FILE_NAME);
        let modules = entry.parent().unwrap();
        assert_eq!(modules.parent().unwrap(), dir);
        for (name, source) in BRIDGE_FILES {
            let path = modules.join(name);
            assert_eq!(fs::read_to_string(&path).unwrap(), *source, "{name}");
            assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600, "{name}");
        }
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        assert_eq!(fs::metadata(modules).unwrap().mode() & 0o777, 0o700);
    }

    /// Every relative import of every module names a module that is embedded, so pi never finds one missing.
    #[test]
    fn every_relative_import_is_embedded() {
        let names: Vec<&str> = BRIDGE_FILES.iter().map(|(name, _)| *name).collect();
        let mut checked = 0;
        for (name, source) in BRIDGE_FILES {
            for imported in source.split("from \"./").skip(1) {
                let target = imported.split('"').next().unwrap();
                assert!(
                    names.contains(&target),
                    "{name} imports ./{target}, which is not embedded"
                );
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} relative imports found");
        assert_eq!(BRIDGE_FILES.last().unwrap().0, BRIDGE_FILE_NAME);
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
        assert_eq!(install_bridge_in(tmp.path()).unwrap(), path);
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), old);
    }

    #[test]
    fn a_changed_file_is_rewritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = install_bridge_in(tmp.path()).unwrap();
        let util = path.with_file_name("util.ts");
        fs::write(&util, "stale").unwrap();
        install_bridge_in(tmp.path()).unwrap();
        assert_eq!(fs::read_to_string(&util).unwrap(), BRIDGE_FILES[0].1);
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn the_fingerprint_follows_names_and_contents() {
        let base = fingerprint(&[("a.ts", "x"), ("b.ts", "y")]);
        assert_eq!(base, fingerprint(&[("a.ts", "x"), ("b.ts", "y")]));
        assert_ne!(base, fingerprint(&[("a.ts", "x"), ("b.ts", "z")]));
        assert_ne!(base, fingerprint(&[("a.ts", "xb.ts"), ("", "y")]));
        assert_ne!(base, fingerprint(&[("c.ts", "x"), ("b.ts", "y")]));
    }
}
