//! A git worktree per agent, on real repositories made by the test: `worktree::ensure` creates and
//! then reuses a branch's worktree beside the repository, refuses a name git refuses and a path
//! taken by something else, creating nothing; `pokeshell new --worktree` starts two agents (real
//! pi, each against its own scripted model) in two worktrees, each writing its own file; `ls`
//! shows their branches and changes; `kill --remove-worktree` refuses the tree with changes and
//! removes it once committed.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pokeshell::git::worktree;
use serde_json::json;
use support::pi::{PiEnv, pi_path};
use support::pty::ServerHome;
use support::{Step, WAIT, model_server};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.invalid"])
        .args(args)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository `<tmp>/app` with one commit on `main`.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("app");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "app\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    (tmp, repo)
}

fn branches(repo: &Path) -> String {
    git(repo, &["branch", "--format=%(refname:short)"])
}

#[test]
fn a_branch_worktree_is_created_beside_the_repository_then_reused() {
    let (tmp, repo) = repo();
    let made = worktree::ensure(&repo, "feat/x").unwrap();
    assert!(made.created);
    assert_eq!(made.path, tmp.path().join("app-worktrees/feat/x"));
    assert!(made.path.join("README").is_file());
    assert!(branches(&repo).lines().any(|b| b == "feat/x"));
    // From the repository or from inside the worktree itself: the same one, not a second.
    assert_eq!(
        worktree::ensure(&repo, "feat/x").unwrap(),
        worktree::Ensured {
            path: made.path.clone(),
            created: false
        }
    );
    assert!(!worktree::ensure(&made.path, "feat/x").unwrap().created);
    // An existing branch without a worktree gets one, on that branch.
    git(&repo, &["branch", "old"]);
    let old = worktree::ensure(&repo, "old").unwrap();
    assert!(old.created);
    let state = worktree::tree_state(&old.path).unwrap();
    assert_eq!(state.branch.as_deref(), Some("old"));
    assert!(!state.dirty);
}

#[test]
fn names_git_refuses_and_taken_paths_create_nothing() {
    let (tmp, repo) = repo();
    let before = branches(&repo);
    for bad in ["bad..name", "-x", "a b", "end.lock", "x~1", ""] {
        let e = worktree::ensure(&repo, bad).unwrap_err();
        assert!(e.contains("not a branch name git accepts"), "{bad:?}: {e}");
    }
    assert_eq!(branches(&repo), before);
    assert!(!tmp.path().join("app-worktrees").exists());
    // Something that is not the branch's worktree sits where it would go.
    std::fs::create_dir_all(tmp.path().join("app-worktrees/taken")).unwrap();
    let e = worktree::ensure(&repo, "taken").unwrap_err();
    assert!(e.contains("exists and is not a worktree of taken"), "{e}");
    assert_eq!(branches(&repo), before);
    let e = worktree::ensure(tmp.path(), "feat").unwrap_err();
    assert!(e.contains("is not in a git repository"), "{e}");
}

#[test]
fn a_worktree_with_changes_is_kept_and_a_clean_one_removed() {
    let (_tmp, repo) = repo();
    let w = worktree::ensure(&repo, "feat").unwrap().path;
    std::fs::write(w.join("new.txt"), "work\n").unwrap();
    let e = worktree::remove(&w).unwrap_err();
    assert!(
        e.contains("has uncommitted changes (1 changed or untracked files)"),
        "{e}"
    );
    assert!(w.join("new.txt").is_file(), "nothing lost");
    let e = worktree::remove(&repo).unwrap_err();
    assert!(e.contains("main checkout"), "{e}");
    git(&w, &["add", "new.txt"]);
    git(&w, &["commit", "-q", "-m", "work"]);
    assert!(worktree::remove(&w).unwrap().contains("removed the worktree"));
    assert!(!w.exists());
    assert!(branches(&repo).lines().any(|b| b == "feat"), "the branch stays");
}

