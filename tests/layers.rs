//! The source is grouped by layer (docs/architecture.md, "Modules"): no top-level module may import
//! another that imports it back, directly or around a circle, nor may a module inside a layer; and
//! no source file grows past 450 lines unless it is a data table. Read from the source as text: `crate::NAME` is how every module here
//! names another.

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

/// Which of a layer's modules (`src/core/session.rs` and `src/core/session/` are `session`) each of
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
        .filter(|f| !DATA_TABLES.iter().any(|t| root.join(t) == *f))
        .filter_map(|f| {
            let lines = std::fs::read_to_string(&f).expect("read source").lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
}
