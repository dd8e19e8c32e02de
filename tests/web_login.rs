//! Issue 34, medium 3 and low 5: the web view's login in a real browser (headless Chromium over
//! WebDriver) against the real server. Another local service, on another port of the same address,
//! receives no credential it could replay; a login link opened from another site's page logs in;
//! the page logs out, and ending every login (`pokeshell web --logout-all`, or the page's button)
//! ends every other page's socket.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::browser::{Browser, click, raw_request, web_login};
use support::pty::ServerHome;

/// What the page keeps its login under (the page's own storage, per origin).
const KEY: &str = "pokeshell.login";

/// Another service on this machine, on a port of its own: it answers every request with `page` and
/// keeps every request's head (what a dev server an agent started would see).
struct OtherService {
    addr: String,
    heads: Arc<Mutex<Vec<String>>>,
}

impl OtherService {
    fn start(page: String) -> OtherService {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the other service");
        let addr = listener.local_addr().expect("its address").to_string();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let kept = heads.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { return };
                let _ = s.set_read_timeout(Some(support::WAIT));
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                kept.lock()
                    .expect("the heads")
                    .push(String::from_utf8_lossy(&head).into_owned());
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = s.write_all(answer.as_bytes());
            }
        });
        OtherService { addr, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("the heads").clone()
    }
}

