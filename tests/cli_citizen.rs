//! pokeshell as a command-line tool: the shell completions complete for real in bash (subcommands,
//! options, and the names of a real server's sessions), the manual page holds every subcommand and
//! option `--help` shows, and global options work after the subcommand against a real server.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use support::pty::ServerHome;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_pokeshell")
}

fn run(args: &[&str]) -> String {
    let out = Command::new(exe()).args(args).output().expect("run pokeshell");
    assert!(out.status.success(), "pokeshell {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// What bash's completion offers for `words` (the last one being completed), with the script
/// `pokeshell completions bash` wrote loaded and pokeshell on PATH, as a user has it.
fn bash_complete(home: Option<&ServerHome>, words: &[&str]) -> Vec<String> {
    let dir = Path::new(exe()).parent().expect("the binary's directory");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let current = quoted.last().cloned().unwrap_or_default();
    let previous = quoted
        .len()
        .checked_sub(2)
        .map_or("''".to_string(), |i| quoted[i].clone());
    let script = format!(
        "source <(pokeshell completions bash) || exit 3\n\
         COMP_WORDS=({}); COMP_CWORD={}; COMP_TYPE=9\n\
         _clap_complete_pokeshell pokeshell {current} {previous}\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        words.len() - 1
    );
    let mut cmd = Command::new("bash");
    cmd.arg("--norc").arg("-c").arg(script).env("PATH", path);
    if let Some(home) = home {
        cmd.env("XDG_RUNTIME_DIR", home.runtime_dir())
            .env("XDG_STATE_HOME", home.state_dir());
    }
    let out = cmd.output().expect("run bash");
    assert!(out.status.success(), "bash completion failed: {out:?}");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The candidates that are not options.
fn values(candidates: Vec<String>) -> Vec<String> {
    candidates.into_iter().filter(|c| !c.starts_with('-')).collect()
}

#[test]
fn bash_completes_subcommands_and_options() {
    assert_eq!(bash_complete(None, &["pokeshell", "att"]), ["attach"]);
    let all = bash_complete(None, &["pokeshell", ""]);
    for sub in ["attach", "ls", "new", "kill", "demo", "completions", "man"] {
        assert!(all.iter().any(|c| c == sub), "{sub} missing from {all:?}");
    }
    assert!(
        !all.iter().any(|c| c == "__server"),
        "the hidden server command is offered: {all:?}"
    );
    let options = bash_complete(None, &["pokeshell", "new", "--d"]);
    assert!(options.contains(&"--dir".to_string()), "{options:?}");
    assert!(options.contains(&"--detached".to_string()), "{options:?}");
    // Global options complete after a subcommand too.
    assert_eq!(bash_complete(None, &["pokeshell", "kill", "--pre"]), ["--prefix"]);
    let shells = values(bash_complete(None, &["pokeshell", "completions", ""]));
    assert_eq!(shells, ["bash", "zsh", "fish", "elvish", "powershell"]);
}

#[test]
fn session_names_complete_from_the_running_server_and_nothing_without_one() {
    let home = ServerHome::new();
    let offered = values(bash_complete(Some(&home), &["pokeshell", "attach", ""]));
    assert!(offered.is_empty(), "names offered with no server: {offered:?}");
    assert!(home.server_pid().is_none(), "completing started a server");
    for name in ["alpha", "alpine", "beta"] {
        // The global --command after the subcommand: a hosted program, no pi needed.
        let out = home.pokeshell(&["new", "-d", "-n", name, "--command", "sleep 600"]);
        assert!(out.status.success(), "new {name}: {out:?}");
    }
    assert_eq!(
        bash_complete(Some(&home), &["pokeshell", "attach", "al"]),
        ["alpha", "alpine"]
    );
    assert_eq!(bash_complete(Some(&home), &["pokeshell", "kill", "b"]), ["beta"]);
    let listing = String::from_utf8(home.pokeshell(&["ls"]).stdout).expect("utf-8");
    assert!(listing.contains("alpine"), "{listing}");
}

/// Every `--long` option in `text`.
fn long_options(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--") && w.len() > 2 && w.as_bytes()[2].is_ascii_alphabetic())
        .map(str::to_string)
        .collect()
}

/// The subcommands `--help` lists under "Commands:".
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_man_page_keeps_in_step_with_help() {
    let man = run(&["man"])
        .replace("\\-", "-")
        .replace("\\fB", " ")
        .replace("\\fR", " ")
        .replace("\\fI", " ");
    assert!(
        man.starts_with(".ie") || man.contains(".TH pokeshell 1"),
        "not roff: {man:.200}"
    );
    let help = run(&["--help"]);
    let subs = subcommands(&help);
    assert!(subs.len() >= 7, "subcommands read from --help: {subs:?}");
    let mut pages = vec![help];
    for sub in &subs {
        assert!(
            man.contains(&format!(".SH \"POKESHELL {}\"", sub.to_uppercase())),
            "no section for {sub}"
        );
        pages.push(run(&[sub, "--help"]));
    }
    let in_man = long_options(&man);
    for page in &pages {
        for option in long_options(page) {
            assert!(
                in_man.contains(&option),
                "{option} is in --help but not in the man page"
            );
        }
    }
}

#[test]
fn version_names_pi_and_its_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pi = dir.path().join("pi");
    std::fs::write(&pi, "#!/bin/sh\necho 1.6.0\n").expect("write pi");
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let pi = pi.to_string_lossy().into_owned();
    for args in [&["--pi", &pi, "--version"][..], &["--version", "--pi", &pi][..]] {
        let text = run(args);
        assert_eq!(
            text,
            format!("pokeshell {}\npi: {pi} (1.6.0)\n", env!("CARGO_PKG_VERSION")),
            "{args:?}"
        );
    }
}

/// The files under `dir` (recursively) with a name ending in `.rs`.
fn rust_sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_package_holds_every_file_the_binary_embeds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = Command::new(env!("CARGO"))
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(root)
        .output()
        .expect("cargo package --list");
    assert!(listed.status.success(), "{listed:?}");
    let listed: BTreeSet<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let mut sources = Vec::new();
    rust_sources(&root.join("src"), &mut sources);
    let mut embedded = BTreeSet::new();
    for file in sources {
        let text = std::fs::read_to_string(&file).expect("read source");
        for (at, _) in text.match_indices("include_") {
            let rest = &text[at..];
            if !(rest.starts_with("include_str!(") || rest.starts_with("include_bytes!(")) {
                continue;
            }
            // The first string literal: the path, relative to the file (a `concat!` prefix too).
            let Some(open) = rest.find('"') else { continue };
            let Some(len) = rest[open + 1..].find('"') else {
                continue;
            };
            let rel = &rest[open + 1..open + 1 + len];
            if rel.ends_with('/') {
                continue;
            }
            let path = file.parent().expect("a file's folder").join(rel);
            let path = std::fs::canonicalize(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let rel = path.strip_prefix(root).expect("inside the repository");
            embedded.insert(rel.to_string_lossy().into_owned());
        }
    }
    assert!(embedded.len() > 5, "no embedded file found: {embedded:?}");
    let missing: Vec<&String> = embedded.iter().filter(|f| !listed.contains(*f)).collect();
    assert!(missing.is_empty(), "embedded but not packaged: {missing:?}");
}
