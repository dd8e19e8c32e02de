//! Review what an agent changed, end to end on real pi with the scripted model, in a git repository
//! the test makes: the agent (scripted) works in a worktree `new --worktree` made, commits one
//! change and leaves another uncommitted with a new file; the main checkout moves on meanwhile.
//! `pokeshell diff` shows the agent's changes and none of the main checkout's; prefix+r shows them
//! in a tmux pane (and only there); in headless Chromium at 390 px the Changes view shows them,
//! follows the agent's next change, and a review of two comments reaches the model as one message
//! quoting both files, lines and texts.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::browser::{Browser, click, web_login};
use support::pi::{PiEnv, pi_path};
use support::pty::ServerHome;
use support::{START_WAIT, Step, WAIT, model_server};

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

/// pokeshell in `dir`, with the test's pi environment and server.
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

/// A private tmux server (its own socket, no user configuration) with one pane.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(command: &[String], cols: u16, rows: u16) -> Tmux {
        let socket = format!("pokeshell-review-{}", std::process::id());
        let tmux = Tmux { socket };
        let mut args: Vec<String> = ["-f", "/dev/null", "new-session", "-d", "-x"]
            .map(String::from)
            .to_vec();
        args.extend([cols.to_string(), "-y".into(), rows.to_string(), "--".into()]);
        args.extend(command.iter().cloned());
        tmux.run(&args);
        tmux.run(&["set-option".into(), "-g".into(), "status".into(), "off".into()]);
        tmux
    }

    fn run(&self, args: &[String]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys_hex(&self, bytes: &[u8]) {
        let mut args = vec!["send-keys".to_string(), "-H".to_string()];
        args.extend(bytes.iter().map(|b| format!("{b:02x}")));
        self.run(&args);
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane".into(), "-p".into()])
    }

    #[track_caller]
    fn wait(&self, what: &str, within: Duration, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the tmux pane never showed {what}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// `<tmp>/app`, a repository with one commit on `main`.
fn repo(tmp: &Path) -> PathBuf {
    let repo = tmp.join("app");
    std::fs::create_dir(&repo).expect("mkdir");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README.md"), "# app\n").expect("write");
    std::fs::write(repo.join("lib.txt"), "alpha\nbeta\ngamma\n").expect("write");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    repo
}

const COMMIT: &str = "printf '# app\\n\\nGreets the world.\\n' > README.md && \
                      git -c user.name=Agent -c user.email=agent@example.invalid commit -qam 'describe the app'";
const UNCOMMITTED: &str = "sed -i s/beta/BETA/ lib.txt && printf 'todo: tests\\n' > notes.txt";
const MORE: &str = "printf 'todo: docs\\n' >> notes.txt";
const DONE: &str = "Done: README.md committed; lib.txt and notes.txt changed, not committed.";
const THANKS: &str = "Thanks for the review: both points taken.";

/// The text of the last message of the model's last request, when it is the user's.
fn last_user_text(requests: &[support::RecordedRequest]) -> Vec<String> {
    requests.iter().filter_map(|r| r.last_user_text()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_s_changes_show_in_diff_the_overlay_and_the_browser_and_a_review_reaches_it() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let main = repo(tmp.path());
    let home = ServerHome::new();
    let model = model_server();
    model.push(Step::tool("bash", json!({ "command": COMMIT })));
    model.push(Step::tool("bash", json!({ "command": UNCOMMITTED })));
    model.push(Step::text(DONE));
    let env = PiEnv::new(&model.base_url());
    let pi = pi_path().to_string_lossy().into_owned();
    let sessions = env.session_dir().to_string_lossy().into_owned();
    let out = pokeshell(
        &env,
        &home,
        &main,
        &[
            "new",
            "-d",
            "--worktree",
            "feat",
            "--pi",
            &pi,
            "--",
            "--session-dir",
            &sessions,
            "do the work",
        ],
    );
    assert!(out.status.success(), "new --worktree: {}", said(&out));
    let tree = tmp.path().join("app-worktrees/feat");
    let deadline = Instant::now() + START_WAIT;
    while model.chat_requests().len() < 3 || git(&tree, &["status", "--porcelain"]).is_empty() {
        assert!(Instant::now() < deadline, "the agent never did its work");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The main checkout moves on after the worktree was made: none of it is the agent's.
    std::fs::write(main.join("later.txt"), "the main checkout's own work\n").expect("write");
    git(&main, &["add", "later.txt"]);
    git(&main, &["commit", "-q", "-m", "later on main"]);

    // `pokeshell diff`: both of the agent's changes, nothing of main's, plain when piped.
    let deadline = Instant::now() + WAIT;
    let text = loop {
        let out = pokeshell(&env, &home, &main, &["diff", "feat"]);
        let text = said(&out);
        if out.status.success() && text.contains("added notes.txt") {
            break text;
        }
        assert!(Instant::now() < deadline, "pokeshell diff: {text}");
        std::thread::sleep(Duration::from_millis(200));
    };
    for expected in [
        "Changes of 1:feat since ",
        "modified README.md (+2 -0)",
        "+Greets the world.",
        "modified lib.txt (+1 -1)",
        "-beta\n+BETA\n",
        "added notes.txt (+1 -0)",
        "+todo: tests",
    ] {
        assert!(text.contains(expected), "{expected:?} missing in:\n{text}");
    }
    assert!(
        !text.contains("later.txt"),
        "the main checkout's commit is not the agent's:\n{text}"
    );
    assert!(!text.contains('\x1b'), "plain when piped");
    let stat = said(&pokeshell(&env, &home, &main, &["diff", "1", "--stat"]));
    assert!(
        stat.contains(" 3 files changed, 4 insertions(+), 1 deletion(-)"),
        "{stat}"
    );
    let coloured = said(&pokeshell(
        &env,
        &home,
        &main,
        &["diff", "feat", "--color=always"],
    ));
    assert!(coloured.contains("\x1b[32m+BETA\x1b[m"), "{coloured}");
    let none = pokeshell(&env, &home, &main, &["diff", "nope"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(
        said(&none).contains("no session named \"nope\""),
        "{}",
        said(&none)
    );
    let outside = tempfile::tempdir().expect("a temp dir");
    let plain = pokeshell(
        &env,
        &home,
        outside.path(),
        &["--command", "sleep 600", "new", "-d", "--name", "plain"],
    );
    assert!(plain.status.success(), "{}", said(&plain));
    let not_git = pokeshell(&env, &home, &main, &["diff", "plain"]);
    assert_eq!(not_git.status.code(), Some(1));
    assert!(
        said(&not_git).contains("which is not in a git repository: it has no changes to show"),
        "{}",
        said(&not_git)
    );

    // prefix+r in a tmux pane: the file list, then a file's diff; Esc closes it. Another terminal
    // on the same session sees none of it.
    let mut command: Vec<String> = vec!["env".into(), "-i".into()];
    command.extend(env.env_vars().into_iter().map(|(k, v)| format!("{k}={v}")));
    command.push(format!("XDG_RUNTIME_DIR={}", home.runtime_dir().display()));
    command.push(format!("XDG_STATE_HOME={}", home.state_dir().display()));
    command.extend([
        env!("CARGO_BIN_EXE_pokeshell").to_string(),
        "attach".into(),
        "feat".into(),
    ]);
    let tmux = Tmux::start(&command, 130, 40);
    tmux.wait("pi in the pane", START_WAIT, |s| s.contains(DONE));
    let other = {
        let mut cmd = portable_pty::CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
        cmd.args(["attach", "feat"]);
        env.apply(&mut cmd);
        home.apply(&mut cmd);
        support::pty::Pty::spawn(cmd, 40, 130)
    };
    other.wait_for_text(DONE, WAIT);
    tmux.keys_hex(&[0x1d, b'r']);
    let list = tmux.wait("the changed files", WAIT, |s| s.contains("A notes.txt"));
    assert!(list.contains("Changes of 1:feat since"), "{list}");
    assert!(list.contains("3 files changed, +4 -1"), "{list}");
    assert!(
        list.contains("M README.md") && list.contains("M lib.txt"),
        "{list}"
    );
    assert!(!list.contains("later.txt"), "{list}");
    tmux.keys_hex(b"j\r");
    let file = tmux.wait("lib.txt's diff", WAIT, |s| s.contains("+BETA"));
    assert!(
        file.contains("1:feat · lib.txt") && file.contains("-beta"),
        "{file}"
    );
    assert!(
        !other.screen_text().contains("Changes of"),
        "the other terminal shows pi, not the overlay"
    );
    tmux.keys_hex(&[0x1b]);
    tmux.wait("the overlay closed", WAIT, |s| !s.contains("1:feat · lib.txt"));

    // The web view at a phone's width: the Changes view, followed as the agent goes on.
    let (_addr, link) = web_login(|args| pokeshell(&env, &home, &main, args));
    let b = Browser::start(390, 844).await;
    // A headless window starts at least 500 wide: the phone's width is set once it runs.
    b.client.set_window_size(390, 844).await.expect("a phone's width");
    b.client.goto(&link).await.expect("log in");
    b.wait_for(
        "the session list",
        "return document.querySelectorAll(\"li.session[data-name='1:feat']\").length",
        |v| v == &json!(1),
    )
    .await;
    click(&b, "li.session[data-name='1:feat'] button.changes").await;
    let files = "return [...document.querySelectorAll('#changes-view .cfile')].map(f => f.dataset.path)";
    b.wait_for("the three files", files, |v| {
        v == &json!(["README.md", "lib.txt", "notes.txt"])
    })
    .await;
    let lines =
        "return [...document.querySelectorAll('#changes-view .cline .ctext')].map(e => e.textContent)";
    let shown = b.eval(lines).await;
    for line in ["+Greets the world.", "−beta", "+BETA", "+todo: tests"] {
        assert!(
            shown.as_array().is_some_and(|a| a.contains(&json!(line))),
            "{line:?} in {shown}"
        );
    }
    b.screenshot("changes-phone.png").await;
    b.wait_for(
        "the view within 390 px ([page width, window width, widest element])",
        "const wide = [...document.querySelectorAll('#changes-view *')].map(e => [e.getBoundingClientRect().right, e.className]).sort((a, b) => b[0] - a[0])[0];
         return [document.documentElement.scrollWidth, window.innerWidth, wide]",
        |v| v[0].as_f64().is_some_and(|w| w <= 390.0) && v[1].as_f64().is_some_and(|w| w <= 390.0),
    )
    .await;

    // The agent changes a file again: the view follows without a reload.
    model.push(Step::tool("bash", json!({ "command": MORE })));
    model.push(Step::text("Added a second todo."));
    tmux.run(&["send-keys".into(), "-l".into(), "add a todo".into()]);
    tmux.keys_hex(b"\r");
    b.wait_for("the agent's next change", lines, |v| {
        v.as_array().is_some_and(|a| a.contains(&json!("+todo: docs")))
    })
    .await;

    // Two comments, kept in the page until sent, then one review.
    let comment = |path: &str, text: &str, words: &str| {
        format!(
            "const row = [...document.querySelectorAll(\"#changes-view .cfile[data-path='{path}'] .cline\")]
               .find(r => r.querySelector('.ctext').textContent === {text:?});
             row.click();
             const ed = document.querySelector('#changes-view .ceditor');
             ed.querySelector('textarea').value = {words:?};
             ed.querySelector('button').click();
             return document.getElementById('cv-count').textContent"
        )
    };
    b.eval(&comment("README.md", "+Greets the world.", "Say who it greets."))
        .await;
    let count = b
        .eval(&comment("lib.txt", "+BETA", "Keep beta in lower case."))
        .await;
    assert_eq!(count, json!("2 comments"));
    let kept = b
        .eval("return JSON.parse(sessionStorage.getItem('pokeshell-review:1:feat')).length")
        .await;
    assert_eq!(kept, json!(2), "the comments are kept in the tab until sent");
    b.eval(
        "document.querySelector(\"#changes-view .cfile[data-path='lib.txt']\").scrollIntoView(); return true",
    )
    .await;
    b.screenshot("changes-review-phone.png").await;
    model.push(Step::text(THANKS));
    let before = model.chat_requests().len();
    click(&b, "#review-send").await;
    let deadline = Instant::now() + WAIT;
    let review = loop {
        let texts = last_user_text(&model.chat_requests()[before..]);
        if let Some(t) = texts.iter().find(|t| t.contains("Review of your changes")) {
            break t.clone();
        }
        if Instant::now() > deadline {
            let page = b.eval("return document.getElementById('toasts').innerText").await;
            let log =
                std::fs::read_to_string(home.runtime_dir().join("pokeshell/server/log")).unwrap_or_default();
            let ledger = std::fs::read_to_string(home.state_dir().join("pokeshell/interventions.jsonl"))
                .unwrap_or_default();
            panic!(
                "the model never got the review: {texts:?}; the page said {page}; the server's log:\n{log}\nthe ledger:\n{ledger}\nthe pane shows:\n{}",
                tmux.screen()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for quoted in [
        "Review of your changes (2 comments).",
        "1. README.md, line 3:\n   > Greets the world.\n   Say who it greets.",
        "2. lib.txt, line 2:\n   > BETA\n   Keep beta in lower case.",
    ] {
        assert!(review.contains(quoted), "{quoted:?} not in the review:\n{review}");
    }
    let reviews = model
        .chat_requests()
        .iter()
        .filter_map(|r| r.last_user_text())
        .filter(|t| t.contains("Review of your changes"))
        .count();
    assert_eq!(reviews, 1, "one message for both comments");
    b.wait_for(
        "the comments gone once the review went",
        "return [sessionStorage.getItem('pokeshell-review:1:feat'), document.getElementById('cv-count').textContent]",
        |v| v == &json!([Value::Null, "Tap a line to comment on it"]),
    )
    .await;
    tmux.wait("the agent's answer", WAIT, |s| s.contains(THANKS));
    b.close().await;
    drop(other);
    home.end_server();
}
