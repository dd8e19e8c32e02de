//! The web view reached from a phone (issue 33 item 5, issue 34 item 12), with the real binary and
//! headless Chromium on loopback: an allowed host name passes and any other is refused; the
//! built-in TLS serves the page and its WebSocket with a certificate the test makes; and the set-up
//! docs/web.md describes, a TLS reverse proxy in front under a name of its own, works whether the
//! proxy passes that name on as `Host` or replaces it with the upstream's address.

#[path = "server_hardening/common.rs"]
mod common;
#[path = "web_reach/proxy.rs"]
mod proxy;
mod support;

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use base64::Engine;
use common::Home;
use serde_json::{Value, json};
use support::browser::{Browser, raw_request};

/// A certificate for `names`, made for this test: its PEM, its key's PEM, and the base64 SHA-256
/// of its public key, which Chromium is told to accept (`--ignore-certificate-errors-spki-list`).
struct TestCert {
    cert: String,
    key: String,
    spki: String,
}

fn test_cert(names: &[&str]) -> TestCert {
    let made = rcgen::generate_simple_self_signed(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        .expect("a self-signed certificate");
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        &rcgen::PublicKeyData::subject_public_key_info(&made.signing_key),
    );
    TestCert {
        cert: made.cert.pem(),
        key: made.signing_key.serialize_pem(),
        spki: base64::engine::general_purpose::STANDARD.encode(digest.as_ref()),
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The global settings' pokeshell block, in an agent dir of the test's own.
fn agent_dir(home: &Home, pokeshell: Value) -> PathBuf {
    let dir = home.work.parent().expect("the test's dir").join("agent");
    std::fs::create_dir_all(&dir).expect("the agent dir");
    let settings = json!({ "pokeshell": pokeshell });
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("settings.json");
    dir
}

/// `pokeshell web --listen 127.0.0.1:PORT` with those settings: its output, and PORT.
fn web(home: &Home, agent: &Path) -> (std::process::Output, u16) {
    let port = free_port();
    let out = home
        .command(&["web", "--listen", &format!("127.0.0.1:{port}")])
        .env("PI_CODING_AGENT_DIR", agent)
        .output()
        .expect("run pokeshell web");
    (out, port)
}

fn login_link(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "pokeshell web: {out:?}");
    text.split_whitespace()
        .find(|w| w.contains("/login#token="))
        .unwrap_or_else(|| panic!("no login link in {text}"))
        .to_string()
}

fn get(port: u16, host: &str, origin: Option<&str>) -> String {
    let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
    let (status, _) = raw_request(
        &format!("127.0.0.1:{port}"),
        &format!("GET /auth HTTP/1.1\r\nHost: {host}\r\n{origin}Connection: close\r\n\r\n"),
    );
    status
}

#[test]
fn an_allowed_name_passes_and_any_other_name_is_refused() {
    let home = Home::new();
    let agent = agent_dir(&home, json!({"webHosts": "box.tailnet.test, proxy.example.test"}));
    let (out, port) = web(&home, &agent);
    login_link(&out);
    // Past the Host and Origin checks: `/auth` without a credential asks to log in (401), not
    // refused (421, 403).
    assert!(
        get(port, "box.tailnet.test", None).contains(" 401 "),
        "an allowed name"
    );
    assert!(
        get(port, "BOX.tailnet.test.:443", None).contains(" 401 "),
        "any port, any case"
    );
    assert!(
        get(port, &format!("127.0.0.1:{port}"), None).contains(" 401 "),
        "the address"
    );
    assert!(
        get(port, "box.tailnet.test", Some("https://box.tailnet.test")).contains(" 401 "),
        "its page behind TLS"
    );
    assert!(
        get(
            port,
            &format!("127.0.0.1:{port}"),
            Some("https://proxy.example.test")
        )
        .contains(" 401 "),
        "a proxy that sends its upstream's address as Host"
    );
    assert!(
        get(port, "evil.test", None).contains(" 421 "),
        "a name not allowed"
    );
    assert!(
        get(port, "x.box.tailnet.test", None).contains(" 421 "),
        "nor a name under it"
    );
    assert!(
        get(port, "box.tailnet.test", Some("https://evil.test")).contains(" 403 "),
        "another site's page"
    );
}

/// Starts Chromium accepting `cert` (and resolving `map` to loopback), opens `link`, and waits
/// until the page's WebSocket is live and the server's session list has reached it.
async fn page_goes_live(link: &str, cert: &TestCert, map: &[&str]) -> Browser {
    let mut args = vec![format!("--ignore-certificate-errors-spki-list={}", cert.spki)];
    if !map.is_empty() {
        let rules: Vec<String> = map.iter().map(|n| format!("MAP {n} 127.0.0.1")).collect();
        args.push(format!("--host-resolver-rules={}", rules.join(",")));
    }
    let b = Browser::start_with(800, 600, &args).await;
    b.client.goto(link).await.expect("open the login link");
    b.wait_for(
        "the page live over its WebSocket, with the session list",
        "return [document.getElementById('conn').textContent, PS.app.lists, location.protocol, window.isSecureContext]",
        |v| v[0] == json!("live") && v[1].as_u64() >= Some(1),
    )
    .await;
    let v = b.eval("return [location.protocol, window.isSecureContext]").await;
    assert_eq!(
        v,
        json!(["https:", true]),
        "a secure context: a service worker may register"
    );
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_tls_serves_the_page_and_its_socket() {
    let home = Home::new();
    let cert = test_cert(&["localhost", "127.0.0.1"]);
    let dir = home.work.parent().expect("the test's dir").to_path_buf();
    let (cert_path, key_path) = (dir.join("web.crt"), dir.join("web.key"));
    std::fs::write(&cert_path, &cert.cert).expect("write the certificate");
    std::fs::write(&key_path, &cert.key).expect("write the key");
    std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let agent = agent_dir(
        &home,
        json!({"webTlsCert": cert_path.to_string_lossy(), "webTlsKey": key_path.to_string_lossy()}),
    );
    // A key others can read is refused, with what to do; nothing listens.
    let (out, port) = web(&home, &agent);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("chmod 600"), "{out:?}");
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "nothing listens"
    );
    // That server had nothing else to serve and ends; the next `pokeshell web` starts another.
    let deadline = std::time::Instant::now() + support::WAIT;
    while home.server.server_pid().is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server without a web view never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let (out, port) = web(&home, &agent);
    let link = login_link(&out);
    assert!(
        link.starts_with(&format!("https://127.0.0.1:{port}/login#token=")),
        "the link says https: {link}"
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(!printed.contains("not encrypted"), "{printed}");
    // Plain HTTP to the TLS port gets no page.
    let (status, _) = raw_request(
        &format!("127.0.0.1:{port}"),
        &format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert!(!status.starts_with("HTTP/1.1"), "plain HTTP answered: {status}");
    let b = page_goes_live(&link, &cert, &[]).await;
    b.close().await;
}

async fn behind_a_proxy(host: proxy::HostHeader) {
    let home = Home::new();
    let proxy_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("the proxy's port");
    let proxy_port = proxy_listener.local_addr().expect("its address").port();
    let public = format!("https://pokeshell.test:{proxy_port}/");
    let agent = agent_dir(&home, json!({"webPublicUrl": public}));
    let (out, port) = web(&home, &agent);
    let link = login_link(&out);
    assert!(
        link.starts_with(&format!("{public}login#token=")),
        "the public address: {link}"
    );
    let cert = test_cert(&["pokeshell.test", "evil.test"]);
    let upstream = format!("127.0.0.1:{port}").parse().expect("an address");
    proxy::start(proxy_listener, &cert.cert, &cert.key, upstream, host);

    let b = page_goes_live(&link, &cert, &["pokeshell.test", "evil.test"]).await;
    if host == proxy::HostHeader::Keep {
        // Another name pointed at the same proxy (DNS rebinding) is refused.
        b.client
            .goto(&format!("https://evil.test:{proxy_port}/"))
            .await
            .expect("open the other name");
        let text = b.body_text().await;
        assert!(text.contains("refused") && text.contains("Host"), "{text}");
    }
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reverse_proxy_that_passes_the_name_on_serves_the_page_and_its_socket() {
    behind_a_proxy(proxy::HostHeader::Keep).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reverse_proxy_that_sends_its_upstreams_address_serves_the_page_and_its_socket() {
    behind_a_proxy(proxy::HostHeader::Upstream).await;
}
