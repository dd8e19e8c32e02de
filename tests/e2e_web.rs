//! The web view in a real browser (headless Chromium over WebDriver), on real pi 1.6.0 against the
//! scripted model: `pokeshell web` prints a one-time login link; the browser logs in, sees the
//! session list, opens the session, sees pi's screen, types a prompt and sees the answer, pokes and
//! sees the intervention, and fits a phone's width without shrinking the desktop terminal's pi.
//! Refused: a wrong or used login, a foreign Host, a WebSocket from another site. Bad input on the
//! page's socket gets a clear error and the server goes on.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use common::{cli, ls_cell, ls_row, start, wait_ls};
use serde_json::{Value, json};
use support::browser::{Browser, raw_request};
use support::matrix::{COLS, Matrix};
use support::pty::ServerHome;
use support::{Step, model_server};

const ANSWER: &str = "Figs: the answer the browser asked for.";
const AFTER_POKE: &str = "Grapes: picked up after the poke.";

/// `pokeshell web` on a free loopback port: the address (host:port) and the login link it printed.
fn web_login(run: impl Fn(&[&str]) -> std::process::Output) -> (String, String) {
    let out = run(&["web", "--listen", "127.0.0.1:0"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "pokeshell web: {out:?}");
    let link = text
        .split_whitespace()
        .find(|w| w.contains("/login?token="))
        .unwrap_or_else(|| panic!("no login link in {text}"))
        .to_string();
    let addr = link
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    (addr, link)
}

fn web_login_in(m: &Matrix) -> (String, String) {
    web_login(|args| cli(m, args))
}

async fn click(b: &Browser, css: &str) {
    let script = format!("document.querySelector({css:?}).click(); return true");
    b.eval(&script).await;
}

async fn list_names(b: &Browser) -> Value {
    b.wait_for(
        "the session list",
        "return [...document.querySelectorAll('li.session')].map(l => l.dataset.name)",
        |v| v.as_array().is_some_and(|a| !a.is_empty()),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_logs_in_opens_a_session_types_pokes_and_fits_a_phone() {
    let home = ServerHome::new();
    let server = model_server();
    let mut m = start(&home, server, json!({}));
    let (_addr, link) = web_login_in(&m);
    let b = Browser::start(1280, 900).await;

    b.client.goto(&link).await.expect("open the login link");
    let url = b.client.current_url().await.expect("the page's address");
    assert_eq!(
        url.path(),
        "/",
        "the login turns into the page, the token gone from the address"
    );
    assert_eq!(list_names(&b).await, json!(["1:work"]));

    click(&b, "li.session[data-name='1:work'] button.open").await;
    let screen = b.wait_screen("mock-").await;
    assert!(
        screen.contains("connected"),
        "pokeshell's side pane, as the terminal shows it: {screen}"
    );
    // A client like a terminal: counted in `pokeshell ls`.
    wait_ls(&m, "the browser attached", |l| {
        ls_cell(l, "1:work", "ATTACHED").as_deref() == Some("2")
    });

    m.server.push(Step::text(ANSWER));
    b.eval("document.getElementById('type-text').value = 'what does the web say?'; document.getElementById('type-send').click(); return true")
        .await;
    m.wait_trailing("what does the web say?");
    b.wait_screen(ANSWER).await;
    m.wait_text(ANSWER);

    m.server.push(Step::text(AFTER_POKE));
    click(&b, "#poke").await;
    m.wait_trailing("[Poke]");
    b.wait_screen(AFTER_POKE).await;
    // The list carries the intervention too.
    click(&b, "#back").await;
    b.wait_for(
        "the poke as the session's last intervention",
        "return document.querySelector(\"li.session[data-name='1:work'] .intervention\")?.textContent || ''",
        |v| v.as_str().is_some_and(|s| s.starts_with("last: ")),
    )
    .await;
    b.screenshot("list-desktop.png").await;
    click(&b, "li.session[data-name='1:work'] button.open").await;
    b.wait_screen(AFTER_POKE).await;
    b.screenshot("desktop.png").await;

    // A phone's width: everything fits, and a watching page leaves the desktop's size alone.
    b.client.set_window_size(390, 844).await.expect("phone width");
    b.wait_for(
        "the page within 390 px",
        "return document.documentElement.scrollWidth <= window.innerWidth && window.innerWidth <= 390",
        |v| v == &json!(true),
    )
    .await;
    let pane = b.eval("return PS.app.pane").await;
    assert_eq!(
        pane["cols"],
        json!(COLS),
        "the phone only watches: pi keeps the terminal's width"
    );
    let right = b
        .eval("return Math.max(...[...document.querySelectorAll('.keys button, .actions button')].map(e => e.getBoundingClientRect().right))")
        .await;
    assert!(
        right.as_f64().is_some_and(|r| r <= 390.0),
        "buttons within the width: {right}"
    );
    b.wait_screen(AFTER_POKE).await;
    b.screenshot("phone.png").await;
    click(&b, "#back").await;
    b.wait_for(
        "the list within 390 px",
        "return !document.getElementById('list-view').classList.contains('hidden') && document.documentElement.scrollWidth <= window.innerWidth",
        |v| v == &json!(true),
    )
    .await;
    b.screenshot("list-phone.png").await;
    click(&b, "li.session[data-name='1:work'] button.open").await;
    b.wait_screen(AFTER_POKE).await;

    // Kill asks first; "No" keeps the session, "Yes" ends it and the page goes back to the list.
    click(&b, "#kill").await;
    click(&b, "#kill-no").await;
    assert_eq!(m.pty.try_exit_code(), None, "not killed without the confirmation");
    click(&b, "#kill").await;
    click(&b, "#kill-yes").await;
    b.wait_for(
        "the list without the killed session",
        "return !document.getElementById('list-view').classList.contains('hidden') && document.querySelectorAll('li.session').length",
        |v| v == &json!(0),
    )
    .await;
    m.pty.wait_exit(support::WAIT);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_used_and_foreign_requests_are_refused_and_bad_input_gets_a_clear_error() {
    let home = ServerHome::new();
    let (addr, link) = web_login(|args| home.pokeshell(args));
    let b = Browser::start(1024, 768).await;

    let wrong = link.replace("token=", "token=0");
    b.client.goto(&wrong).await.expect("open a wrong link");
    assert!(b.body_text().await.contains("refused"), "a wrong token");
    b.client.goto(&format!("http://{addr}/")).await.expect("the page");
    assert!(b.body_text().await.contains("log in first"), "no cookie, no page");

    b.client.goto(&link).await.expect("log in");
    b.wait_for(
        "the page",
        "return document.getElementById('conn')?.textContent",
        |v| v == &json!("live"),
    )
    .await;
    let (status, body) = raw_request(
        &addr,
        &format!(
            "GET {} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n",
            &link[link.find("/login").unwrap_or(0)..]
        ),
    );
    assert!(
        status.contains("403") && body.contains("refused"),
        "a used token: {status}"
    );

    let cookies = b.client.get_all_cookies().await.expect("the cookies");
    let cookie = cookies
        .iter()
        .find(|c| c.name() == "pokeshell_session")
        .expect("the session cookie");
    assert_eq!(cookie.http_only(), Some(true));
    let cookie = format!("pokeshell_session={}", cookie.value());

    let (status, _) = raw_request(
        &addr,
        &format!(
            "GET / HTTP/1.1\r\nHost: evil.example:{}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n",
            addr.rsplit(':').next().unwrap_or_default()
        ),
    );
    assert!(status.contains("421"), "a foreign Host (DNS rebinding): {status}");
    let upgrade = |origin: &str| {
        format!(
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}\r\nCookie: {cookie}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
    };
    let (status, _) = raw_request(&addr, &upgrade("http://evil.example"));
    assert!(status.contains("403"), "a WebSocket from another site: {status}");
    // The twin: the same upgrade from the page's own origin is accepted.
    let mut own = std::net::TcpStream::connect(&addr).expect("connect");
    std::io::Write::write_all(&mut own, upgrade(&format!("http://{addr}")).as_bytes()).expect("send");
    let mut head = [0u8; 12];
    std::io::Read::read_exact(&mut own, &mut head).expect("an answer");
    assert_eq!(&head, b"HTTP/1.1 101", "the page's own upgrade");
    drop(own);

    // Bad input on the page's socket: each gets a clear error, the socket and the server go on.
    let answers = b
        .client
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
            const ws = new WebSocket("ws://" + location.host + "/ws");
            const errors = [];
            const steps = [
              () => ws.send("{not json"),
              () => ws.send(JSON.stringify({type: "open", session: "nope", cols: 80, rows: 24})),
              () => ws.send(JSON.stringify({type: "resize", cols: 0, rows: 24})),
              () => ws.send(new Uint8Array([1, 2, 3])),
              () => ws.send(JSON.stringify({type: "poke"})),
              () => ws.send("x".repeat(100000)),
            ];
            ws.onopen = () => steps.shift()();
            ws.onmessage = (ev) => {
              const m = JSON.parse(ev.data);
              if (m.type !== "error") return;
              errors.push(m.message);
              if (steps.length) steps.shift()();
            };
            ws.onclose = (ev) => done({errors, close: ev.code});"#,
            vec![],
        )
        .await
        .expect("the bad input script");
    let errors: Vec<String> = serde_json::from_value(answers["errors"].clone()).expect("the errors");
    assert_eq!(errors.len(), 5, "one clear error each: {errors:?}");
    assert!(errors[0].contains("did not understand"), "{errors:?}");
    assert!(errors[1].contains("no session named"), "{errors:?}");
    assert!(errors[2].contains("out of range"), "{errors:?}");
    assert!(errors[3].contains("text messages only"), "{errors:?}");
    assert!(errors[4].contains("open one first"), "{errors:?}");
    assert_eq!(
        answers["close"],
        json!(1009),
        "an oversized message closes that socket as too big"
    );

    // The page's own socket and the server go on.
    assert_eq!(
        b.eval("return document.getElementById('conn').textContent").await,
        json!("live")
    );
    let out = home.pokeshell(&["ls"]);
    assert!(out.status.success(), "the server goes on: {out:?}");
    b.close().await;
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
