//! Is the installed pi new enough for the bridge? `agent_settled` with `aborted` arrived in pi 1.1;
//! older versions load the extension but cannot be supervised correctly (docs/pi-facts.md, Versions).

use std::ffi::OsStr;
use std::fmt;
use std::process::Command;
use std::time::Duration;

use crate::term::bounded_run;

/// The oldest pi the bridge supports.
pub const MIN_PI_VERSION: PiVersion = PiVersion {
    major: 1,
    minor: 1,
    patch: 0,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PiVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl fmt::Display for PiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// What `pi --version` told us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionCheck {
    /// New enough.
    Supported(PiVersion),
    /// Older than [`MIN_PI_VERSION`]; `message` is what the app shows.
    TooOld { version: PiVersion, message: String },
    /// pi did not run or printed something else; `message` says what happened.
    Unknown { message: String },
}

impl VersionCheck {
    /// The text to show the user, if any.
    pub fn message(&self) -> Option<&str> {
        match self {
            VersionCheck::Supported(_) => None,
            VersionCheck::TooOld { message, .. } | VersionCheck::Unknown { message } => Some(message),
        }
    }
}

/// Finds the first `X.Y[.Z]` in the output of `pi --version` ("1.6.0", "v1.6.0", "pi 1.6.0-beta.1").
pub fn parse_version(output: &str) -> Option<PiVersion> {
    output
        .split(|c: char| c.is_whitespace() || c == ',')
        .find_map(|word| {
            let word = word.trim_start_matches(['v', 'V']);
            let core = word.split(['-', '+']).next()?;
            let mut parts = core.split('.');
            let major = parts.next()?.parse().ok()?;
            let minor = parts.next()?.parse().ok()?;
            let patch = match parts.next() {
                Some(p) => p.parse().ok()?,
                None => 0,
            };
            if parts.next().is_some() {
                return None;
            }
            Some(PiVersion { major, minor, patch })
        })
}

/// Judges a parsed version.
pub fn judge(version: PiVersion) -> VersionCheck {
    if version >= MIN_PI_VERSION {
        VersionCheck::Supported(version)
    } else {
        VersionCheck::TooOld {
            version,
            message: format!(
                "pi {version} is too old for pokeshell's bridge (it needs {MIN_PI_VERSION} or newer): \
                 pi runs, but without supervision. Update pi to get it back."
            ),
        }
    }
}

/// [`probe`], once per program for the whole process: a server starting ten sessions of one pi
/// asks it once (another `node` start per session costs a core for a while).
pub fn probe_once(program: &std::path::Path, timeout: Duration) -> VersionCheck {
    static SEEN: std::sync::Mutex<Vec<(std::path::PathBuf, VersionCheck)>> =
        std::sync::Mutex::new(Vec::new());
    // Held while the program runs: sessions starting together wait for the one answer.
    let mut seen = SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, check)) = seen.iter().find(|(k, _)| k == program) {
        return check.clone();
    }
    let check = probe(program, timeout);
    // A check that could not run (a timeout under load, say) is tried again next time.
    if !matches!(check, VersionCheck::Unknown { .. }) {
        seen.push((program.to_path_buf(), check.clone()));
    }
    check
}

