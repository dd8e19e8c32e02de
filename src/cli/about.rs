//! `pokeshell --version`: pokeshell's own version, then the pi it would run and that pi's version,
//! so a bug report says both in one paste.

use std::path::Path;
use std::time::Duration;

use crate::pi::bridge::version::{VersionCheck, probe};

/// How long `pi --version` may take here (node starts in well under a second; a hung pi must not
/// hang `--version`).
pub const PI_VERSION_DEADLINE: Duration = Duration::from_secs(5);

/// The lines `pokeshell --version` prints, with pi found as a session would find it (`--pi`, else
/// `$POKESHELL_PI`, else `pi` on PATH).
pub fn version_text(pi_flag: Option<&Path>, deadline: Duration) -> String {
    let mut out = format!("pokeshell {}\n", env!("CARGO_PKG_VERSION"));
    let line = match crate::pi::locate::find_pi(pi_flag) {
        Err(crate::pi::locate::NotFound::NotOnPath) => {
            "pi: not found (no `pi` on PATH; see --pi)".to_string()
        }
        Err(crate::pi::locate::NotFound::BadPath { path, from }) => {
            format!("pi: {} (from {from}) is not an executable file", path.display())
        }
        Ok(pi) => {
            let version = match probe(&pi, deadline) {
                VersionCheck::Supported(v) => format!("{v}"),
                VersionCheck::TooOld { version, .. } => format!("{version}, too old for the bridge"),
                VersionCheck::Unknown { message } => format!("version unknown: {message}"),
            };
            format!("pi: {} ({version})", pi.display())
        }
    };
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, body: &str) -> std::path::PathBuf {
        let path = dir.join("pi");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn names_the_pi_and_its_version() {
        let dir = tempfile::tempdir().unwrap();
        let pi = script(dir.path(), "echo 1.6.0");
        let text = version_text(Some(&pi), PI_VERSION_DEADLINE);
        assert!(
            text.starts_with(&format!("pokeshell {}\n", env!("CARGO_PKG_VERSION"))),
            "{text}"
        );
        assert!(text.contains(&format!("pi: {} (1.6.0)", pi.display())), "{text}");
    }

    #[test]
    fn a_pi_that_hangs_is_given_up_on_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let pi = script(dir.path(), "exec sleep 30");
        let started = std::time::Instant::now();
        let text = version_text(Some(&pi), Duration::from_millis(200));
        assert!(text.contains("version unknown"), "{text}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "waited for the hung pi"
        );
    }

    #[test]
    fn a_missing_pi_is_said_plainly() {
        let text = version_text(Some(Path::new("/nonexistent/pi")), PI_VERSION_DEADLINE);
        assert!(
            text.contains("/nonexistent/pi (from --pi) is not an executable file"),
            "{text}"
        );
    }
}
