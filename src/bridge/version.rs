//! Is the installed pi new enough for the bridge? `agent_settled` with `aborted` arrived in pi 1.1;
//! older versions load the extension but cannot be supervised correctly (docs/pi-facts.md, Versions).

use std::ffi::OsStr;
use std::fmt;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Runs `<program> --version` (blocking, at most `timeout`) and judges the answer.
pub fn probe(program: impl AsRef<OsStr>, timeout: Duration) -> VersionCheck {
    let program = program.as_ref();
    let shown = program.to_string_lossy().into_owned();
    let mut child = match Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return VersionCheck::Unknown {
                message: format!("cannot run `{shown} --version`: {e}"),
            };
        }
    };
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return VersionCheck::Unknown {
                    message: format!(
                        "`{shown} --version` did not answer within {} s",
                        timeout.as_secs_f32()
                    ),
                };
            }
            Err(e) => {
                return VersionCheck::Unknown {
                    message: format!("waiting for `{shown} --version`: {e}"),
                };
            }
        }
    };
    let mut output = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut output);
    }
    if !status.success() {
        return VersionCheck::Unknown {
            message: format!("`{shown} --version` failed ({status})"),
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
