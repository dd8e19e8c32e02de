//! Away from the keyboard (docs/away.md), end to end on real pi 1.6.0 against the scripted model,
//! with a recording ntfy of the test's own on loopback: a question while nobody is attached brings
//! one push naming the session, quoting the question, with one-tap answers; the answer's link
//! reaches the agent once (the model receives it), and used again, for an answered event, expired
//! or guessed, a link is refused and sends nothing. The healthy twins: a person typing at the
//! session, or a page showing it, gets no push. An ntfy that is slow, answers 500 or is down is
//! logged and retried within a bound, and never holds the session.

#[path = "e2e_server/common.rs"]
mod common;
#[path = "e2e_web/push_service.rs"]
#[allow(dead_code)]
mod push_service;
#[path = "e2e_away/recorder.rs"]
mod recorder;
#[path = "e2e_away/second_pass.rs"]
mod second_pass;
#[path = "e2e_away/speed.rs"]
mod speed;
mod support;

use std::time::{Duration, Instant};

use common::{cli, client, detach, wait_ready};
use recorder::{Answer, Recorder, Request, http};
use serde_json::{Value, json};
use support::browser::web_login;
use support::matrix::Matrix;
use support::pty::ServerHome;
use support::{Step, WAIT, model_server};

const QUESTION: &str = "The schema is updated.\n\nShould I also migrate the old rows?";
const ASKED: &str = "Should I also migrate the old rows?";
const GOING_ON: &str = "Migrating the old rows now.";
const TOPIC: &str = "pokeshell-e2e-topic-x7Q";
const TOKEN: &str = "tk_e2e_secret_4fz";
/// Longer than a push takes, shorter than the time anyone counts as away (3 minutes).
const QUIET: Duration = Duration::from_secs(4);

/// A session whose first answer (after `delay_ms`) is the question, pushing to `ntfy`; the web view
/// listens. `env`: more of the environment (the server's too).
fn asking(home: &ServerHome, ntfy: &Recorder, delay_ms: u64, env: &[(&str, &str)]) -> Matrix {
    asking_with_login(home, ntfy, delay_ms, env).0
}

/// [`asking`], with the web view's one-time login link.
pub fn asking_with_login(
    home: &ServerHome,
    ntfy: &Recorder,
    delay_ms: u64,
    env: &[(&str, &str)],
) -> (Matrix, String) {
    let server = model_server();
    server.push(Step::text(QUESTION).with_delay_ms(delay_ms));
    server.set_default(Step::text(GOING_ON));
    let settings = json!({
        "poke": {"postCompactCooldownSeconds": 1},
        "pokeshell": {
            "injectionCooldownSeconds": 1,
            "sidePaneWidth": 48,
            "ntfyUrl": format!("http://{}/{TOPIC}", ntfy.addr),
        }
    });
    let mut b = Matrix::builder()
        .settings(settings)
        .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
        .env("POKESHELL_NTFY_TOKEN", TOKEN);
    for (k, v) in env {
        b = b.env(k, v);
    }
    let m = b.start(server);
    let (_, link) = web_login(|args| cli(&m, args));
    (m, link)
}

fn server_log(home: &ServerHome) -> String {
    std::fs::read_to_string(home.runtime_dir().join("pokeshell/server/log")).unwrap_or_default()
}

/// Polls the server's log until it holds `text`.
#[track_caller]
fn wait_log(home: &ServerHome, text: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let log = server_log(home);
        if log.contains(text) {
            return log;
        }
        assert!(
            Instant::now() < deadline,
            "the server's log never said {text:?}:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn body(r: &Request) -> Value {
    serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("ntfy got no JSON ({e}): {}", r.body))
}

/// The push's button labelled `label`: its URL.
fn button(push: &Value, label: &str) -> String {
    push["actions"]
        .as_array()
        .and_then(|a| a.iter().find(|b| b["label"] == label))
        .and_then(|b| b["url"].as_str())
        .unwrap_or_else(|| panic!("no {label} button in {push}"))
        .to_string()
}

/// How many requests ended on the person's message `text`.
fn answered(m: &Matrix, text: &str) -> usize {
    m.trailing_user_texts()
        .iter()
        .filter(|t| t.as_str() == text)
        .count()
}

