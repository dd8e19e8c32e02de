//! Claims docs/architecture.md makes about the code, checked against the code (issue 32, item 4).
//! Each test quotes the claim it holds the document to, so that a claim changed in the text without
//! the code (or the code without the text) fails here. Claims checked elsewhere: the pure crate's
//! purity and the order of imports (tests/layers.rs), a key typed in a held terminal not waking the
//! server's main thread (tests/server_terminal.rs).

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("docs/architecture.md")).expect("read docs/architecture.md")
}

fn assert_claimed(claim: &str) {
    let doc = architecture().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        doc.contains(claim),
        "docs/architecture.md no longer says: {claim}"
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source files under `dir` that are not tests (`tests.rs`, `tests/`), relative to the root.
fn sources(dir: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&root().join(dir), &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            !p.components().any(|c| c.as_os_str() == "tests") && !name.ends_with("tests.rs")
        })
        .map(|p| {
            let rel = p
                .strip_prefix(root())
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&p).expect("read source");
            (rel, without_test_modules(&text))
        })
        .collect()
}

/// The text before the first `#[cfg(test)]`: test modules sit at a file's end in this code base.
fn without_test_modules(text: &str) -> String {
    text.split("#[cfg(test)]").next().unwrap_or_default().to_owned()
}

/// The first cell of every row of the module table ("## Modules").
fn module_table_paths() -> Vec<String> {
    let doc = architecture();
    let section = doc.split("\n## Modules").nth(1).expect("a Modules section");
    let section = section.split("\n## ").next().unwrap_or_default();
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('|').nth(1))
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn top_level_modules(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read src")
        .map(|e| e.expect("dir entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_owned();
            let name = name.strip_suffix(".rs").map(str::to_owned).unwrap_or(name);
            (name != "lib" && name != "main").then_some(name)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_module_table_names_every_top_level_module_of_both_crates() {
    let paths = module_table_paths();
    let covers = |prefix: &str, module: &str| {
        paths.iter().any(|p| {
            p.strip_prefix(prefix)
                .is_some_and(|rest| rest == format!("{module}.rs") || rest.starts_with(&format!("{module}/")))
        })
    };
    let mut missing = Vec::new();
    for module in top_level_modules(&root().join("src")) {
        if !covers("", &module) {
            missing.push(format!("src/{module}"));
        }
    }
    for module in top_level_modules(&root().join("crates/core/src")) {
        if !covers("core:", &module) {
            missing.push(format!("core:{module}"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md's module table has no row for: {missing:?}"
    );
}

#[test]
fn the_screen_has_one_writer_the_connection() {
    assert_claimed("The screen has one writer, the connection");
    // The client's socket and terminal are written through `halves::WriteHalf`; only the connection
    // holds one.
    let writers: Vec<String> = sources("src")
        .into_iter()
        .filter(|(path, text)| {
            text.contains("WriteHalf")
                && text.contains("halves")
                && !path.starts_with("src/server/conn")
                && path != "src/ipc/halves.rs"
        })
        .map(|(path, _)| path)
        .collect();
    assert!(
        writers.is_empty(),
        "a client's WriteHalf is held outside server/conn: {writers:?}"
    );
}

#[test]
fn the_transport_has_no_lock_notify_or_oneshot_and_three_atomics() {
    assert_claimed("whose only ones are three atomics, the meters");
    assert_claimed("no lock, notify or oneshot");
    let mut atomics = 0;
    for (path, text) in sources("src/server")
        .into_iter()
        .chain(sources("src/ipc"))
        .filter(|(p, _)| {
            p.starts_with("src/server/conn") || p == "src/ipc/halves.rs" || p == "src/ipc/terminal.rs"
        })
    {
        for banned in [
            "Mutex", "RwLock", "Notify", "oneshot", "OnceCell", "OnceLock", "Condvar",
        ] {
            assert!(
                !text.contains(banned),
                "{path} uses {banned}, which the transport claims it has none of"
            );
        }
        atomics += text.matches(": Arc<Atomic").count();
    }
    // The meters are shared, so each is named once as a field that holds it; the count is of fields.
    assert!(
        atomics <= 4,
        "the transport holds {atomics} shared atomics, more than its meters"
    );
}

#[test]
fn a_session_loop_runs_only_on_its_session_thread() {
    assert_claimed("`session_thread` (a session's thread and loop, the only place a loop runs;");
    let runners: Vec<String> = sources("src")
        .into_iter()
        .filter(|(path, text)| text.contains(".into_loop(") && path != "src/server/event_loop/build.rs")
        .map(|(path, _)| path)
        .collect();
    assert_eq!(
        runners,
        vec!["src/server/session_thread.rs".to_owned()],
        "where session loops are made"
    );
}

#[test]
fn a_session_runtime_keeps_at_most_two_blocking_threads() {
    assert_claimed("its runtime's blocking pool keeps at most 2 threads, for 1 s");
    let text = std::fs::read_to_string(root().join("src/server/session_thread.rs")).expect("read");
    assert!(
        text.contains("const BLOCKING_THREADS: usize = 2;"),
        "the blocking pool's bound is not 2"
    );
    assert!(
        text.contains(".max_blocking_threads(BLOCKING_THREADS)"),
        "the bound is not applied"
    );
    assert!(
        text.contains("BLOCKING_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(1);")
            && text.contains(".thread_keep_alive(BLOCKING_KEEP_ALIVE)"),
        "idle blocking threads are not let go after 1 s"
    );
}

#[test]
fn keys_through_the_core_keep_their_ticket_outside_the_pure_crate() {
    assert_claimed(
        "keep their input meter's ticket in the performer (`ServerMsg::Input`), never in the core",
    );
    let holders: Vec<String> = sources("crates/core/src")
        .into_iter()
        // The meter's type is `input_meter::Ticket`; the word alone is used for other things.
        .filter(|(_, text)| text.contains("Ticket") || text.contains("input_meter"))
        .map(|(path, _)| path)
        .collect();
    assert!(
        holders.is_empty(),
        "the pure crate names an input meter's ticket: {holders:?}"
    );
}
