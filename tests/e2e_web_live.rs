//! The web view's live side in a real browser (headless Chromium over WebDriver), on real pi 1.6.0
//! against the scripted model: an event that rings the bell (pokeshell aborting a stalled stream)
//! raises a browser notification naming the session, on a page that shows only the list; the list
//! is pushed when it changes, not asked for; the new-session form takes a name and a worktree
//! branch, and bad input gets a clear error while the server goes on.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use common::{cli, ls_row, start, wait_ls};
use serde_json::json;
use support::browser::{Browser, click, list_names, web_login};
use support::matrix::Matrix;
use support::pty::ServerHome;
use support::{Step, model_server};

const ANSWER: &str = "Figs: the answer the browser asked for.";

fn web_login_in(m: &Matrix) -> (String, String) {
    web_login(|args| cli(m, args))
}

/// Stands in for the browser's `Notification` and keeps what the page raises, so that the test
/// sees it (headless Chromium shows none). The page looks `Notification` up each time it raises
/// one, so its own code path runs: the permission it asks with 🔔 Notify me, then `new
/// Notification(title, {body})`.
const CATCH_NOTIFICATIONS: &str = r#"
window.__raised = [];
window.Notification = class {
  constructor(title, options) { window.__raised.push({ title, body: (options || {}).body || "" }); }
  static get permission() { return window.__permission || "default"; }
  static requestPermission() { window.__permission = "granted"; return Promise.resolve("granted"); }
};
return true;"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_rings_the_bell_raises_a_browser_notification_naming_the_session() {
    const STALL_SECONDS: u64 = 6;
    const RECOVERED: &str = "Back on track after the stall.";
    let home = ServerHome::new();
    let server = model_server();
    server.push(Step::text(ANSWER));
    server.push(Step::stall("Let me think", 1000));
    server.set_default(Step::text(RECOVERED));
    let mut m = start(
        &home,
        server,
        json!({"poke": {"streamStallSeconds": STALL_SECONDS}}),
    );
    let (_addr, link) = web_login_in(&m);
    let b = Browser::start(1280, 900).await;
    b.client.goto(&link).await.expect("open the login link");
    assert_eq!(list_names(&b).await, json!(["1:work"]));
    b.eval(CATCH_NOTIFICATIONS).await;
    click(&b, "#notify").await;
    b.wait_for(
        "the page saying notifications are on",
        "return document.getElementById('toasts').textContent",
        |v| v.as_str().is_some_and(|s| s.contains("notifications on")),
    )
    .await;
    assert_eq!(
        b.eval("return document.getElementById('notify').textContent")
            .await,
        json!("Notifying")
    );

    // The healthy twin: an answered prompt rings nothing.
    m.submit("a plain question");
    m.wait_text(ANSWER);
    b.wait_for(
        "the session idle again in the list",
        "return document.querySelector(\"li.session[data-name='1:work'] .state\")?.textContent",
        |v| v == &json!("idle"),
    )
    .await;
    assert_eq!(b.eval("return window.__raised").await, json!([]), "nothing rang");

    // The stream stalls; pokeshell aborts it on its own and rings the bell. The page shows the
    // list, not the session (the terminal has it), and still raises the notification.
    m.submit("think it over");
    m.wait_record("STALL-S1", "action", "aborted the agent");
    let raised = b
        .wait_for("a browser notification", "return window.__raised", |v| {
            v.as_array().is_some_and(|a| !a.is_empty())
        })
        .await;
    let title = raised[0]["title"].as_str().unwrap_or_default();
    let body = raised[0]["body"].as_str().unwrap_or_default();
    assert!(
        title.contains("1:work"),
        "the notification names the session: {raised}"
    );
    assert!(
        body.contains("pokeshell stopped a stalled model stream"),
        "and says what happened: {raised}"
    );
    let toasts = b
        .eval("return document.getElementById('toasts').textContent")
        .await;
    assert!(
        toasts
            .as_str()
            .is_some_and(|t| t.contains("1:work: ") && t.contains("pokeshell stopped")),
        "a note inside the page too: {toasts}"
    );
    m.wait_text(RECOVERED);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_is_pushed_when_it_changes_and_its_clocks_count_on_in_the_page() {
    let home = ServerHome::new();
    let m = start(&home, model_server(), json!({}));
    let (_addr, link) = web_login_in(&m);
    let b = Browser::start(1024, 768).await;
    b.client.goto(&link).await.expect("open the login link");
    assert_eq!(list_names(&b).await, json!(["1:work"]));
    b.wait_for(
        "the session idle",
        "return document.querySelector(\"li.session[data-name='1:work'] .state\")?.textContent",
        |v| v == &json!("idle"),
    )
    .await;
    let lists = "return PS.app.lists";
    let before = b.eval(lists).await;
    let age = "return Number(document.querySelector(\"li.session[data-name='1:work'] .age\").dataset.secs) + ' ' + document.querySelector(\"li.session[data-name='1:work'] .age\").textContent";
    let age_before = b.eval(age).await;
    // Nothing changes for three seconds: nothing is sent (a poll would have sent three lists),
    // and the age shown still counts on.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(b.eval(lists).await, before, "no list while nothing changed");
    let age_after = b.eval(age).await;
    assert_ne!(age_after, age_before, "the age counts on in the page");

    // A session comes: the page hears it at once.
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = cli(
        &m,
        &[
            "--command",
            "sleep 600",
            "new",
            "-d",
            "--name",
            "pushed",
            "--dir",
            &dir.path().to_string_lossy(),
        ],
    );
    assert!(out.status.success(), "pokeshell new -d: {out:?}");
    b.wait_for(
        "the new session in the list",
        "return [...document.querySelectorAll('li.session')].map(l => l.dataset.name)",
        |v| v == &json!(["1:work", "2:pushed"]),
    )
    .await;
    assert!(
        b.eval(lists).await.as_u64() > before.as_u64(),
        "it came as a pushed list"
    );
    // And what it says of itself once it runs (a report, not a new session) comes too.
    b.wait_for(
        "the new session past starting",
        "return document.querySelector(\"li.session[data-name='2:pushed'] .state\")?.textContent",
        |v| v.as_str().is_some_and(|s| !s.is_empty() && s != "starting"),
    )
    .await;
    b.close().await;
}

