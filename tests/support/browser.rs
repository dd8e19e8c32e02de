//! Headless Chromium driven over WebDriver (chromedriver, both from the system's packages), for the
//! web view's tests: a fresh browser profile per test, pages waited on with deadlines.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use serde_json::{Value, json};

use super::WAIT;

pub struct Browser {
    pub client: Client,
    driver: Child,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn which(name: &str) -> String {
    for dir in std::env::var("PATH").unwrap_or_default().split(':') {
        let p = std::path::Path::new(dir).join(name);
        if p.is_file() {
            return p.to_string_lossy().into_owned();
        }
    }
    panic!("{name} is not installed: .ci/run installs it (apt-get install chromium chromium-driver)");
}

impl Browser {
    /// A headless Chromium with a window of `width`×`height` CSS pixels.
    pub async fn start(width: u32, height: u32) -> Browser {
        Browser::start_with(width, height, &[]).await
    }

    /// [`Browser::start`] with more of Chromium's switches (`--host-resolver-rules=…`, a test
    /// certificate to accept).
    pub async fn start_with(width: u32, height: u32, more: &[String]) -> Browser {
        let chromium = which("chromium");
        let port = free_port();
        let driver = Command::new(which("chromedriver"))
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let deadline = Instant::now() + WAIT;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut args: Vec<String> = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        args.push(format!("--window-size={width},{height}"));
        args.extend(more.iter().cloned());
        let caps = json!({
            "goog:chromeOptions": {
                "binary": chromium,
                "args": args,
            }
        });
        let Value::Object(caps) = caps else { unreachable!() };
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a WebDriver session with headless Chromium");
        Browser { client, driver }
    }

    /// Runs `script` in the page and returns what it returns.
    pub async fn eval(&self, script: &str) -> Value {
        self.client
            .execute(script, vec![])
            .await
            .expect("run a script in the page")
    }

    /// Polls `script` until `done` holds for what it returns; fails with `what` and the last value.
    pub async fn wait_for(&self, what: &str, script: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let v = self.client.execute(script, vec![]).await.unwrap_or(Value::Null);
            if done(&v) {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "the page never showed {what}; last: {v}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the session's screen in the page contains `text`.
    pub async fn wait_screen(&self, text: &str) -> String {
        let v = self
            .wait_for(
                &format!("{text:?} on pi's screen"),
                "return window.PS && PS.screenText ? PS.screenText() : ''",
                |v| v.as_str().is_some_and(|s| s.contains(text)),
            )
            .await;
        v.as_str().unwrap_or_default().to_string()
    }

    /// The visible text of the page's body.
    pub async fn body_text(&self) -> String {
        self.eval("return document.body.innerText")
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Saves a screenshot under target/web-screenshots/.
    pub async fn screenshot(&self, name: &str) -> std::path::PathBuf {
        let png = self.client.screenshot().await.expect("a screenshot");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/web-screenshots");
        std::fs::create_dir_all(&dir).expect("the screenshot dir");
        let path = dir.join(name);
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// A raw HTTP/1.1 request to `addr` with exactly these headers; returns the status line and the
/// whole answer (for the refusals a browser would not let a test provoke).
pub fn raw_request(addr: &str, request: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(addr).expect("connect to the web view");
    s.set_read_timeout(Some(WAIT)).expect("a read timeout");
    s.write_all(request.as_bytes()).expect("send the request");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    // The answers here are short and end the exchange (Connection: close).
    loop {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text.lines().next().unwrap_or_default().to_string();
    (status, text)
}

/// `pokeshell web` (run by `run`) on a free loopback port: the address (host:port) and the login link it printed.
pub fn web_login(run: impl Fn(&[&str]) -> std::process::Output) -> (String, String) {
    let out = run(&["web", "--listen", "127.0.0.1:0"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "pokeshell web: {out:?}");
    let link = text
        .split_whitespace()
        .find(|w| w.contains("/login#token="))
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

/// Clicks the element `css` selects.
pub async fn click(b: &Browser, css: &str) {
    let script = format!("document.querySelector({css:?}).click(); return true");
    b.eval(&script).await;
}

/// Waits for a session list that is not empty; the names in it.
pub async fn list_names(b: &Browser) -> Value {
    b.wait_for(
        "the session list",
        "return [...document.querySelectorAll('li.session')].map(l => l.dataset.name)",
        |v| v.as_array().is_some_and(|a| !a.is_empty()),
    )
    .await
}
