//! The source is grouped by layer (docs/architecture.md, "Modules"). The pure crate (`crates/core`)
//! stays pure: its manifest names no runtime, terminal, operating-system or HTTP crate (the compiler
//! then refuses their use), and its code outside tests touches no file, environment, network, process,
//! thread or clock. The binary's `src/` has at most ten top-level modules, each importing only those
//! below it in one order; no module inside a layer imports one that imports it back; and no source
//! file grows past 450 lines unless it is a data table. Read from the source as text: `crate::NAME`
//! is how every module names another.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Files that hold tables of data rather than logic, allowed to be longer.
const DATA_TABLES: &[&str] = &["crates/core/src/config/schema.rs"];
const MAX_LINES: usize = 450;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    files
}

fn core_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src")
}

fn core_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&core_root(), &mut files);
    files.sort();
    files
}

/// The top-level module a file belongs to: `src/server/conn.rs` → `server`, `src/cli.rs` → `cli`.
fn top_module(path: &Path) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rel = path.strip_prefix(&root).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_owned())
}

/// Which top-level modules each top-level module names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in src_files() {
        let Some(from) = top_module(&file) else { continue };
        let text = std::fs::read_to_string(&file).expect("read source");
        let deps = graph.entry(from.clone()).or_default();
        deps.extend(named(&text, &["crate::"]).filter(|n| *n != from));
    }
    graph
}

/// The module names that follow any of `prefixes` in the code of `text` (comments may name any
/// module; only code counts).
fn named<'a>(text: &'a str, prefixes: &'a [&'a str]) -> impl Iterator<Item = String> + 'a {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(move |line| {
            prefixes.iter().flat_map(move |prefix| {
                line.match_indices(prefix).map(move |(at, _)| {
                    line[at + prefix.len()..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
            })
        })
        .filter(|n| !n.is_empty())
}

/// Every circle in `graph`, in words.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    graph
        .keys()
        .filter_map(|m| circle_from(graph, m))
        .map(|c| format!("{} → {}", c.join(" → "), c[0]))
        .collect()
}

/// A circle through `start`, if one exists: the modules in order.
fn circle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in graph.get(at).into_iter().flatten() {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_owned()];
    walk(graph, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn no_top_level_module_imports_one_that_imports_it_back() {
    let graph = imports();
    assert!(graph.len() > 5, "the source was not read: {graph:?}");
    let circles = circles(&graph);
    assert!(
        circles.is_empty(),
        "import circles between top-level modules:\n{}",
        circles.join("\n")
    );
}

/// Which of a layer's modules (`session.rs` and `session/` are `session`) each of
/// them names, as `pokeshell_core::NAME` or, from the module's own file, `super::NAME`.
fn layer_imports(layer: &str) -> BTreeMap<String, BTreeSet<String>> {
    let (root, prefix) = if layer == "core" {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src");
        (root, "crate::".to_string())
    } else {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(layer);
        (root, format!("crate::{layer}::"))
    };
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&root).expect("under the layer");
        let Some(first) = rel.components().next().and_then(|c| c.as_os_str().to_str()) else {
            continue;
        };
        let from = first.strip_suffix(".rs").unwrap_or(first).to_owned();
        let own_file = rel.components().count() == 1;
        let text = std::fs::read_to_string(&file).expect("read source");
        let deps = graph.entry(from.clone()).or_default();
        let prefixes: &[&str] = if own_file {
            &[&prefix, "super::"]
        } else {
            &[&prefix]
        };
        deps.extend(named(&text, prefixes).filter(|n| *n != from));
    }
    graph
}

#[test]
fn no_module_of_a_layer_imports_one_that_imports_it_back() {
    for layer in ["core", "term", "pi"] {
        let graph = layer_imports(layer);
        assert!(graph.len() > 3, "{layer} was not read: {graph:?}");
        let circles = circles(&graph);
        assert!(
            circles.is_empty(),
            "import circles inside {layer}:\n{}",
            circles.join("\n")
        );
    }
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    graph.entry("c".into()).or_default().insert("a".into());
    graph.entry("d".into()).or_default().insert("a".into());
    assert_eq!(
        circle_from(&graph, "a"),
        Some(vec!["a".into(), "b".into(), "c".into()])
    );
    assert_eq!(circle_from(&graph, "d"), None);
}

