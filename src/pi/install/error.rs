//! Why installing pi failed, and what the user can do about it.

use std::fmt;
use std::path::{Path, PathBuf};

use super::version::Version;
use super::{INSTALL_COMMAND, NODE_MIN, PI_VERSION};

#[derive(Debug)]
pub enum InstallError {
    /// No `npm` on PATH.
    NpmMissing,
    /// The system node is missing or too old, and there is no Node.js package for this platform.
    UnsupportedPlatform {
        system_node: Option<Version>,
        os: String,
        arch: String,
    },
    /// A file or directory could not be created, written, renamed or removed.
    Io {
        action: String,
        path: PathBuf,
        error: std::io::Error,
    },
    /// npm could not be started at all.
    NpmStart { npm: PathBuf, error: std::io::Error },
    /// npm ran and failed.
    NpmFailed {
        what: String,
        status: String,
        output_tail: String,
    },
    /// npm said it succeeded, but a file it should have made is not there.
    NotCreated { what: String, path: PathBuf },
    /// The Node.js that npm installed does not run or is older than needed.
    BadNode { path: PathBuf, detail: String },
    /// The launcher does not start pi 1.6.0.
    PiCheckFailed {
        launcher: PathBuf,
        pi_dir: PathBuf,
        detail: String,
    },
}

impl InstallError {
    /// For `map_err`: the I/O error of `action` on `path`.
    pub fn io(action: &str, path: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
        let (action, path) = (action.to_string(), path.to_path_buf());
        move |error| InstallError::Io { action, path, error }
    }
}

impl fmt::Display for InstallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstallError::NpmMissing => write!(
                f,
                "cannot install pi: npm is not on your PATH.\n\
                 pokeshell installs pi through npm. Install Node.js and npm with your system's \
                 package manager (or from nodejs.org), then run `{INSTALL_COMMAND}` again."
            ),
            InstallError::UnsupportedPlatform {
                system_node,
                os,
                arch,
            } => {
                let found = match system_node {
                    Some(v) => format!("your Node.js is {v}"),
                    None => "there is no working Node.js on your PATH".to_string(),
                };
                write!(
                    f,
                    "cannot install pi: it needs Node.js {NODE_MIN} or newer and {found}.\n\
                     pokeshell can fetch Node.js by itself only on Linux (x64 or arm64), and this \
                     machine is {os} {arch}. Install Node.js {NODE_MIN} or newer by hand (your \
                     package manager, nodejs.org or a version manager such as nvm), check that \
                     `node --version` shows it, then run `{INSTALL_COMMAND}` again."
                )
            }
            InstallError::Io { action, path, error } => write!(
                f,
                "cannot install pi: could not {action} {}: {error}.\n\
                 Check that this directory is writable and the disk is not full (or point \
                 XDG_CACHE_HOME at another place), then run `{INSTALL_COMMAND}` again.",
                path.display()
            ),
            InstallError::NpmStart { npm, error } => write!(
                f,
                "cannot install pi: could not start npm ({}): {error}.\n\
                 Check that `npm --version` works in your shell, then run `{INSTALL_COMMAND}` again.",
                npm.display()
            ),
            InstallError::NpmFailed {
                what,
                status,
                output_tail,
            } => {
                write!(f, "cannot install pi: npm failed to {what} ({status}).")?;
                if output_tail.trim().is_empty() {
                    write!(f, "\nnpm printed nothing.")?;
                } else {
                    write!(f, "\nThe end of npm's output:")?;
                    for line in output_tail.lines() {
                        write!(f, "\n    {line}")?;
                    }
                }
                write!(
                    f,
                    "\nCheck your network connection and npm's settings (`npm config list`: proxy, \
                     registry), then run `{INSTALL_COMMAND}` again."
                )
            }
            InstallError::NotCreated { what, path } => write!(
                f,
                "cannot install pi: npm reported success, but {what} is missing at {}.\n\
                 Remove that directory and run `{INSTALL_COMMAND}` again.",
                path.display()
            ),
            InstallError::BadNode { path, detail } => write!(
                f,
                "cannot install pi: the Node.js installed at {} is not usable ({detail}); \
                 pi needs {NODE_MIN} or newer.\n\
                 Remove that directory and run `{INSTALL_COMMAND}` again, or install Node.js \
                 {NODE_MIN} or newer by hand.",
                path.display()
            ),
            InstallError::PiCheckFailed {
                launcher,
                pi_dir,
                detail,
            } => write!(
                f,
                "cannot install pi: `{} --version` did not report {PI_VERSION}: {detail}.\n\
                 Remove {} and run `{INSTALL_COMMAND}` again.",
                launcher.display(),
                pi_dir.display()
            ),
        }
    }
}

impl std::error::Error for InstallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InstallError::Io { error, .. } | InstallError::NpmStart { error, .. } => Some(error),
            _ => None,
        }
    }
}