/// Runs pokeshell in `dir` with `env`'s environment and `home`'s server.
/// Issue 34, low 7: `kill --remove-worktree` deleted the files git ignores (`.env`, `build/`) and
/// removed a worktree the user made by hand, reused because its branch matched.
#[test]
fn ignored_files_and_hand_made_worktrees_are_kept() {
    let (tmp, repo) = repo();
    std::fs::write(repo.join(".gitignore"), ".env\nbuild/\n").unwrap();
    git(&repo, &["add", ".gitignore"]);
    git(&repo, &["commit", "-q", "-m", "ignore"]);
    let w = worktree::ensure(&repo, "feat").unwrap().path;
    std::fs::write(w.join(".env"), "TOKEN=secret\n").unwrap();
    std::fs::create_dir(w.join("build")).unwrap();
    std::fs::write(w.join("build/out.bin"), "x").unwrap();
    let e = worktree::remove(&w).unwrap_err();
    assert!(
        e.contains("files git ignores") && e.contains(".env") && e.contains("build/"),
        "{e}"
    );
    assert!(
        w.join(".env").is_file() && w.join("build/out.bin").is_file(),
        "nothing lost"
    );
    std::fs::remove_file(w.join(".env")).unwrap();
    std::fs::remove_dir_all(w.join("build")).unwrap();
    assert!(worktree::remove(&w).unwrap().contains("removed the worktree"));

    // A worktree made by hand, elsewhere, is reused for its branch but never removed by pokeshell.
    let mine = tmp.path().join("my-checkout");
    git(
        &repo,
        &["worktree", "add", "-q", "-b", "mine", &mine.to_string_lossy()],
    );
    assert_eq!(worktree::ensure(&repo, "mine").unwrap().path, mine);
    let e = worktree::remove(&mine).unwrap_err();
    assert!(e.contains("made some other way and is kept"), "{e}");
    assert!(mine.join("README").is_file());
}

