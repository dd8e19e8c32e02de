//! The web view in a real browser (headless Chromium over WebDriver), on real pi 1.6.0 against the
//! scripted model: `pokeshell web` prints a one-time login link; the browser logs in, sees the
//! session list, opens the session, sees pi's screen, types a prompt and sees the answer, pokes and
//! sees the intervention, and fits a phone's width without shrinking the desktop terminal's pi.
//! Refused: a wrong or used login, a foreign Host, a WebSocket from another site. Bad input on the
//! page's socket gets a clear error and the server goes on.

#[path = "e2e_server/common.rs"]
mod common;
#[path = "e2e_web/push_service.rs"]
mod push_service;
mod support;

use common::{cli, detach, ls_cell, start, wait_ls};
use push_service::{DevTools, PushService, TestSubscription, check_vapid};
use serde_json::json;
use support::browser::{Browser, click, list_names, raw_request, web_login};
use support::matrix::{COLS, Matrix};
use support::pty::ServerHome;
use support::{Step, model_server};

const ANSWER: &str = "Figs: the answer the browser asked for.";
const AFTER_POKE: &str = "Grapes: picked up after the poke.";
const QUESTION: &str = "The schema is updated.\n\nShould I also migrate the old rows?";
const ASKED: &str = "Should I also migrate the old rows?";
const GOING_ON: &str = "Migrating the old rows now.";

