//! What the installer needs from the machine: the PATH it searches and hands to npm, and the
//! platform. Kept in a value rather than read from the process so tests can use a fake PATH without
//! changing the environment other tests run in.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::term::bounded_run;

use super::error::InstallError;
use super::version::{Version, parse_node_version};
pub(crate) use crate::pi::locate::is_executable;

/// How many lines of npm's output an error keeps.
const TAIL_LINES: usize = 20;

/// How long `node --version` or `pi --version` may take; pi's takes about a second on a slow machine.
pub(crate) const VERSION_DEADLINE: Duration = Duration::from_secs(60);

/// npm's install of pi: slow networks take minutes; its quiet flags keep its output short.
const NPM_LIMITS: bounded_run::Limits = bounded_run::Limits {
    deadline: Duration::from_secs(30 * 60),
    cap: 4 * 1024 * 1024,
    linger: bounded_run::LINGER,
};

pub(crate) struct Host {
    pub path: OsString,
    pub os: String,
    pub arch: String,
}

impl Host {
    pub fn current() -> Self {
        Host {
            path: std::env::var_os("PATH").unwrap_or_default(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
        }
    }

    /// The first executable file called `name` in the PATH directories.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        std::env::split_paths(&self.path)
            .filter(|dir| !dir.as_os_str().is_empty())
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    }

    /// This host's PATH with `dir` searched first.
    pub fn path_with_first(&self, dir: &Path) -> OsString {
        let mut dirs = vec![dir.to_path_buf()];
        dirs.extend(std::env::split_paths(&self.path));
        // Joining fails only on a directory containing ':', which cannot be on a PATH anyway.
        std::env::join_paths(dirs).unwrap_or_else(|_| self.path.clone())
    }

    /// What `node --version` says, or why it could not be read.
    pub fn node_version(&self, node: &Path) -> Result<Version, String> {
        let mut cmd = Command::new(node);
        cmd.arg("--version").env("PATH", &self.path);
        let out = output_within(&mut cmd, VERSION_DEADLINE).map_err(|e| format!("could not run it: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!("`node --version` failed ({})", out.status));
        }
        parse_node_version(&text).ok_or_else(|| format!("`node --version` printed {:?}", text.trim()))
    }

    /// Runs npm with the quiet flags pokeshell always uses; on failure the error carries the end of
    /// npm's output.
    pub fn run_npm(&self, npm: &Path, path: &OsStr, args: &[&OsStr], what: &str) -> Result<(), InstallError> {
        let mut cmd = Command::new(npm);
        cmd.args(args)
            .args(["--no-audit", "--no-fund", "--loglevel=error"])
            .env("PATH", path)
            .stdin(Stdio::null());
        let out = match bounded_run::run(&mut cmd, NPM_LIMITS) {
            Ok(out) => out,
            Err(bounded_run::RunError::Start(error)) => {
                return Err(InstallError::NpmStart {
                    npm: npm.to_path_buf(),
                    error,
                });
            }
            Err(e) => {
                return Err(InstallError::NpmFailed {
                    what: what.to_string(),
                    status: e.to_string(),
                    output_tail: String::new(),
                });
            }
        };
        if out.status.success() {
            return Ok(());
        }
        let mut all = String::from_utf8_lossy(&out.stdout).into_owned();
        if !all.is_empty() && !all.ends_with('\n') {
            all.push('\n');
        }
        all.push_str(&String::from_utf8_lossy(&out.stderr));
        Err(InstallError::NpmFailed {
            what: what.to_string(),
            status: out.status.to_string(),
            output_tail: tail(&all, TAIL_LINES),
        })
    }
}

/// Runs `cmd` (stdin closed) and collects its output, within the bounds of
/// [`crate::term::bounded_run`]: a version check must not hang the install or fill its memory.
pub(crate) fn output_within(cmd: &mut Command, limit: Duration) -> std::io::Result<Output> {
    bounded(cmd, bounded_run::Limits::question(limit))
}

fn bounded(cmd: &mut Command, limits: bounded_run::Limits) -> std::io::Result<Output> {
    match bounded_run::run(cmd, limits) {
        Ok(out) => Ok(Output {
            status: out.status,
            stdout: out.stdout,
            stderr: out.stderr,
        }),
        Err(bounded_run::RunError::Start(e)) => Err(e),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// The last `n` non-blank lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_non_blank_lines() {
        let text = "a\n\nb\nc\n  \nd\n";
        assert_eq!(tail(text, 2), "c\nd");
        assert_eq!(tail(text, 10), "a\nb\nc\nd");
        assert_eq!(tail("", 3), "");
    }

    #[test]
    fn which_skips_directories_and_non_executables() {
        use std::os::unix::fs::PermissionsExt;
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::create_dir(a.path().join("npm")).unwrap();
        std::fs::write(b.path().join("node"), "").unwrap();
        std::fs::write(b.path().join("npm"), "").unwrap();
        std::fs::set_permissions(b.path().join("npm"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let host = Host {
            path: std::env::join_paths([a.path(), b.path()]).unwrap(),
            os: "linux".into(),
            arch: "x86_64".into(),
        };
        assert_eq!(host.which("npm"), Some(b.path().join("npm")));
        assert_eq!(host.which("node"), None);
        let first = host.path_with_first(Path::new("/x"));
        assert_eq!(std::env::split_paths(&first).next(), Some(PathBuf::from("/x")));
    }
}