/// Another one-time login link for the web view already listening at `addr`.
fn login_again(home: &ServerHome, addr: &str) -> String {
    let out = home.pokeshell(&["web", "--listen", addr]);
    assert!(out.status.success(), "pokeshell web: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|w| w.contains("/login"))
        .expect("a login link")
        .to_string()
}

async fn wait_live(b: &Browser) {
    b.wait_for(
        "the page logged in and connected",
        "return document.getElementById('conn')?.textContent || document.body.innerText",
        |v| v == &json!("live"),
    )
    .await;
}

async fn wait_logged_out(b: &Browser, what: &str) {
    b.wait_for(
        what,
        "return document.getElementById('conn')?.textContent || ''",
        |v| v.as_str().is_some_and(|s| s.starts_with("logged out")),
    )
    .await;
}

async fn stored_login(b: &Browser) -> Option<String> {
    b.eval(&format!("return localStorage.getItem({KEY:?})"))
        .await
        .as_str()
        .map(str::to_owned)
}

/// Whether the web view at `addr` takes `credential` (its one check, asked with a raw request).
fn accepted(addr: &str, credential: &str) -> bool {
    let (status, _) = raw_request(
        addr,
        &format!(
            "GET /auth HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {credential}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert!(
        status.contains("204") || status.contains("401"),
        "the check answers: {status}"
    );
    status.contains("204")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_local_service_gets_no_credential_and_a_link_from_another_site_logs_in() {
    let home = ServerHome::new();
    let (addr, link) = web_login(|args| home.pokeshell(args));
    let b = Browser::start(1024, 768).await;
    b.client.goto(&link).await.expect("open the login link");
    wait_live(&b).await;

    // A page of another service on this machine, at another port of the same address: the browser
    // sends it nothing of the login, and that page can read nothing of it.
    let second_link = login_again(&home, &addr);
    let other = OtherService::start(format!(
        "<!doctype html><title>other</title><a id=\"go\" href=\"{second_link}\">pokeshell</a>"
    ));
    b.client
        .goto(&format!("http://{}/", other.addr))
        .await
        .expect("open the other service");
    let heads = other.heads();
    assert!(!heads.is_empty(), "the other service was asked");
    for head in &heads {
        assert!(
            !head.to_ascii_lowercase().contains("pokeshell") && !head.contains("Cookie:"),
            "the other service received a credential:\n{head}"
        );
    }
    assert_eq!(
        b.eval("return localStorage.length").await,
        json!(0),
        "another origin's page sees nothing of the login"
    );
    // Its page cannot open the web view's socket, with or without naming the protocol.
    let tried = b
        .client
        .execute_async(
            &format!(
                r#"const done = arguments[arguments.length - 1];
                const ws = new WebSocket("ws://{addr}/ws", ["pokeshell"]);
                ws.onopen = () => done("open");
                ws.onclose = () => done("closed");"#
            ),
            vec![],
        )
        .await
        .expect("the cross-site socket script");
    assert_eq!(tried, json!("closed"), "a socket from another port's page");

    // Low 5: the login link opened from another site's page logs this fresh browser in. The same
    // service reached as `localhost` is another site (127.0.0.1 at another port is the same site).
    let fresh = Browser::start(1024, 768).await;
    fresh
        .client
        .goto(&format!(
            "http://{}/",
            other.addr.replace("127.0.0.1", "localhost")
        ))
        .await
        .expect("open the other site");
    click(&fresh, "#go").await;
    wait_live(&fresh).await;
    let url = fresh.client.current_url().await.expect("the page's address");
    assert!(
        !url.as_str().contains("token"),
        "the token is gone from the address: {url}"
    );
    fresh.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logout_ends_one_login_and_ending_every_login_ends_every_page() {
    let home = ServerHome::new();
    let (addr, link_a) = web_login(|args| home.pokeshell(args));
    let link_b = login_again(&home, &addr);
    // Two pages with a login each: the same browser at two origins (127.0.0.1 and localhost).
    let b = Browser::start(1024, 768).await;
    b.client.goto(&link_a).await.expect("log in at 127.0.0.1");
    wait_live(&b).await;
    let a_window = b.client.window().await.expect("the first window");
    let cred_a = stored_login(&b).await.expect("the first page keeps its login");
    let other = b.client.new_window(false).await.expect("a second window");
    b.client
        .switch_to_window(other.handle)
        .await
        .expect("switch to it");
    let b_window = b.client.window().await.expect("the second window");
    b.client
        .goto(&link_b.replace("127.0.0.1", "localhost"))
        .await
        .expect("log in at localhost");
    wait_live(&b).await;
    let cred_b = stored_login(&b).await.expect("the second page keeps its login");
    assert_ne!(cred_a, cred_b);
    assert!(accepted(&addr, &cred_a) && accepted(&addr, &cred_b));

    // Log out in the first page: that login ends, the other goes on.
    b.client
        .switch_to_window(a_window.clone())
        .await
        .expect("back to the first");
    click(&b, "#logout").await;
    wait_logged_out(&b, "the first page logged out").await;
    assert_eq!(stored_login(&b).await, None, "the page forgot its login");
    assert!(
        !accepted(&addr, &cred_a),
        "the first login is refused after logging out"
    );
    assert!(accepted(&addr, &cred_b), "the other login goes on");

    // `pokeshell web --logout-all`: the other page's socket ends at once and its login is refused.
    let out = home.pokeshell(&["web", "--logout-all"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("ended 1 login"),
        "{out:?}"
    );
    b.client
        .switch_to_window(b_window.clone())
        .await
        .expect("to the second");
    wait_logged_out(&b, "the second page's socket ended by --logout-all").await;
    assert!(!accepted(&addr, &cred_b));

    // The page's own button does the same for every other page.
    let link_c = login_again(&home, &addr);
    let link_d = login_again(&home, &addr);
    b.client
        .goto(&link_c.replace("127.0.0.1", "localhost"))
        .await
        .expect("log in again");
    wait_live(&b).await;
    let cred_c = stored_login(&b).await.expect("a login");
    b.client.switch_to_window(a_window).await.expect("to the first");
    b.client.goto(&link_d).await.expect("log in again");
    wait_live(&b).await;
    click(&b, "#logout-all").await;
    wait_logged_out(&b, "this page after ending every login").await;
    b.client.switch_to_window(b_window).await.expect("to the second");
    wait_logged_out(&b, "the other page after the button ended every login").await;
    assert!(!accepted(&addr, &cred_c));
    let body: Value = b.eval("return document.body.innerText").await;
    assert!(
        body.as_str().is_some_and(|t| t.contains("pokeshell web")),
        "the page says how to log in again: {body}"
    );
    b.close().await;
}
