//! A recording ntfy on loopback, the test's own: it keeps every request (path, headers, body) and
//! answers each as told: at once with 200, with another status, or only after a while (a slow
//! ntfy). And a minimal HTTP client for the web view's capability links.
#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the recorder answers one request.
#[derive(Clone, Copy, Debug)]
pub enum Answer {
    Ok,
    Status(u16),
    /// Answers 200 only after this long.
    Late(Duration),
}

#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: String,
    pub at: Instant,
}

pub struct Recorder {
    pub addr: String,
    seen: Arc<Mutex<Vec<Request>>>,
    answers: Arc<Mutex<VecDeque<Answer>>>,
}

impl Recorder {
    /// Listens on a free loopback port; answers `answers` in turn, then 200.
    pub fn start(answers: &[Answer]) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("the recorder listens");
        let addr = listener.local_addr().expect("its address").to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new(Mutex::new(answers.iter().copied().collect::<VecDeque<_>>()));
        let (s, q) = (seen.clone(), queue.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (s, q) = (s.clone(), q.clone());
                std::thread::spawn(move || serve(stream, &s, &q));
            }
        });
        Recorder {
            addr,
            seen,
            answers: queue,
        }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits until `n` requests came; fails after `within`.
    #[track_caller]
    pub fn wait(&self, n: usize, within: Duration) -> Vec<Request> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.requests();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "the recording ntfy got {} request(s), not {n}, within {within:?}",
                got.len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn serve(mut stream: TcpStream, seen: &Mutex<Vec<Request>>, answers: &Mutex<VecDeque<Answer>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(req) = read_request(&mut stream) else {
        return;
    };
    seen.lock().unwrap().push(req);
    let answer = answers.lock().unwrap().pop_front().unwrap_or(Answer::Ok);
    let status = match answer {
        Answer::Ok => 200,
        Answer::Status(s) => s,
        Answer::Late(wait) => {
            std::thread::sleep(wait);
            200
        }
    };
    let body = r#"{"id":"x","event":"message"}"#;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.lines();
    let mut first = lines.next()?.split_whitespace();
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..]).into_owned();
    Some(Request {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
    })
}

/// `METHOD url` against the web view (plain HTTP on loopback): the status code and the body.
pub fn http(method: &str, url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").expect("an http:// link");
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let mut s = TcpStream::connect(host).expect("connect to the web view");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("a read timeout");
    let request =
        format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).expect("send the request");
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_string());
    (status, body)
}
