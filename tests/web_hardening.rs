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
    let mut cmd = home.command(&["web", "--listen", "127.0.0.1:0"]);
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
    link.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string()
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