fn pokeshell(env: &PiEnv, home: &ServerHome, dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pokeshell"))
        .args(args)
        .env_clear()
        .envs(env.env_vars())
        .env("XDG_RUNTIME_DIR", home.runtime_dir())
        .env("XDG_STATE_HOME", home.state_dir())
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run pokeshell")
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Two pi processes starting at once on a loaded 2-core machine may take a while each.
const AGENTS_WAIT: Duration = Duration::from_secs(45);

#[track_caller]
fn wait_file(path: &Path, content: &str) {
    let deadline = Instant::now() + AGENTS_WAIT;
    while std::fs::read_to_string(path).ok().as_deref() != Some(content) {
        assert!(
            Instant::now() < deadline,
            "{} never held {content:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_agents_in_two_worktrees_each_edit_their_own_files() {
    let (tmp, repo) = repo();
    let home = ServerHome::new();
    let pi = pi_path().to_string_lossy().into_owned();
    let mut agents = Vec::new();
    for (branch, file) in [("feat/a", "a.txt"), ("feat/b", "b.txt")] {
        let model = model_server();
        model.push(Step::tool(
            "write",
            json!({"path": file, "content": format!("{branch}\n")}),
        ));
        model.push(Step::text(format!("wrote {file}")));
        let env = PiEnv::new(&model.base_url());
        let sessions = env.session_dir().to_string_lossy().into_owned();
        let out = pokeshell(
            &env,
            &home,
            &repo,
            &[
                "new",
                "-d",
                "--worktree",
                branch,
                "--pi",
                &pi,
                "--",
                "--session-dir",
                &sessions,
                "write your file",
            ],
        );
        assert!(out.status.success(), "new --worktree {branch}: {}", said(&out));
        assert!(said(&out).contains("created the worktree"), "{}", said(&out));
        assert!(
            said(&out).contains(&format!("started session {}:{branch}", agents.len() + 1)),
            "{}",
            said(&out)
        );
        agents.push((model, env, branch, file));
    }
    let trees = tmp.path().join("app-worktrees");
    for (_, _, branch, file) in &agents {
        wait_file(&trees.join(branch).join(file), &format!("{branch}\n"));
    }
    assert!(!trees.join("feat/a/b.txt").exists() && !trees.join("feat/b/a.txt").exists());
    assert!(
        !repo.join("a.txt").exists() && !repo.join("b.txt").exists(),
        "the main checkout is untouched"
    );
    for (model, ..) in &agents {
        assert_eq!(model.last_user_text().as_deref(), Some("write your file"));
    }

    let (_, env, ..) = &agents[0];
    let out = pokeshell(env, &home, &repo, &["ls"]);
    let listing = said(&out);
    let row = |label: &str| {
        listing
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_default()
            .to_string()
    };
    assert!(row("1:feat/a").contains("feat/a*"), "{listing}");
    assert!(row("2:feat/b").contains("feat/b*"), "{listing}");
    let out = pokeshell(env, &home, &repo, &["ls", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("ls --json");
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["sessions"][0]["branch"], "feat/a");
    assert_eq!(doc["sessions"][0]["dirty"], true);

    // The side pane and the switcher of an attached terminal show both branches with their changes.
    let mut cmd = portable_pty::CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["attach", "feat/b"]);
    env.apply(&mut cmd);
    home.apply(&mut cmd);
    let mut pty = support::pty::Pty::spawn(cmd, 40, 140);
    pty.wait_until("both branches, changed, in the side pane", WAIT, |s| {
        let side = support::shell::side(s);
        side.contains("1 feat/a* ") && side.contains("▸2 feat/b* ")
    });
    pty.send([0x1d, b'w']);
    pty.wait_for_text("[feat/a*]", WAIT);
    pty.send("\x1b");
    pty.wait_for_text_gone("[feat/a*]", WAIT);
    pty.send([0x1d, b'd']);
    assert_eq!(pty.wait_exit(WAIT), 0);

    // A tree with changes: refused, and the session goes on.
    let out = pokeshell(env, &home, &repo, &["kill", "feat/a", "--remove-worktree"]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(said(&out).contains("has uncommitted changes"), "{}", said(&out));
    assert!(said(&out).contains("the session goes on"), "{}", said(&out));
    assert!(trees.join("feat/a/a.txt").is_file());
    assert!(said(&pokeshell(env, &home, &repo, &["ls"])).contains("1:feat/a"));

    let a = trees.join("feat/a");
    git(&a, &["add", "a.txt"]);
    git(&a, &["commit", "-q", "-m", "a"]);
    let out = pokeshell(env, &home, &repo, &["kill", "feat/a", "--remove-worktree"]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("removed the worktree"), "{}", said(&out));
    assert!(!a.exists());
    let listing = said(&pokeshell(env, &home, &repo, &["ls"]));
    assert!(
        !listing.contains("1:feat/a") && listing.contains("2:feat/b"),
        "{listing}"
    );
    assert!(
        trees.join("feat/b/b.txt").is_file(),
        "the other agent's tree is untouched"
    );
}

#[test]
fn new_with_a_branch_git_refuses_says_so_and_creates_nothing() {
    let (tmp, repo) = repo();
    let home = ServerHome::new();
    let env = PiEnv::new("http://127.0.0.1:9");
    let before = branches(&repo);
    let pi = pi_path().to_string_lossy().into_owned();
    let out = pokeshell(
        &env,
        &home,
        &repo,
        &["new", "-d", "--worktree", "bad..name", "--pi", &pi],
    );
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("\"bad..name\" is not a branch name git accepts; nothing was created"));
    assert_eq!(branches(&repo), before);
    assert!(!tmp.path().join("app-worktrees").exists());
    assert!(home.server_pid().is_none(), "no session, no server");

    // Issue 34, low 6: a branch git accepts but a session may not be named after (a bidi mark) made
    // the branch and the worktree, and only then was the name refused, the mark printed raw.
    let out = pokeshell(
        &env,
        &home,
        &repo,
        &["new", "-d", "--worktree", "feat\u{202e}x", "--pi", &pi],
    );
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("feat\\u{202e}x"), "{}", said(&out));
    assert!(!said(&out).contains('\u{202e}'), "{}", said(&out));
    assert_eq!(branches(&repo), before);
    assert!(!tmp.path().join("app-worktrees").exists());
    assert!(home.server_pid().is_none());
}
