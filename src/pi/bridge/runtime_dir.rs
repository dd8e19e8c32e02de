//! The private directory pokeshell keeps its runtime files in (the bridge script, per-run socket dirs).
//! `$XDG_RUNTIME_DIR/pokeshell/` when that variable names an absolute path, else
//! `<temp dir>/pokeshell-<uid>/`. Either way the directory must be ours, not a symlink, and 0700:
//! a shared temp dir lets anyone create the path before us.
//!
//! Each run's socket lives in its own `run-<pid>-<random>` directory ([`RunDir`]), removed when the
//! guard is dropped and, for `std::process::exit` (the panic hook's way out), by an exit handler. A
//! run killed outright (SIGKILL, a lost terminal's signal) leaves its directory behind; the next run
//! removes every such directory of ours whose process is gone.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// The name every run directory starts with, followed by `<pid>-<random>`.
const RUN_PREFIX: &str = "run-";

/// The run directories of this process still to be removed when it exits.
static LIVE_RUN_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static EXIT_HANDLER: Once = Once::new();

/// This run's private directory under `parent`; removed (with what is in it) when dropped.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    /// Removes the run directories left by dead processes, then creates `run-<pid>-<random>`.
    pub fn create(parent: &Path) -> io::Result<RunDir> {
        clean_stale_run_dirs(parent);
        let path = create_unique_dir(parent, &format!("{RUN_PREFIX}{}", std::process::id()))?;
        register_for_exit(&path);
        Ok(RunDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
        if let Ok(mut live) = LIVE_RUN_DIRS.lock() {
            live.retain(|p| p != &self.path);
        }
    }
}

fn register_for_exit(path: &Path) {
    if let Ok(mut live) = LIVE_RUN_DIRS.lock() {
        live.push(path.to_path_buf());
    }
    EXIT_HANDLER.call_once(|| {
        // SAFETY: registers a plain function without arguments; it is called at most once, at exit.
        unsafe { libc::atexit(remove_live_run_dirs) };
    });
}

extern "C" fn remove_live_run_dirs() {
    // try_lock: exit may be called while another thread holds the lock; then the next run cleans up.
    if let Ok(live) = LIVE_RUN_DIRS.try_lock() {
        for path in live.iter() {
            let _ = fs::remove_dir_all(path);
        }
    }
}

/// Removes every `run-<pid>-<random>` directory in `parent` that is ours (a real directory owned by
/// our uid) and whose process no longer exists. Returns how many were removed.
pub fn clean_stale_run_dirs(parent: &Path) -> usize {
    let Ok(entries) = fs::read_dir(parent) else {
        return 0;
    };
    let uid = current_uid();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(run_dir_pid) else {
            continue;
        };
        let path = entry.path();
        let ours = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir() && m.uid() == uid);
        if ours && pid != std::process::id() && process_is_gone(pid) && fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The pid in a run directory's name `run-<pid>-<hex>`, or `None` for any other name.
fn run_dir_pid(name: &str) -> Option<u32> {
    let (pid, suffix) = name.strip_prefix(RUN_PREFIX)?.split_once('-')?;
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    let hex = !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_hexdigit());
    if digits && hex { pid.parse().ok() } else { None }
}

/// True only when the kernel says no such process exists (not for "exists but not ours").
fn process_is_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks whether the process exists; nothing is sent.
    let result = unsafe { libc::kill(pid, 0) };
    result == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

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
    fn run_dir_names_are_recognised_strictly() {
        assert_eq!(run_dir_pid("run-123-0a1b2c"), Some(123));
        assert_eq!(run_dir_pid("run-123-"), None);
        assert_eq!(run_dir_pid("run--abc"), None);
        assert_eq!(run_dir_pid("run-12x-abc"), None);
        assert_eq!(run_dir_pid("run-123-xyz"), None);
        assert_eq!(run_dir_pid("bridge-1.js"), None);
    }

    /// The pid of a process that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_run_dir_is_removed_with_its_socket_when_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::create(tmp.path()).unwrap();
        let path = run.path().to_path_buf();
        assert!(run_dir_pid(&path.file_name().unwrap().to_string_lossy()) == Some(std::process::id()));
        fs::write(path.join("bridge.sock"), b"").unwrap();
        drop(run);
        assert!(!path.exists());
        assert!(LIVE_RUN_DIRS.lock().unwrap().iter().all(|p| p != &path));
    }

    #[test]
    fn stale_run_dirs_of_dead_processes_are_removed_at_start_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path();
        let dead = dead_pid();
        let stale = parent.join(format!("run-{dead}-a1b2c3"));
        fs::create_dir(&stale).unwrap();
        fs::write(stale.join("bridge.sock"), b"").unwrap();
        let mine = parent.join(format!("run-{}-a1b2c3", std::process::id()));
        let alive = parent.join("run-1-a1b2c3");
        let other = parent.join(format!("notrun-{dead}-a1b2c3"));
        let odd = parent.join(format!("run-{dead}-not-hex"));
        for dir in [&mine, &alive, &other, &odd] {
            fs::create_dir(dir).unwrap();
        }
        let target = tmp.path().join("elsewhere");
        fs::create_dir(&target).unwrap();
        let link = parent.join(format!("run-{dead}-d4e5f6"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // Another user's directory is left alone (only checkable where we may give one away).
        let foreign = parent.join(format!("run-{dead}-0f0f0f"));
        fs::create_dir(&foreign).unwrap();
        let given_away = std::os::unix::fs::chown(&foreign, Some(current_uid() + 1), None).is_ok();

        let run = RunDir::create(parent).unwrap();
        assert!(!stale.exists(), "the dead run's directory is removed");
        for kept in [&mine, &alive, &other, &odd, &link, &target] {
            assert!(kept.exists(), "{} is kept", kept.display());
        }
        assert_eq!(foreign.exists(), given_away);
        assert!(run.path().exists());
        assert_eq!(clean_stale_run_dirs(parent), usize::from(!given_away));
    }

    #[test]
    fn a_process_exit_without_drop_still_removes_the_run_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "--nocapture"])
            .arg("pi::bridge::runtime_dir::tests::exit_without_dropping")
            .env("POKESHELL_TEST_RUN_PARENT", tmp.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let created = stdout
            .lines()
            .find_map(|l| l.strip_prefix("created "))
            .unwrap_or_else(|| panic!("the child made no run dir: {stdout}"));
        assert!(Path::new(created).starts_with(tmp.path()));
        assert!(!Path::new(created).exists(), "{created} left behind");
    }

    /// Run by the test above in a child process: creates a run dir and exits as the panic hook does.
    #[test]
    #[ignore = "run in a child process by a_process_exit_without_drop_still_removes_the_run_dir"]
    fn exit_without_dropping() {
        let parent = PathBuf::from(std::env::var_os("POKESHELL_TEST_RUN_PARENT").unwrap());
        let run = RunDir::create(&parent).unwrap();
        println!("created {}", run.path().display());
        std::mem::forget(run);
        std::process::exit(0);
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