#[test]
fn a_question_while_nobody_is_attached_is_pushed_and_its_link_reaches_the_agent_once() {
    let home = ServerHome::new();
    let ntfy = Recorder::start(&[]);
    let mut m = asking(&home, &ntfy, 1500, &[]);
    m.submit("update the schema");
    detach(&mut m.pty);
    let got = ntfy.wait(1, WAIT);
    let r = &got[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/"),
        "ntfy's JSON publishing"
    );
    assert_eq!(
        r.headers.get("authorization").map(String::as_str),
        Some(&*format!("Bearer {TOKEN}"))
    );
    let push = body(r);
    assert_eq!(push["topic"], TOPIC);
    assert_eq!(push["title"], "1:work: the agent asks you");
    assert!(
        push["message"].as_str().unwrap_or_default().ends_with(ASKED),
        "{push}"
    );
    assert_eq!(push["priority"], 4);
    let labels: Vec<&str> = push["actions"]
        .as_array()
        .map(|a| a.iter().filter_map(|b| b["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["Yes", "No", "Open"]);
    assert_eq!(push["actions"][0]["action"], "http");
    assert_eq!(push["actions"][0]["method"], "POST");
    assert_eq!(push["actions"][2]["action"], "view");
    let (yes, no) = (button(&push, "Yes"), button(&push, "No"));
    assert!(
        push["click"].as_str().is_some_and(|c| c.ends_with("/?session=1")),
        "{push}"
    );

    // Looking at a link (a preview, a prefetch) shows one button and sends nothing.
    let asked_before = m.chat().len();
    let (status, page) = http("GET", &yes);
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("<form method=\"post\">") && page.contains(">Yes</button>"),
        "{page}"
    );
    assert!(page.contains("Should I also migrate the old rows?"), "{page}");
    m.assert_model_quiet(Duration::from_secs(1));
    assert_eq!(m.chat().len(), asked_before);

    // The tap: the person's "Yes." reaches the agent, which goes on.
    let (status, page) = http("POST", &yes);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Done.") && page.contains("Yes."), "{page}");
    m.wait_trailing("Yes.");
    m.wait_record("AWAY-U1", "action", "from a push about the question");
    // Again: refused, nothing sent. The other answer of the same question: refused too.
    let (status, page) = http("POST", &yes);
    assert_eq!(status, 410, "{page}");
    assert!(
        page.contains("used already") && page.contains("Nothing was sent"),
        "{page}"
    );
    let (status, page) = http("POST", &no);
    assert_eq!(status, 409, "{page}");
    assert!(
        page.contains("moved on") && page.contains("nothing was sent"),
        "{page}"
    );
    m.wait_record("AWAY-U2", "declined", "was refused");
    // An attacker's tries: a guess of the right shape, something else, a link for another act.
    let base = yes.split("/act/").next().unwrap_or_default().to_string();
    for (guess, want) in [
        (format!("{base}/act/{}", "0123456789abcdef".repeat(4)), 404),
        (format!("{base}/act/..%2F..%2Fetc%2Fpasswd"), 404),
        (format!("{base}/act/{}", &yes[yes.len() - 63..]), 404),
    ] {
        let (status, page) = http("POST", &guess);
        assert_eq!(status, want, "{guess}: {page}");
        assert!(page.contains("not one pokeshell made"), "{page}");
    }
    m.assert_model_quiet(Duration::from_secs(2));
    assert_eq!(answered(&m, "Yes."), 1, "the answer reached the agent once");
    assert_eq!(answered(&m, "No."), 0);
    // Nothing secret in the server's log: not the token, not the topic, not a link.
    let log = server_log(&home);
    assert!(
        log.contains("ntfy: event") && log.contains("pushed to 127.0.0.1"),
        "{log}"
    );
    for secret in [TOKEN, TOPIC, &yes[yes.len() - 64..], &no[no.len() - 64..]] {
        assert!(!log.contains(secret), "the log shows a secret:\n{log}");
    }
    assert_eq!(ntfy.requests().len(), 1, "one push");
}

#[test]
fn an_expired_link_is_refused_and_sends_nothing() {
    let home = ServerHome::new();
    let ntfy = Recorder::start(&[]);
    let mut m = asking(&home, &ntfy, 1500, &[("POKESHELL_TEST_LINK_TTL_MS", "1500")]);
    m.submit("update the schema");
    detach(&mut m.pty);
    let push = body(&ntfy.wait(1, WAIT)[0]);
    let yes = button(&push, "Yes");
    std::thread::sleep(Duration::from_millis(1600));
    let (status, page) = http("POST", &yes);
    assert_eq!(status, 410, "{page}");
    assert!(
        page.contains("expired") && page.contains("Nothing was sent"),
        "{page}"
    );
    m.assert_model_quiet(Duration::from_secs(2));
    assert_eq!(answered(&m, "Yes."), 0);
}

#[test]
fn healthy_twin_a_person_typing_at_the_session_gets_no_push_until_their_terminal_goes() {
    let home = ServerHome::new();
    let ntfy = Recorder::start(&[]);
    let mut m = asking(&home, &ntfy, 0, &[]);
    m.submit("update the schema");
    m.wait_text(ASKED);
    let quiet = Instant::now() + QUIET;
    while Instant::now() < quiet {
        assert!(
            ntfy.requests().is_empty(),
            "a push to a person typing at the session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The twin that must push: the terminal goes away without a key typed since the question came
    // (a detach's prefix keys would be typing: they were there and saw it).
    m.pty.signal(libc::SIGHUP);
    m.pty.wait_exit(WAIT);
    let push = body(&ntfy.wait(1, WAIT)[0]);
    assert!(
        push["message"].as_str().unwrap_or_default().ends_with(ASKED),
        "{push}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthy_twin_a_visible_page_showing_the_session_gets_no_push_and_a_hidden_one_does() {
    use support::browser::{Browser, list_names};
    let home = ServerHome::new();
    let ntfy = Recorder::start(&[]);
    let (mut m, link) = asking_with_login(&home, &ntfy, 2500, &[]);
    m.server
        .push(Step::text("Copied. Should I drop the old table now?").with_delay_ms(2500));
    let b = Browser::start(1024, 768).await;
    b.client.goto(&link).await.expect("open the login link");
    list_names(&b).await;
    // A push's Open link: the page opens the session it names.
    let open = format!("{}?session=1", link.split("login#").next().unwrap_or_default());
    b.client.goto(&open).await.expect("open the session's link");
    b.wait_screen("mock-").await;
    // The terminal asks, then goes without another key; the page stays, visible.
    m.submit("update the schema");
    m.pty.signal(libc::SIGHUP);
    m.pty.wait_exit(WAIT);
    b.wait_screen(ASKED).await;
    let quiet = Instant::now() + QUIET;
    while Instant::now() < quiet {
        assert!(
            ntfy.requests().is_empty(),
            "a push while a page shows the session"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The page is hidden (another tab, the phone locked); another terminal asks the next thing and
    // goes: nobody sees it, and it is pushed.
    b.eval(
        "Object.defineProperty(document, 'visibilityState', {get: () => 'hidden', configurable: true}); \
         document.dispatchEvent(new Event('visibilitychange')); return true",
    )
    .await;
    let mut other = client(&m, &["attach"], 30, 120);
    wait_ready(&other);
    support::shell::submit(&mut other, &m.server, "yes, copy them");
    other.signal(libc::SIGHUP);
    other.wait_exit(WAIT);
    let push = body(&ntfy.wait(1, WAIT)[0]);
    assert!(
        push["message"]
            .as_str()
            .unwrap_or_default()
            .contains("drop the old table"),
        "{push}"
    );
    b.close().await;
}

#[test]
fn an_ntfy_that_is_slow_fails_or_is_down_is_retried_within_a_bound_and_never_holds_the_session() {
    let home = ServerHome::new();
    // The first attempt outlasts its 5 s deadline, the second gets a 500, the third goes through.
    let ntfy = Recorder::start(&[Answer::Late(Duration::from_secs(8)), Answer::Status(500)]);
    let mut m = asking(&home, &ntfy, 0, &[]);
    m.submit("update the schema");
    m.wait_text(ASKED);
    detach(&mut m.pty);
    ntfy.wait(1, WAIT);
    // While ntfy holds the push, the session answers at once.
    let mut again = client(&m, &["attach"], 30, 120);
    wait_ready(&again);
    support::shell::submit(&mut again, &m.server, "go on");
    again.wait_for_text(GOING_ON, WAIT);
    assert_eq!(ntfy.requests().len(), 1, "still the first, slow attempt");
    let got = ntfy.wait(3, Duration::from_secs(20));
    assert!(
        got[2].at.duration_since(got[0].at) < Duration::from_secs(12),
        "retried within the bound"
    );
    let log = wait_log(&home, "attempt 3)", WAIT);
    assert!(
        log.contains("did not answer in time (attempt 1 of 4); trying again"),
        "{log}"
    );
    assert!(
        log.contains("answered 500 Internal Server Error (attempt 2 of 4); trying again"),
        "{log}"
    );
    assert_eq!(body(&got[2])["title"], body(&got[0])["title"], "the same push");

    // Down: nothing listens at the address. Four attempts, then it gives up; the session goes on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let dead = closed.local_addr().expect("its address").to_string();
    drop(closed);
    let settings_path = m.env.agent_dir().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).expect("the settings")).expect("JSON");
    settings["pokeshell"]["ntfyUrl"] = json!(format!("http://{dead}/{TOPIC}"));
    std::fs::write(&settings_path, settings.to_string()).expect("write the settings");
    m.server.push(Step::text("Done. Should I delete the backup too?"));
    support::shell::submit(&mut again, &m.server, "finish up");
    again.wait_for_text("delete the backup too?", WAIT);
    again.signal(libc::SIGHUP);
    again.wait_exit(WAIT);
    let log = wait_log(
        &home,
        "cannot be reached (attempt 4 of 4); given up",
        Duration::from_secs(30),
    );
    assert!(
        log.contains("cannot be reached (attempt 1 of 4); trying again"),
        "{log}"
    );
    assert_eq!(ntfy.requests().len(), 3, "nothing more went to the old address");
}