/// Fills the page's new-session form and starts it.
async fn new_session(b: &Browser, dir: &str, name: &str, worktree: &str) {
    let script = format!(
        "document.getElementById('new-dir').value = {dir:?}; document.getElementById('new-name').value = {name:?}; \
         document.getElementById('new-worktree').value = {worktree:?}; document.getElementById('new-go').click(); return true"
    );
    b.eval(&script).await;
}

/// Waits for the page to be back on the list with an error toast containing `words`.
async fn wait_refused(b: &Browser, words: &str) {
    b.wait_for(
        &format!("an error saying {words:?}, the list shown again"),
        "return !document.getElementById('list-view').classList.contains('hidden') && [...document.querySelectorAll('.toast.error')].map(t => t.textContent).join(' | ')",
        |v| v.as_str().is_some_and(|s| s.contains(words)),
    )
    .await;
    b.eval("document.querySelectorAll('.toast').forEach(t => t.remove()); return true")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_session_form_takes_a_name_and_a_worktree_and_refuses_bad_input_clearly() {
    let home = ServerHome::new();
    let pi = support::pi::pi_path().to_string_lossy().into_owned();
    let m = Matrix::builder()
        .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
        .env("POKESHELL_PI", &pi)
        .start(model_server());
    let (_addr, link) = web_login_in(&m);
    let b = Browser::start(1024, 768).await;
    b.client.goto(&link).await.expect("open the login link");
    assert_eq!(list_names(&b).await, json!(["1:work"]));

    let scratch = tempfile::tempdir().expect("a temp dir");
    let plain = scratch.path().join("plain");
    std::fs::create_dir(&plain).expect("a plain directory");
    let file = scratch.path().join("a-file");
    std::fs::write(&file, "").expect("a file");
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();

    new_session(&b, &s(&scratch.path().join("missing")), "", "").await;
    wait_refused(&b, "cannot use the directory").await;
    new_session(&b, &s(&file), "", "").await;
    wait_refused(&b, "is not a directory").await;
    new_session(&b, &s(&plain), "work", "").await;
    wait_refused(&b, "exists already").await;
    new_session(&b, &s(&plain), "7", "").await;
    wait_refused(&b, "numbers are taken").await;
    new_session(&b, &s(&plain), "", "feat").await;
    wait_refused(&b, "not in a git repository").await;
    // The form keeps what was typed, to be fixed rather than typed again.
    assert_eq!(
        b.eval("return document.getElementById('new-worktree').value")
            .await,
        json!("feat")
    );
    // The server and the page go on: nothing was started.
    assert_eq!(list_names(&b).await, json!(["1:work"]));
    assert_eq!(
        b.eval("return document.getElementById('conn').textContent").await,
        json!("live")
    );

    // A good one: a worktree of a new branch beside a repository, named after the branch.
    let repo = scratch.path().join("repo");
    std::fs::create_dir(&repo).expect("the repository's directory");
    for args in [
        &["init", "-q", "-b", "main"][..],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "start",
        ][..],
    ] {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .status()
            .expect("git");
        assert!(ok.success(), "git {args:?}");
    }
    new_session(&b, &s(&repo), "", "feat").await;
    b.wait_for("the new session open in the page", "return PS.app.current", |v| {
        v == &json!("2:feat")
    })
    .await;
    let tree = scratch.path().join("repo-worktrees/feat");
    assert!(tree.is_dir(), "the worktree was made at {}", tree.display());
    let listed = wait_ls(&m, "the new session in `ls`", |l| ls_row(l, "2:feat").is_some());
    assert!(
        ls_row(&listed, "2:feat").is_some_and(|r| r.contains("repo-worktrees/feat")),
        "{listed}"
    );
    b.close().await;
}
