//! Issue 34: the web view's listener holds against connections that never finish. These run the real
//! `pokeshell` binary (client and server) in a runtime directory of the test's own with a stand-in pi
//! (the server's side is under test, not pi's), and talk to the web view over raw TCP on loopback.

#[path = "server_hardening/common.rs"]
mod common;
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use common::Home;
use support::WAIT;
use support::browser::raw_request;

/// `pokeshell web` on a free loopback port, the server started by it with these open-file limits
/// (the server inherits them from its first client): the address it listens on.
fn web_with_file_limits(home: &Home, soft: u64, hard: u64) -> String {
    web_started(home, soft, hard, &[]).0
}

/// `pokeshell web` on a free loopback port, the server started by it with these open-file limits
/// and `env`: the address it listens on and the login link.
fn web_started(home: &Home, soft: u64, hard: u64, env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = home.command(&["web", "--listen", "127.0.0.1:0"]);
    cmd.envs(env.iter().copied());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().expect("run pokeshell web");
    assert!(out.status.success(), "pokeshell web: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let link = text
        .split_whitespace()
        .find(|w| w.contains("/login"))
        .unwrap_or_else(|| panic!("no login link in {text}"));
    let addr = link
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    (addr, link.to_string())
}

/// The credential a page gets for the login link's token (what the login page's script does).
fn credential_for(addr: &str, link: &str) -> String {
    let token = link.rsplit("token=").next().unwrap_or_default();
    let body = format!("{{\"token\":\"{token}\"}}");
    let (status, answer) = raw_request(
        addr,
        &format!(
            "POST /login HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(status.contains("200"), "the login: {answer}");
    let json = &answer[answer.find('{').expect("a JSON answer")..];
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("JSON");
    v["credential"].as_str().expect("a credential").to_string()
}

/// A client's WebSocket text frame (masked, as a client's must be) of a payload under 64 KiB.
fn masked_text(payload: &[u8]) -> Vec<u8> {
    let mask = [0x12u8, 0x34, 0x56, 0x78];
    let mut frame = match u16::try_from(payload.len()) {
        Ok(n) if n < 126 => vec![0x81, 0x80 | n as u8],
        Ok(n) => [&[0x81u8, 0x80 | 126][..], &n.to_be_bytes()].concat(),
        Err(_) => panic!("a payload too long for this test's frames"),
    };
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    frame
}

/// How many clients `pokeshell ls --json` says are attached to session `name`.
fn attached(home: &Home, name: &str) -> u64 {
    let out = home.pokeshell(&["ls", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    doc["sessions"]
        .as_array()
        .and_then(|l| l.iter().find(|s| s["name"] == name))
        .and_then(|s| s["attached"].as_u64())
        .unwrap_or(0)
}

#[track_caller]
fn wait_attached(home: &Home, name: &str, want: u64, what: &str) {
    let deadline = Instant::now() + WAIT;
    while attached(home, name) != want {
        assert!(
            Instant::now() < deadline,
            "{what}: attached {}",
            attached(home, name)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The process's limit on open files, soft and hard, as /proc says.
fn file_limits(pid: i32) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("read limits");
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("a Max open files line");
    let mut nums = line.split_whitespace().filter_map(|w| w.parse::<u64>().ok());
    (nums.next().unwrap_or(0), nums.next().unwrap_or(0))
}

/// Up to `count` TCP connections to `addr` that send nothing; stops at the third in a row that
/// cannot connect within half a second (the listener's queue is full: nobody accepts).
fn idle_connections(addr: &str, count: usize) -> Vec<TcpStream> {
    let sock: std::net::SocketAddr = addr.parse().expect("an address");
    let mut held = Vec::new();
    let mut failed = 0;
    while held.len() < count && failed < 3 {
        match TcpStream::connect_timeout(&sock, Duration::from_millis(500)) {
            Ok(s) => {
                held.push(s);
                failed = 0;
            }
            Err(_) => failed += 1,
        }
    }
    held
}

/// Medium 1: about a thousand idle TCP connections (no token needed) used to take every file the
/// server may open, after which it accepted nothing, not even on its own socket (`ls`, `new` failed
/// with "did not answer the hello") and opened no PTY. Here the server starts with a soft limit of
/// 256 files under a hard one of 512 and 700 connections hold on: the server raised its soft limit
/// to the hard one, `ls` and `new` answer, a PTY opens, and the web view still answers a request.
#[test]
fn idle_web_connections_never_starve_the_server() {
    let home = Home::new();
    let addr = web_with_file_limits(&home, 256, 512);
    let pid = home.server.server_pid().expect("a server runs");
    let held = idle_connections(&addr, 700);
    assert!(held.len() > 300, "only {} connections were made", held.len());

    let ls = home.pokeshell(&["ls"]);
    assert!(ls.status.success(), "ls under the flood: {ls:?}");
    let new = home.new_detached("after-flood");
    assert!(new.status.success(), "new under the flood: {new:?}");
    home.wait_listed("after-flood");

    // The web view itself still answers a request that is sent whole.
    let (status, _) = raw_request(
        &addr,
        &format!("GET /login HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    );
    assert!(
        status.starts_with("HTTP/1.1 "),
        "the web view under the flood: {status:?}"
    );
    assert_eq!(
        file_limits(pid),
        (512, 512),
        "the server raises its soft limit to the hard one"
    );
    let open = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
    assert!(
        open < 256,
        "the web view holds its connections well below the limit: {open} files open"
    );
    drop(held);
}

/// Medium 1: a connection that sends part of a request and then nothing (slowloris) is closed by
/// the web view after its header timeout, instead of being held for ever.
#[test]
fn a_request_that_never_ends_is_closed() {
    let home = Home::new();
    let addr = web_with_file_limits(&home, 1024, 1024);
    let mut slow = TcpStream::connect(&addr).expect("connect");
    slow.write_all(format!("GET / HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes())
        .expect("send half a request");
    let started = Instant::now();
    slow.set_read_timeout(Some(WAIT + WAIT)).expect("a read timeout");
    let mut buf = [0u8; 256];
    let read = slow.read(&mut buf);
    assert!(
        matches!(read, Ok(0))
            || matches!(&read, Ok(n) if String::from_utf8_lossy(&buf[..*n]).contains("408")),
        "the half request was not closed within {:?}: {read:?}",
        WAIT + WAIT
    );
    assert!(
        started.elapsed() < WAIT + WAIT,
        "closed only after {:?}",
        started.elapsed()
    );
}

/// Medium 1, the idle side: a page's socket whose browser went away without a word (a phone that
/// left the network) is closed once it answered nothing, not even the pings, for the silence bound
/// (60 s; 2 s here through the test hook), and the server counts its client gone; before, it was
/// held, and counted as attached, for ever.
#[test]
fn a_page_that_answers_nothing_is_let_go() {
    let home = Home::new();
    let (addr, link) = web_started(&home, 1024, 1024, &[("POKESHELL_TEST_WEB_SILENCE_SECS", "2")]);
    assert!(home.new_detached("watched").status.success());
    home.wait_listed("watched");
    let credential = credential_for(&addr, &link);
    let mut page = page_socket(&addr, &credential);
    page.write_all(&masked_text(
        br#"{"type":"open","session":"watched","cols":80,"rows":24,"watch":true}"#,
    ))
    .expect("open the session");
    wait_attached(&home, "watched", 1, "the page attached");
    // From now on the page reads nothing and answers nothing.
    wait_attached(&home, "watched", 0, "the silent page let go");
    drop(page);
}

/// Issue 34, second pass: the answer's header `name`, lowercase, as `raw_request` gave it.
fn header_of<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next().unwrap_or_default();
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Second pass: the refusals of a foreign `Host` (421) and a foreign `Origin` (403) carried none of
/// the headers every other answer has (the policy, nosniff, no frames, no caching).
#[test]
fn refusals_carry_the_security_headers_too() {
    let home = Home::new();
    let addr = web_with_file_limits(&home, 1024, 1024);
    let port = addr.rsplit(':').next().unwrap_or_default();
    for (request, status) in [
        (
            format!("GET / HTTP/1.1\r\nHost: evil.example:{port}\r\nConnection: close\r\n\r\n"),
            "421",
        ),
        (
            format!(
                "POST /act/{} HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.example\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                "a".repeat(64)
            ),
            "403",
        ),
        (
            format!("GET /nothing-here HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
            "404",
        ),
    ] {
        let (line, answer) = raw_request(&addr, &request);
        assert!(line.contains(status), "{line}: {answer}");
        let csp = header_of(&answer, "content-security-policy").unwrap_or_default();
        assert!(
            csp.contains("default-src 'none'"),
            "{status} has no policy: {answer}"
        );
        for (name, value) in [
            ("x-content-type-options", "nosniff"),
            ("x-frame-options", "DENY"),
            ("cache-control", "no-store"),
            ("referrer-policy", "no-referrer"),
        ] {
            assert_eq!(header_of(&answer, name), Some(value), "{status}: {answer}");
        }
    }
}

/// Second pass: `POKESHELL_NTFY_TOKEN`, the documented way to give the server ntfy's token, was in
/// the environment of every session's program: pi, its bash tool, and so the model.
#[test]
fn the_ntfy_token_never_reaches_a_session() {
    let home = Home::new();
    let dump = home.work.join("env-dump");
    // pokeshell runs the line as `exec LINE`: a shell of its own runs the three steps.
    let line = format!(
        "sh -c 'env > {0}.tmp && mv {0}.tmp {0}; exec sleep 600'",
        dump.display()
    );
    let out = home
        .command(&["new", "-d", "--name", "envs", "--command", &line])
        .env("POKESHELL_NTFY_TOKEN", "tk_second_pass_secret")
        .output()
        .expect("run pokeshell new");
    assert!(out.status.success(), "{out:?}");
    let deadline = Instant::now() + WAIT;
    while !dump.exists() {
        assert!(Instant::now() < deadline, "the session never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    let env = std::fs::read_to_string(&dump).expect("the dump");
    assert!(env.contains("XDG_STATE_HOME="), "the client's environment: {env}");
    assert!(
        !env.contains("tk_second_pass_secret") && !env.contains("POKESHELL_NTFY_TOKEN"),
        "the session's program got ntfy's token:\n{env}"
    );
}

/// A subscription as the state directory keeps it, for an endpoint nobody answers.
fn one_subscription(home: &Home) -> std::path::PathBuf {
    let dir = home.state().join("push");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let file = dir.join("subscriptions.json");
    let sub = serde_json::json!({"subscriptions": [{
        "endpoint": "https://push.example/lost-phone",
        "p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
        "auth": "tBHItJI5svbpez7KI4CCXg",
        "origin": "https://box.example"
    }]});
    std::fs::write(&file, sub.to_string()).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    file
}

/// Second pass: "log out everywhere" (the lost phone's remedy) ended the logins but left the phone's
/// Web Push subscription: it went on receiving every question with buttons that answer it. Now
/// `pokeshell web --logout-all` forgets every subscription, with the server running or not.
#[test]
fn logging_out_everywhere_forgets_every_push_subscription() {
    let home = Home::new();
    let file = one_subscription(&home);
    let out = home.pokeshell(&["web", "--logout-all"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("forgot 1 device's Web Push subscription"), "{said}");
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(!kept.contains("lost-phone"), "no server: {kept}");

    let _addr = web_with_file_limits(&home, 1024, 1024);
    let file = one_subscription(&home);
    let out = home.pokeshell(&["web", "--logout-all"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("ended 0 logins")
            && said.contains("forgot 0 one-tap links")
            && said.contains("1 device's Web Push subscription"),
        "{said}"
    );
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(!kept.contains("lost-phone"), "a running server: {kept}");
}

/// Second pass: one browser's **Log out** (a borrowed or shared computer) left the Web Push
/// subscription its page handed over: that browser went on showing every question, with buttons
/// that answer it. Its Log out now forgets the subscriptions its pages handed over.
#[test]
fn logging_out_forgets_the_push_subscription_of_that_browser() {
    let home = Home::new();
    let (addr, link) = web_started(&home, 1024, 1024, &[]);
    let credential = credential_for(&addr, &link);
    let mut page = page_socket(&addr, &credential);
    let subscribe = serde_json::json!({
        "type": "push_subscribe",
        "endpoint": "https://push.example/borrowed-laptop",
        "keys": {
            "p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
            "auth": "tBHItJI5svbpez7KI4CCXg"
        },
        "origin": format!("http://{addr}")
    });
    page.write_all(&masked_text(subscribe.to_string().as_bytes()))
        .expect("subscribe");
    let file = home.state().join("push/subscriptions.json");
    let deadline = Instant::now() + WAIT;
    while !std::fs::read_to_string(&file).is_ok_and(|t| t.contains("borrowed-laptop")) {
        assert!(Instant::now() < deadline, "the subscription was never kept");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, answer) = raw_request(
        &addr,
        &format!(
            "POST /logout HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\nAuthorization: Bearer {credential}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    );
    assert!(status.contains("204"), "{status}: {answer}");
    let kept = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        !kept.contains("borrowed-laptop"),
        "the logged-out browser's subscription is kept: {kept}"
    );
    drop(page);
}

/// A page's WebSocket on the web view, logged in with `credential`, its upgrade answer read.
fn page_socket(addr: &str, credential: &str) -> TcpStream {
    let mut page = TcpStream::connect(addr).expect("connect");
    page.write_all(
        format!(
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\nSec-WebSocket-Protocol: pokeshell, pokeshell.login.{credential}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        .as_bytes(),
    )
    .expect("the upgrade");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        page.read_exact(&mut byte).expect("the upgrade's answer");
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    page
}

/// The next text frame from the server whose JSON `found` takes, within `within` (other frames
/// are passed over).
fn next_message(
    page: &mut TcpStream,
    within: Duration,
    found: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "no such message within {within:?}");
        page.set_read_timeout(Some(left)).expect("a timeout");
        let mut head = [0u8; 2];
        page.read_exact(&mut head).expect("a frame");
        let len = match head[1] & 0x7f {
            126 => {
                let mut n = [0u8; 2];
                page.read_exact(&mut n).expect("a length");
                u64::from(u16::from_be_bytes(n))
            }
            127 => {
                let mut n = [0u8; 8];
                page.read_exact(&mut n).expect("a length");
                u64::from_be_bytes(n)
            }
            n => u64::from(n),
        };
        let mut payload = vec![0u8; usize::try_from(len).expect("a length")];
        page.read_exact(&mut payload).expect("a payload");
        if head[0] & 0x0f != 1 {
            continue;
        }
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload)
            && found(&v)
        {
            return v;
        }
    }
}

/// Second pass (row 20): a review sent from the page to a session whose pi's bridge was not
/// connected was answered `reviewed ok:true "review sent"` at once, then a note said it was not
/// sent, and the page had forgotten the comments on `ok`: the person's words were lost. The answer
/// now says whether the supervisor sent it: a session whose program is not pi is refused at once,
/// and one whose bridge does not come within 10 s is refused then.
#[test]
fn a_review_that_could_not_be_sent_is_not_answered_as_sent() {
    let home = Home::new();
    let (addr, link) = web_started(&home, 1024, 1024, &[]);
    assert!(home.new_detached("rev").status.success(), "the stand-in pi");
    let plain = home.pokeshell(&["new", "-d", "--name", "plain", "--command", "sleep 600"]);
    assert!(plain.status.success(), "{plain:?}");
    let credential = credential_for(&addr, &link);
    let mut page = page_socket(&addr, &credential);
    // The web view knows both sessions.
    next_message(&mut page, WAIT, |v| {
        let names: Vec<&str> = v["sessions"]
            .as_array()
            .map(|l| l.iter().filter_map(|s| s["name"].as_str()).collect())
            .unwrap_or_default();
        v["type"] == "sessions"
            && ["rev", "plain"]
                .iter()
                .all(|n| names.iter().any(|m| m.ends_with(n)))
    });
    let review = |session: &str| {
        let msg = serde_json::json!({"type": "review", "session": session, "comments": [
            {"file": "a.txt", "line": 1, "side": "new", "text": "one", "comment": "why this?"}]});
        masked_text(msg.to_string().as_bytes())
    };
    let reviewed = |v: &serde_json::Value| v["type"] == "reviewed";

    page.write_all(&review("plain")).expect("a review");
    let answer = next_message(&mut page, WAIT, reviewed);
    assert_eq!(answer["ok"], false, "{answer}");
    let said = answer["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("was not sent") && said.contains("not pi"),
        "{answer}"
    );

    let began = Instant::now();
    page.write_all(&review("rev")).expect("a review");
    let answer = next_message(&mut page, Duration::from_secs(10) + WAIT, reviewed);
    assert_eq!(answer["ok"], false, "{answer}");
    let said = answer["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("was not sent") && said.contains("pi's bridge did not connect within 10 s"),
        "{answer}"
    );
    assert!(began.elapsed() >= Duration::from_secs(9), "{:?}", began.elapsed());
    drop(page);
}
