//! Issue 34's second red-team pass over the capability links, on real pi against the scripted model:
//! a link's own page, opened in headless Chromium, acts when its button is pressed (the browser sent
//! `Origin: null` under the page's `no-referrer` policy and the web view refused every press with
//! 403); and "log out everywhere" ends the links a push carried, which used to stay good for 24
//! hours on a lost phone.

use std::time::Duration;

use super::common::{cli, detach};
use super::recorder::{Recorder, http};
use super::support::Step;
use super::support::WAIT;
use super::support::browser::{Browser, click};
use super::support::pty::ServerHome;
use super::{ASKED, QUESTION, answered, asking_with_login, body, button};

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