#[test]
fn no_source_file_is_longer_than_the_bound_but_data_tables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let long: Vec<String> = src_files()
        .into_iter()
        .chain(core_files())
        .filter(|f| !DATA_TABLES.iter().any(|t| root.join(t) == *f))
        .filter_map(|f| {
            let lines = std::fs::read_to_string(&f).expect("read source").lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
}

/// The binary's top-level modules, from the top: each may import only those after it.
const ORDER: &[&str] = &[
    "demo", "client", "server", "web", "cli", "machines", "git", "ipc", "pi", "term",
];

#[test]
fn the_binary_has_at_most_ten_top_level_modules_each_importing_only_those_below_it() {
    let graph = imports();
    let modules: BTreeSet<&str> = graph.keys().map(String::as_str).collect();
    assert!(
        modules.len() <= 10,
        "more than ten top-level modules: {modules:?}"
    );
    let unplaced: Vec<&&str> = modules.iter().filter(|m| !ORDER.contains(m)).collect();
    assert!(
        unplaced.is_empty(),
        "modules with no place in ORDER: {unplaced:?}"
    );
    let rank = |m: &str| ORDER.iter().position(|o| *o == m);
    let mut upward = Vec::new();
    for (from, deps) in &graph {
        for to in deps {
            if let (Some(a), Some(b)) = (rank(from), rank(to))
                && b <= a
            {
                upward.push(format!("{from} imports {to}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports against the order {ORDER:?}: {upward:?}"
    );
}

/// What the pure crate's code may not name outside its tests.
const IMPURE: &[&str] = &[
    "std::fs",
    "std::env",
    "std::net",
    "std::process",
    "std::thread",
    "Instant::now",
    "SystemTime::now",
    "tokio",
    "libc",
    "nix::",
    "portable_pty",
    "crossterm",
    "pokeshell::",
];

/// The crates the pure crate may not depend on: the compiler then refuses them.
const IMPURE_CRATES: &[&str] = &[
    "tokio",
    "libc",
    "nix",
    "portable-pty",
    "crossterm",
    "ratatui",
    "ratatui-crossterm",
    "axum",
    "hyper",
    "hyper-util",
    "reqwest",
    "rustls",
    "pokeshell",
];

/// A file's code without its test items: an item after `#[cfg(test)]` (or a cfg that needs
/// `test` or the `testing` feature) is cut, to its `;` or its closing brace.
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(any(test") {
            let mut depth = 0i32;
            let mut opened = false;
            for item in lines.by_ref() {
                depth += item.matches('{').count() as i32 - item.matches('}').count() as i32;
                opened |= item.contains('{');
                if (!opened && item.trim_end().ends_with(';')) || (opened && depth <= 0) {
                    break;
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The test-only files: the modules declared after a test cfg (`mod NAME;`), and test files by name.
fn test_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).expect("read source");
        let dir = match file.file_stem().and_then(|s| s.to_str()) {
            Some("lib") | Some("mod") => file.parent().expect("a dir").to_path_buf(),
            Some(stem) => file.with_file_name(stem),
            None => continue,
        };
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let t = line.trim_start();
            if !(t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(any(test")) {
                continue;
            }
            if let Some(name) = lines
                .peek()
                .and_then(|n| n.trim().strip_prefix("pub ").or(Some(n.trim())))
                .and_then(|n| n.strip_prefix("mod "))
                .and_then(|n| n.strip_suffix(';'))
            {
                out.insert(dir.join(format!("{name}.rs")));
                out.insert(dir.join(name));
            }
        }
    }
    out
}

#[test]
fn the_pure_crate_touches_no_file_environment_network_process_thread_or_clock() {
    let files = core_files();
    assert!(files.len() > 50, "the pure crate was not read: {}", files.len());
    let tests = test_files(&files);
    let mut found = Vec::new();
    let mut read = 0;
    for file in &files {
        if tests.iter().any(|t| file.starts_with(t)) {
            continue;
        }
        read += 1;
        let text = without_tests(&std::fs::read_to_string(file).expect("read source"));
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in IMPURE {
                if code.contains(word) {
                    found.push(format!("{}:{}: {word}", file.display(), i + 1));
                }
            }
            // `use std::{fs, …}` names them without the path.
            if code.contains("std::{") {
                for m in ["fs", "env", "net", "process", "thread"] {
                    if code.split(['{', ',', '}', ' ']).any(|w| w == m) {
                        found.push(format!("{}:{}: std::{m}", file.display(), i + 1));
                    }
                }
            }
        }
    }
    assert!(read > 50, "too few files read outside tests: {read}");
    assert!(
        found.is_empty(),
        "impure code in the pure crate:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_purity_check_finds_what_it_looks_for() {
    let text = "use std::fs;\n#[cfg(test)]\nmod tests {\n    use std::env;\n}\nfn f() { x(); }\n";
    let kept = without_tests(text);
    assert!(kept.contains("std::fs") && kept.contains("fn f()"), "{kept}");
    assert!(!kept.contains("std::env"), "the test module is cut: {kept}");
}

#[test]
fn the_pure_crates_manifest_names_no_impure_crate() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/Cargo.toml"))
            .expect("read the pure crate's manifest");
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .expect("a [dependencies] table")
        .split("\n[")
        .next()
        .unwrap_or("");
    let names: Vec<&str> = deps
        .lines()
        .filter_map(|l| l.split('=').next())
        .map(str::trim)
        .filter(|n| !n.is_empty() && !n.starts_with('#'))
        .collect();
    assert!(
        names.contains(&"vt100"),
        "the dependencies were not read: {names:?}"
    );
    let bad: Vec<&&str> = names.iter().filter(|n| IMPURE_CRATES.contains(n)).collect();
    assert!(bad.is_empty(), "the pure crate depends on {bad:?}");
}
