//! The stand-in `node` and `npm`: shell scripts on a private PATH, the fake npm logging each call.

use super::super::*;
use std::os::unix::fs::PermissionsExt;

/// What the fake npm does.
#[derive(Clone, Copy)]
pub(super) enum Npm {
    /// Lays out the package; its node reports `node_version`, its cli.js reports `pi_version`.
    Works {
        node_version: &'static str,
        pi_version: &'static str,
    },
    /// Prints 30 numbered error lines and exits 1.
    Fails,
    /// Exits 0 without creating anything.
    CreatesNothing,
}

pub(super) const GOOD_NPM: Npm = Npm::Works {
    node_version: "v22.23.5",
    pi_version: "1.6.0",
};

pub(super) struct Fake {
    pub(super) _dir: tempfile::TempDir,
    pub(super) root: PathBuf,
    pub(super) bin: PathBuf,
    pub(super) cache: PathBuf,
    pub(super) log: PathBuf,
    pub(super) host: Host,
}

pub(super) fn write_exe(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A node stand-in: answers `--version`, and otherwise runs its first argument as a shell script, the
/// way node runs cli.js.
pub(super) fn fake_node_script(version: &str) -> String {
    format!(
        "#!/bin/sh\n\
         if [ \"$1\" = --version ]; then echo {version}; exit 0; fi\n\
         script=\"$1\"; shift\n\
         exec sh \"$script\" \"$@\"\n"
    )
}

impl Fake {
    /// `system_node`: the version the node on PATH reports, or None for no node at all.
    pub(super) fn new(system_node: Option<&str>, npm: Option<Npm>) -> Fake {
        Fake::on(system_node, npm, "linux", "x86_64")
    }

    pub(super) fn on(system_node: Option<&str>, npm: Option<Npm>, os: &str, arch: &str) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let bin = root.join("bin");
        let tools = root.join("tools");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&tools).unwrap();
        // Only the few tools the scripts use, so the real node and npm stay out of sight.
        let real = Host::current();
        for tool in ["sh", "mkdir", "cp", "cat"] {
            let found = real.which(tool).unwrap_or_else(|| panic!("no {tool} on PATH"));
            std::os::unix::fs::symlink(found, tools.join(tool)).unwrap();
        }
        let cache = root.join("cache dir");
        let log = root.join("npm.log");
        let fake = Fake {
            host: Host {
                path: std::env::join_paths([&bin, &tools]).unwrap(),
                os: os.to_string(),
                arch: arch.to_string(),
            },
            _dir: dir,
            root,
            bin,
            cache,
            log,
        };
        if let Some(v) = system_node {
            write_exe(&fake.bin.join("node"), &fake_node_script(v));
        }
        if let Some(npm) = npm {
            fake.write_npm(npm);
        }
        fake
    }

    pub(super) fn write_npm(&self, npm: Npm) {
        let log = self.log.display();
        let body = match npm {
            Npm::Works {
                node_version,
                pi_version,
            } => {
                let templates = self.root.join("templates");
                write_exe(&templates.join("node"), &fake_node_script(node_version));
                std::fs::write(
                    templates.join("cli.js"),
                    format!(
                        "if [ \"$1\" = --version ]; then echo {pi_version}; exit 0; fi\n\
                         echo \"pi got: $*\"\n"
                    ),
                )
                .unwrap();
                let t = templates.display();
                format!(
                    "case \"$spec\" in\n\
                     node-linux-*@22)\n\
                       d=\"$prefix/node_modules/${{spec%@22}}/bin\"; mkdir -p \"$d\"; cp '{t}/node' \"$d/node\" ;;\n\
                     @earendil-works/pi-coding-agent@1.6.0)\n\
                       d=\"$prefix/node_modules/$spec\"; d=\"${{d%@1.6.0}}/dist\"; mkdir -p \"$d\"; cp '{t}/cli.js' \"$d/cli.js\" ;;\n\
                     *) echo \"fake npm: unexpected package $spec\" >&2; exit 3 ;;\n\
                     esac\n"
                )
            }
            Npm::Fails => "i=1\n\
                 while [ $i -le 30 ]; do echo \"npm error line $i\" >&2; i=$((i+1)); done\n\
                 exit 1\n"
                .to_string(),
            Npm::CreatesNothing => "exit 0\n".to_string(),
        };
        write_exe(
            &self.bin.join("npm"),
            &format!(
                "#!/bin/sh\n\
                 printf '%s\\n' \"node=$(command -v node) args=$*\" >> '{log}'\n\
                 prefix=''; spec=''\n\
                 while [ $# -gt 0 ]; do\n\
                   case \"$1\" in\n\
                     --prefix) prefix=\"$2\"; shift 2 ;;\n\
                     --*) shift ;;\n\
                     *) spec=\"$1\"; shift ;;\n\
                   esac\n\
                 done\n\
                 {body}"
            ),
        );
    }

    pub(super) fn install(&self) -> (Result<PathBuf, InstallError>, Vec<String>) {
        let mut lines = Vec::new();
        let result = install_pi_on(&self.host, &self.cache, &mut |l| lines.push(l.to_string()));
        (result, lines)
    }

    pub(super) fn npm_calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub(super) fn cached_node(&self, package: &str) -> PathBuf {
        self.cache
            .join("node/node_modules")
            .join(package)
            .join("bin/node")
    }

    pub(super) fn cli(&self) -> PathBuf {
        self.cache
            .join("pi-1.6.0/node_modules/@earendil-works/pi-coding-agent/dist/cli.js")
    }

    pub(super) fn npm_call(&self, node: &Path, prefix: &str, spec: &str) -> String {
        format!(
            "node={} args=install --prefix {} {spec} --no-audit --no-fund --loglevel=error",
            node.display(),
            self.cache.join(prefix).display()
        )
    }

    /// Runs the launcher the way a user would, with nothing but the private PATH.
    pub(super) fn run_launcher(&self, launcher: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new(launcher)
            .args(args)
            .env("PATH", &self.host.path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    }
}

pub(super) fn assert_one_line_each(lines: &[String]) {
    for l in lines {
        assert!(!l.trim().is_empty() && !l.contains('\n'), "{lines:#?}");
    }
}
