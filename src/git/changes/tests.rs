//! Against real git, in repositories the tests make.

use std::path::Path;
use std::process::Command;

use super::base::{checked_out, of_worktree};
use super::*;
use pokeshell_core::diff::Status;

fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn repo() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().expect("a temp dir");
    let main = t.path().join("app");
    std::fs::create_dir(&main).expect("mkdir");
    run(&main, &["init", "-q", "-b", "trunk"]);
    std::fs::write(main.join("a.txt"), "one\ntwo\n").expect("write");
    std::fs::write(main.join("b.txt"), "bee\n").expect("write");
    run(&main, &["add", "."]);
    run(&main, &["commit", "-qm", "first"]);
    (t, main)
}

fn status_of(c: &Changes, path: &str) -> Option<Status> {
    c.files.iter().find(|f| f.path == path).map(|f| f.status)
}

#[test]
fn a_worktree_s_committed_uncommitted_and_new_files_show_and_the_main_checkout_s_later_commits_do_not() {
    let (_t, main) = repo();
    let first = run(&main, &["rev-parse", "HEAD"]);
    let made = crate::git::worktree::ensure(&main, "feat").expect("a worktree");
    assert!(made.created);
    let base = of_worktree(&made.path, true)
        .expect("git answers")
        .expect("a base");
    assert_eq!(base, first);
    let wt = made.path;
    std::fs::write(wt.join("a.txt"), "one\n2\n").expect("write");
    run(&wt, &["commit", "-qam", "agent's commit"]);
    std::fs::write(wt.join("b.txt"), "bee\nsting\n").expect("write");
    std::fs::write(wt.join("new.txt"), "fresh\n").expect("write");
    std::fs::write(wt.join(".gitignore"), "*.log\n").expect("write");
    std::fs::write(wt.join("noise.log"), "ignored\n").expect("write");
    std::fs::write(main.join("later.txt"), "main moved on\n").expect("write");
    run(&main, &["add", "later.txt"]);
    run(&main, &["commit", "-qm", "main's later commit"]);

    let c = changes(&wt, &base, Bounds::VIEW).expect("the changes");
    let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, [".gitignore", "a.txt", "b.txt", "new.txt"], "{c:#?}");
    assert_eq!(status_of(&c, "new.txt"), Some(Status::Added));
    assert_eq!(status_of(&c, "a.txt"), Some(Status::Modified));
    assert!(c.note.is_none());
    let b = &c.files[2];
    assert_eq!(b.added, Some(1));
    assert_eq!(b.hunks[0].lines.last().map(|l| l.text.as_str()), Some("sting"));
    // The repository's own index was not touched: the new file is still untracked there.
    assert_eq!(
        run(&wt, &["status", "--porcelain", "--", "new.txt"]),
        "?? new.txt"
    );
    // A session reusing the worktree later goes from where its branch left the main checkout.
    assert_eq!(of_worktree(&wt, false).expect("git answers"), Some(first.clone()));
    // From a subdirectory of the checkout: the same changes.
    std::fs::create_dir(wt.join("sub")).expect("mkdir");
    let again = changes(&wt.join("sub"), &base, Bounds::VIEW).expect("the changes");
    assert_eq!(again.files.len(), 4);
}

#[test]
fn a_plain_directory_s_base_is_the_commit_checked_out_and_outside_git_there_is_none() {
    let (t, main) = repo();
    let head = run(&main, &["rev-parse", "HEAD"]);
    assert_eq!(checked_out(&main).expect("git answers"), Some(head.clone()));
    let outside = t.path().join("plain");
    std::fs::create_dir(&outside).expect("mkdir");
    assert_eq!(checked_out(&outside).expect("git answers"), None);
    let err = changes(&outside, &head, Bounds::VIEW).unwrap_err();
    assert!(err.contains("is not in a git checkout"), "{err}");
    let err = changes(&main, "--output=/tmp/x", Bounds::VIEW).unwrap_err();
    assert!(err.contains("not a commit id"), "{err}");
}

#[test]
fn a_repository_without_commits_shows_every_file_as_new_and_a_huge_diff_is_cut_with_a_note() {
    let t = tempfile::tempdir().expect("a temp dir");
    run(t.path(), &["init", "-q"]);
    let base = checked_out(t.path())
        .expect("git answers")
        .expect("the empty tree");
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(t.path().join("big.txt"), &big).expect("write");
    std::fs::write(t.path().join("small.txt"), "x\n").expect("write");
    let c = changes(t.path(), &base, Bounds::VIEW).expect("the changes");
    assert_eq!(status_of(&c, "big.txt"), Some(Status::Added));
    assert_eq!(c.files[0].added, Some(20_000));
    let note = c.note.clone().expect("a note for the cut");
    assert!(note.contains("lines left out"), "{note}");
    let tight = Bounds {
        limits: Limits::VIEW,
        output: 4096,
    };
    let c = changes(t.path(), &base, tight).expect("the changes");
    assert_eq!(c.files.len(), 2, "the list comes before the patch");
    let note = c.note.expect("a note for the bound");
    assert!(note.contains("git's output passed its bound"), "{note}");
}

#[test]
fn an_index_linked_to_a_huge_file_or_a_fifo_is_refused_at_once_not_read() {
    let (t, main) = repo();
    let head = run(&main, &["rev-parse", "HEAD"]);
    let index = main.join(".git").join("index");
    // The agent's checkout: its index made a link to a 4 GiB file (sparse, so nothing is written).
    let huge = t.path().join("huge");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(4 << 30))
        .expect("a sparse file");
    std::fs::remove_file(&index).expect("rm index");
    std::os::unix::fs::symlink(&huge, &index).expect("symlink");
    let began = std::time::Instant::now();
    let err = changes(&main, &head, Bounds::VIEW).unwrap_err();
    assert!(err.contains("is larger than 256 MiB"), "{err}");
    assert!(
        began.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
    // A FIFO there: refused without waiting for a writer.
    let fifo = t.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("a path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    std::fs::remove_file(&index).expect("rm link");
    std::os::unix::fs::symlink(&fifo, &index).expect("symlink");
    let err = changes(&main, &head, Bounds::VIEW).unwrap_err();
    assert!(err.contains("is not a regular file"), "{err}");
    // A link to a real index of a fitting size is followed, as git follows it.
    std::fs::remove_file(&index).expect("rm link");
    run(&main, &["read-tree", "HEAD"]);
    let real = t.path().join("real-index");
    std::fs::rename(&index, &real).expect("move the index");
    std::os::unix::fs::symlink(&real, &index).expect("symlink");
    std::fs::write(main.join("a.txt"), "one\n2\n").expect("write");
    let c = changes(&main, &head, Bounds::VIEW).expect("the changes");
    assert_eq!(status_of(&c, "a.txt"), Some(Status::Modified));
    assert_eq!(c.files.len(), 1, "{c:#?}");
}