/// Runs `<program> --version` (blocking, at most `timeout`, its output capped, its process group
/// killed when it overstays: [`crate::term::bounded_run`]) and judges the answer.
pub fn probe(program: impl AsRef<OsStr>, timeout: Duration) -> VersionCheck {
    let program = program.as_ref();
    let shown = program.to_string_lossy().into_owned();
    let mut cmd = Command::new(program);
    cmd.arg("--version");
    let out = match bounded_run::run(&mut cmd, bounded_run::Limits::question(timeout)) {
        Ok(out) => out,
        Err(e @ bounded_run::RunError::Start(_)) => {
            return VersionCheck::Unknown {
                message: format!("cannot run `{shown} --version`: {e}"),
            };
        }
        Err(bounded_run::RunError::Deadline(_)) => {
            return VersionCheck::Unknown {
                message: format!(
                    "`{shown} --version` did not answer within {} s",
                    timeout.as_secs_f32()
                ),
            };
        }
        Err(e) => {
            return VersionCheck::Unknown {
                message: format!("`{shown} --version` gave no usable answer: {e}"),
            };
        }
    };
    let output = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return VersionCheck::Unknown {
            message: format!("`{shown} --version` failed ({})", out.status),
        };
    }
    match parse_version(&output) {
        Some(version) => judge(version),
        None => VersionCheck::Unknown {
            message: format!("`{shown} --version` printed no version: {:?}", output.trim()),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn v(major: u32, minor: u32, patch: u32) -> PiVersion {
        PiVersion { major, minor, patch }
    }

    #[test]
    fn parses_the_usual_shapes() {
        assert_eq!(parse_version("1.6.0\n"), Some(v(1, 6, 0)));
        assert_eq!(parse_version("v0.73.1"), Some(v(0, 73, 1)));
        assert_eq!(parse_version("pi 1.10.2-beta.1"), Some(v(1, 10, 2)));
        assert_eq!(parse_version("2.0"), Some(v(2, 0, 0)));
        assert_eq!(parse_version("pi version unknown"), None);
        assert_eq!(parse_version(""), None);
        assert_eq!(parse_version("1.2.3.4"), None);
    }

    #[test]
    fn versions_older_than_1_1_are_too_old() {
        assert!(matches!(judge(v(1, 6, 0)), VersionCheck::Supported(_)));
        assert!(matches!(judge(v(1, 1, 0)), VersionCheck::Supported(_)));
        let old = judge(v(0, 80, 4));
        assert!(matches!(old, VersionCheck::TooOld { .. }));
        let message = old.message().unwrap();
        assert!(
            message.contains("0.80.4") && message.contains("1.1.0"),
            "{message}"
        );
        assert!(matches!(judge(v(1, 0, 9)), VersionCheck::TooOld { .. }));
    }

    /// A script written just now can be briefly "busy" when another test thread forks meanwhile.
    fn probe_retrying(program: &std::path::Path, timeout: Duration) -> VersionCheck {
        for _ in 0..20 {
            let check = probe(program, timeout);
            if !check.message().is_some_and(|m| m.contains("busy")) {
                return check;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        probe(program, timeout)
    }

    #[test]
    fn probe_reports_a_missing_program() {
        let check = probe("/nonexistent/pi", Duration::from_secs(1));
        assert!(matches!(check, VersionCheck::Unknown { .. }));
        assert!(check.message().unwrap().contains("cannot run"));
    }

    #[test]
    fn probe_reads_a_fake_pi() {
        let tmp = tempfile::tempdir().unwrap();
        let fake = tmp.path().join("pi");
        std::fs::write(&fake, "#!/bin/sh\necho 0.73.1\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let check = probe_retrying(&fake, Duration::from_secs(5));
        assert_eq!(check, judge(v(0, 73, 1)));
    }

    /// Issue 21, item 1: a pi wrapper whose `--version` leaves `yes` writing into the pipe. The
    /// check ends at once with a clear message (the old read grew without bound and never ended).
    #[test]
    fn probe_stops_a_pi_that_leaves_a_child_writing() {
        let tmp = tempfile::tempdir().unwrap();
        let fake = tmp.path().join("pi");
        std::fs::write(&fake, "#!/bin/sh\necho 1.6.0\nyes &\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(probe_retrying(&fake, Duration::from_secs(10)));
        });
        let check = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("the check returns within 5 s");
        let message = check.message().expect("not a supported version").to_string();
        assert!(message.contains("more than 64 KiB"), "{message}");
    }

    /// Issue 21, item 1: the same with a child that keeps the pipe open and writes nothing.
    #[test]
    fn probe_stops_a_pi_that_leaves_the_pipe_open() {
        let tmp = tempfile::tempdir().unwrap();
        let fake = tmp.path().join("pi");
        std::fs::write(&fake, "#!/bin/sh\necho 1.6.0\nsleep 60 &\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(probe_retrying(&fake, Duration::from_secs(30)));
        });
        let check = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("the check returns within 5 s");
        let message = check.message().expect("not a supported version").to_string();
        assert!(message.contains("held its output open"), "{message}");
    }

    #[test]
    fn probe_gives_up_on_a_hanging_pi() {
        let tmp = tempfile::tempdir().unwrap();
        let fake = tmp.path().join("pi");
        std::fs::write(&fake, "#!/bin/sh\nexec sleep 30\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let started = Instant::now();
        let check = probe_retrying(&fake, Duration::from_millis(200));
        assert!(check.message().unwrap().contains("did not answer"), "{check:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
