//! Issue 34's second red-team pass over the capability links, on real pi against the scripted model:
//! a link's own page, opened in headless Chromium, acts when its button is pressed (the browser sent
//! `Origin: null` under the page's `no-referrer` policy and the web view refused every press with
//! 403); and "log out everywhere" ends the links a push carried, which used to stay good for 24
//! hours on a lost phone. And what it left: ntfy's access token went over plain http to another
//! machine (row 29); it is now kept back, and the log and `--show-config` say so.

use std::time::Duration;

use super::common::{cli, detach};
use super::recorder::{Recorder, http};
use super::support::Step;
use super::support::WAIT;
use super::support::browser::{Browser, click};
use super::support::pty::ServerHome;
use super::{ASKED, QUESTION, TOKEN, TOPIC, answered, asking, asking_with_login, body, button, wait_log};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_links_page_acts_in_a_browser_and_logging_out_everywhere_ends_the_links() {
    let home = ServerHome::new();
    let ntfy = Recorder::start(&[]);
    let (mut m, _link) = asking_with_login(&home, &ntfy, 1500, &[]);
    // The answer to the first Yes is the same question again: a second push, a second Yes link.
    m.server.push(Step::text(QUESTION).with_delay_ms(500));
    m.submit("update the schema");
    detach(&mut m.pty);
    let first = body(&ntfy.wait(1, WAIT)[0]);
    let yes = button(&first, "Yes");

    // The person opens the link's page (ntfy shows it; a phone's browser opens it) and presses Yes.
    let b = Browser::start(390, 844).await;
    b.client.goto(&yes).await.expect("open the link's page");
    b.wait_for("the link's page", "return document.body.innerText", |t| {
        t.as_str().is_some_and(|t| t.contains(ASKED))
    })
    .await;
    click(&b, "button[type=submit]").await;
    let after = b
        .wait_for("the answer's page", "return document.body.innerText", |t| {
            t.as_str()
                .is_some_and(|t| t.contains("Done.") || t.contains("refused") || t.contains("Refused"))
        })
        .await;
    assert!(
        after.as_str().is_some_and(|t| t.contains("Done.")),
        "the press did not act: {after}"
    );
    m.wait_trailing("Yes.");
    b.close().await;

    // The same question again, pushed; then the person logs out everywhere (a lost phone).
    let second = body(&ntfy.wait(2, WAIT)[1]);
    let (yes2, no2) = (button(&second, "Yes"), button(&second, "No"));
    let out = cli(&m, &["web", "--logout-all"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("one-tap links from pushes"),
        "{out:?}"
    );
    for link in [&yes2, &no2] {
        let (status, page) = http("POST", link);
        assert_eq!(status, 404, "{link}: {page}");
        assert!(page.contains("Nothing was sent"), "{page}");
    }
    m.assert_model_quiet(Duration::from_secs(2));
    assert_eq!(answered(&m, "Yes."), 1, "only the press before the logout");
    assert_eq!(answered(&m, "No."), 0);
}

/// Second pass, row 29: with `ntfyUrl` plain `http://` to another machine, the bearer token crossed
/// the network in the clear. Loopback only here: the server's HTTP proxy (its environment's
/// `http_proxy`) is a recorder of the test's own, so the push for `ntfy.invalid` reaches it, as a
/// router on the way would see it.
#[test]
fn the_ntfy_token_never_goes_over_plain_http_to_another_machine() {
    let home = ServerHome::new();
    let proxy = Recorder::start(&[]);
    let via = format!("http://{}", proxy.addr);
    // Loopback stays direct: pi reaches the scripted model there.
    let env = [
        ("http_proxy", via.as_str()),
        ("HTTP_PROXY", via.as_str()),
        ("no_proxy", "127.0.0.1,localhost"),
        ("NO_PROXY", "127.0.0.1,localhost"),
    ];
    let mut m = asking(&home, &proxy, 0, &env);
    let settings_path = m.env.agent_dir().join("settings.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).expect("the settings")).expect("JSON");
    settings["pokeshell"]["ntfyUrl"] = serde_json::json!(format!("http://ntfy.invalid/{TOPIC}"));
    std::fs::write(&settings_path, settings.to_string()).expect("write the settings");

    m.submit("update the schema");
    m.wait_text(ASKED);
    detach(&mut m.pty);
    let got = proxy.wait(1, WAIT);
    let r = &got[0];
    assert!(
        r.path.starts_with("http://ntfy.invalid/"),
        "through the proxy: {}",
        r.path
    );
    assert_eq!(body(r)["topic"], TOPIC, "the push went");
    assert_eq!(
        r.headers.get("authorization"),
        None,
        "the token went in the clear: {:?}",
        r.headers
    );
    assert!(!format!("{r:?}").contains(TOKEN));
    let log = wait_log(
        &home,
        "the access token would cross the network in the clear",
        WAIT,
    );
    assert!(!log.contains(TOKEN), "{log}");

    let shown = cli(&m, &["--show-config"]);
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned() + &String::from_utf8_lossy(&shown.stderr);
    assert!(
        shown.contains("pokeshell.ntfyUrl is plain http:// to ntfy.invalid: ntfy's access token is not sent"),
        "{shown}"
    );
}