fn web_login_in(m: &Matrix) -> (String, String) {
    web_login(|args| cli(m, args))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_logs_in_opens_a_session_types_pokes_and_fits_a_phone() {
    let home = ServerHome::new();
    let server = model_server();
    let mut m = start(&home, server, json!({}));
    let (_addr, link) = web_login_in(&m);
    let b = Browser::start(1280, 900).await;

    b.client.goto(&link).await.expect("open the login link");
    // The login page hands its token over with a fetch, then goes to the page: wait for that.
    b.wait_for(
        "the login turning into the page, the token gone from the address",
        "return location.pathname + location.search + location.hash",
        |v| v == "/",
    )
    .await;
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
    b.wait_for(
        "the page saying to log in first",
        "return document.body.innerText",
        |v| v.as_str().is_some_and(|t| t.contains("log in first")),
    )
    .await;

    b.client.goto(&link).await.expect("log in");
    b.wait_for(
        "the page",
        "return document.getElementById('conn')?.textContent",
        |v| v == &json!("live"),
    )
    .await;
    let token = link.rsplit("token=").next().unwrap_or_default();
    let body = format!("{{\"token\":\"{token}\"}}");
    let (status, answer) = raw_request(
        &addr,
        &format!(
            "POST /login HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(
        status.contains("403") && answer.contains("refused"),
        "a used token: {status}"
    );

    // The login is no cookie (cookies go to every port of the host): the page keeps it itself.
    let cookies = b.client.get_all_cookies().await.expect("the cookies");
    assert!(cookies.is_empty(), "no cookie: {cookies:?}");
    let credential = b
        .eval("return localStorage.getItem('pokeshell.login')")
        .await
        .as_str()
        .expect("the page keeps its login")
        .to_string();

    let (status, _) = raw_request(
        &addr,
        &format!(
            "GET /auth HTTP/1.1\r\nHost: evil.example:{}\r\nAuthorization: Bearer {credential}\r\nConnection: close\r\n\r\n",
            addr.rsplit(':').next().unwrap_or_default()
        ),
    );
    assert!(status.contains("421"), "a foreign Host (DNS rebinding): {status}");
    let upgrade_as = |origin: &str, credential: &str| {
        format!(
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}\r\nSec-WebSocket-Protocol: pokeshell, pokeshell.login.{credential}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
    };
    let upgrade = |origin: &str| upgrade_as(origin, &credential);
    let (status, _) = raw_request(&addr, &upgrade("http://evil.example"));
    assert!(status.contains("403"), "a WebSocket from another site: {status}");
    let (status, _) = raw_request(&addr, &upgrade_as(&format!("http://{addr}"), "0123"));
    assert!(status.contains("401"), "a WebSocket with a wrong login: {status}");
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
            const ws = new WebSocket("ws://" + location.host + "/ws", PS.protocols());
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

/// Web Push (issue 33 item 3) end to end, on loopback: a page subscribes (with a subscription the
/// test made, pointed at a push service of the test's own: headless Chromium has no push service),
/// the stalled model stream pokeshell stops while nobody is attached is pushed, encrypted for that
/// subscription (decrypted here with ring, per RFC 8291) and signed with the VAPID key the page was
/// given; a subscription whose service answers 410 is dropped. The decrypted push is handed to the
/// page's service worker in Chromium (DevTools' `ServiceWorker.deliverPushMessage`): it shows the
/// notification with its buttons, and its "open" brings up the session's page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_nobody_saw_is_pushed_encrypted_and_its_yes_from_the_service_worker_reaches_the_model() {
    let home = ServerHome::new();
    let service = PushService::start();
    let server = model_server();
    // The question comes once the person who asked has left.
    server.push(Step::text(QUESTION).with_delay_ms(1500));
    server.set_default(Step::text(GOING_ON));
    let settings = json!({});
    let mut m = start(&home, server, settings);
    let (addr, link) = web_login_in(&m);
    let origin = format!("http://{addr}");
    let devtools_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let b = Browser::start_with(390, 844, &[format!("--remote-debugging-port={devtools_port}")]).await;
    b.client.goto(&link).await.expect("open the login link");
    assert_eq!(list_names(&b).await, json!(["1:work"]));

    // The page's service worker (a loopback page is a secure context) and the server's key.
    b.wait_for(
        "the service worker active",
        "return !!(PS.push.reg && PS.push.reg.active)",
        |v| v == &json!(true),
    )
    .await;
    b.eval("window.__key = null; PS.push.onKey = (k) => { window.__key = k; }; PS.push.send({type: 'push_key'}); return true")
        .await;
    let key = b
        .wait_for("the VAPID key", "return window.__key", |v| v.is_string())
        .await
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, &key)
            .map(|k| (k.len(), k[0])),
        Ok((65, 4)),
        "an uncompressed P-256 point: {key}"
    );

    // Two subscriptions: one the service keeps, one it has forgotten.
    let sub = TestSubscription::new();
    let gone = TestSubscription::new();
    for (endpoint, keys) in [
        (service.endpoint("/ok/1"), sub.keys()),
        (service.endpoint("/gone/2"), gone.keys()),
    ] {
        let msg = json!({ "type": "push_subscribe", "endpoint": endpoint, "keys": keys, "origin": origin });
        b.eval(&format!("PS.push.on = false; PS.push.send({msg}); return true"))
            .await;
        b.wait_for("the subscription kept", "return PS.push.on", |v| {
            v == &json!(true)
        })
        .await;
    }
    // Beside the ledger, in the state directory the server was started with.
    let store = m.ledger_path().with_file_name("push");
    let subs_file = store.join("subscriptions.json");
    let kept = std::fs::read_to_string(&subs_file).expect("the subscriptions' file");
    assert!(kept.contains("/ok/1") && kept.contains("/gone/2"), "{kept}");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |p: &std::path::Path| std::fs::metadata(p).expect("a push file").permissions().mode() & 0o777;
        assert_eq!(mode(&store), 0o700, "the push directory is the user's alone");
        assert_eq!(mode(&subs_file), 0o600);
        assert_eq!(
            mode(&store.join("vapid.json")),
            0o600,
            "the private key is the user's alone"
        );
    }

    // Nobody attached: the question is pushed.
    m.submit("update the schema");
    detach(&mut m.pty);
    let mut pushes = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    while pushes.len() < 2 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let p = service
            .pushed
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("the two pushes never came; got {pushes:?}"));
        pushes.push(p);
    }
    let push = pushes
        .iter()
        .find(|p| p.path == "/ok/1")
        .expect("the push to the kept subscription")
        .clone();
    assert!(pushes.iter().any(|p| p.path == "/gone/2"), "{pushes:?}");
    assert_eq!(
        push.headers.get("content-encoding").map(String::as_str),
        Some("aes128gcm")
    );
    assert_eq!(push.headers.get("urgency").map(String::as_str), Some("high"));
    assert!(
        push.headers
            .get("ttl")
            .is_some_and(|t| t.parse::<u64>().is_ok_and(|t| t > 0))
    );
    let authorization = push.headers.get("authorization").expect("a VAPID authorization");
    // The audience is the push service's scheme and host: web-push-native leaves a port out, which
    // matters only for a service off its scheme's default port (the browsers' are all on 443).
    check_vapid(authorization, &key, "http://127.0.0.1");
    assert!(
        !push.body.windows(8).any(|w| w == b"migrate "),
        "the body is not plaintext"
    );
    let plain = sub.decrypt(&push.body);
    let payload: serde_json::Value = serde_json::from_slice(&plain).expect("the push's JSON");
    assert_eq!(payload["title"], "1:work: the agent asks you", "{payload}");
    assert!(
        payload["body"].as_str().is_some_and(|t| t.ends_with(ASKED)),
        "{payload}"
    );
    assert_eq!(payload["url"], format!("{origin}/?session=1"), "{payload}");
    assert_eq!(payload["tag"], "pokeshell-1-question", "{payload}");
    let actions: Vec<(String, String)> = payload["actions"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    (
                        x["action"].as_str().unwrap_or_default().into(),
                        x["title"].as_str().unwrap_or_default().into(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        actions,
        [("yes", "Yes"), ("no", "No"), ("open", "Open")].map(|(a, t)| (a.to_string(), t.to_string())),
        "{payload}"
    );
    let yes = payload["actions"][0]["url"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        yes.starts_with(&format!("{origin}/act/")),
        "a capability link: {yes}"
    );
    // The forgotten subscription is dropped; the other is kept.
    common::wait_file(&subs_file, "the gone subscription dropped", support::WAIT, |t| {
        !t.contains("/gone/2") && t.contains("/ok/1")
    });

    // The same push in the page's service worker.
    let mut page = DevTools::attach(devtools_port, "page", &origin).await;
    page.call(
        "Browser.grantPermissions",
        json!({ "origin": origin, "permissions": ["notifications"] }),
    )
    .await;
    page.call("ServiceWorker.enable", json!({})).await;
    let regs = page
        .event("ServiceWorker.workerRegistrationUpdated", |p| {
            p["registrations"].as_array().is_some_and(|r| {
                r.iter()
                    .any(|r| r["scopeURL"] == format!("{origin}/") && r["isDeleted"] == false)
            })
        })
        .await;
    let registration = regs["registrations"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["scopeURL"] == format!("{origin}/")))
        .map(|r| r["registrationId"].as_str().unwrap_or_default().to_string())
        .expect("the page's registration");
    // A DevTools session on the worker too (the "open" below is run there).
    let mut worker = DevTools::attach(devtools_port, "service_worker", &origin).await;
    let data = String::from_utf8(plain).expect("UTF-8");
    let shown_js = "PS.push.reg.getNotifications().then(ns => { window.__shown = ns.map(n => ({title: n.title, body: n.body, tag: n.tag, actions: n.actions.map(a => a.action)})); }); return window.__shown";
    b.eval("window.__shown = null; return true").await;
    // A loaded machine's Chromium may start the worker's push handler late or drop a delivery made
    // while the worker starts; a push service delivers again, and so does this test (the same tag
    // replaces the notification, so a second delivery shows one).
    let mut shown = serde_json::Value::Null;
    for _ in 0..4 {
        page.call(
            "ServiceWorker.deliverPushMessage",
            json!({ "origin": origin, "registrationId": registration, "data": data }),
        )
        .await;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < until {
            shown = b.eval(shown_js).await;
            if shown.as_array().is_some_and(|a| !a.is_empty()) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        if shown.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
    }
    assert!(
        shown.as_array().is_some_and(|a| a.len() == 1),
        "the worker showed one notification: {shown}"
    );
    assert_eq!(shown[0]["title"], payload["title"], "{shown}");
    assert_eq!(shown[0]["body"], payload["body"], "{shown}");
    assert_eq!(shown[0]["tag"], payload["tag"], "{shown}");
    // Chromium shows two buttons; a tap on the notification itself opens the session.
    assert_eq!(shown[0]["actions"], json!(["yes", "no"]), "{shown}");

    // Its "open", as a tap does it: the page goes to the session.
    let tap = |action: &str| {
        json!({
            "expression": format!("self.registration.getNotifications({{tag: 'pokeshell-1-question'}}).then(ns => self.onAction(ns[0].data, '{action}')).then(() => true)"),
            "awaitPromise": true,
        })
    };
    worker.call("Runtime.evaluate", tap("open")).await;
    b.wait_for(
        "the session's page opened from the notification",
        "return PS.app.current || null",
        |v| v == &json!("1:work"),
    )
    .await;

    // Its Yes: the worker POSTs the capability link, and the person's "Yes." reaches the model once.
    worker.call("Runtime.evaluate", tap("yes")).await;
    m.wait_trailing("Yes.");
    b.wait_for(
        "the worker's word that it was done",
        "PS.push.reg.getNotifications({tag: 'pokeshell-done'}).then(ns => { window.__done = ns.map(n => n.body); }); return window.__done || null",
        |v| v == &json!(["Yes: done"]),
    )
    .await;
    // Used: a second tap sends nothing (the worker opens the refusal's page instead).
    worker.call("Runtime.evaluate", tap("yes")).await;
    m.assert_model_quiet(std::time::Duration::from_secs(2));
    let yes_count = m
        .trailing_user_texts()
        .iter()
        .filter(|t| t.as_str() == "Yes.")
        .count();
    assert_eq!(yes_count, 1, "the answer reached the agent once");
    b.close().await;
}
