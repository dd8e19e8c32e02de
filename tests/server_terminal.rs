//! The server holds a client's terminal (`pokeshell::ipc::terminal`): a raw client of the real
//! server names a pseudo-terminal the test made, and the test plays the terminal's user on its
//! other side; then the real client, in a terminal the server takes or (under a test hook) does
//! not. No pi: the session runs `cat`, whose echo is the screen to look for.

#[path = "server_hardening/common.rs"]
mod common;
mod support;

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::Home;
use pokeshell_core::wire::{self, Down, Up};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use support::WAIT;
use support::pty::Pty;

/// A pseudo-terminal: its master (the terminal's user, played by the test), and its slave in raw
/// mode, as an attached client leaves it, opened by its path as the server opens it.
struct Terminal {
    pair: portable_pty::PtyPair,
    slave: OwnedFd,
    path: String,
}

impl Terminal {
    fn new() -> Terminal {
        let pair = native_pty_system()
            .openpty(PtySize::default())
            .expect("open a pty");
        let path = pair
            .master
            .tty_name()
            .expect("the pty's name")
            .to_string_lossy()
            .into_owned();
        let slave: OwnedFd = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&path)
            .expect("open the slave")
            .into();
        // SAFETY: termios calls on a valid descriptor with a local struct.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            libc::tcgetattr(slave.as_raw_fd(), &mut t);
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t);
        }
        Terminal { pair, slave, path }
    }

    fn master(&self) -> RawFd {
        self.pair.master.as_raw_fd().expect("the master's descriptor")
    }
}

fn write_fd(fd: RawFd, bytes: &[u8]) {
    // SAFETY: writing a live slice to a valid descriptor.
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    assert_eq!(n, bytes.len() as isize);
}

/// What `fd` gives within `wait` (everything readable until then, or until `until` is in it).
fn read_fd(fd: RawFd, wait: Duration, until: &str) -> String {
    let deadline = Instant::now() + wait;
    let mut got = Vec::new();
    while Instant::now() < deadline && !String::from_utf8_lossy(&got).contains(until) {
        let mut fds = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let left = deadline.saturating_duration_since(Instant::now()).as_millis() as i32;
        // SAFETY: one valid pollfd; then a read into a live buffer.
        unsafe {
            if libc::poll(&mut fds, 1, left.max(1)) != 1 {
                continue;
            }
            let mut buf = [0u8; 4096];
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            got.extend_from_slice(&buf[..n as usize]);
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// A client speaking the protocol itself; what the server sends is collected by a thread.
struct Client {
    stream: UnixStream,
    heard: mpsc::Receiver<Down>,
}

impl Client {
    fn attach(home: &Home, name: &str, terminal: &str) -> Client {
        let stream = home.open_attached(name, Some(terminal));
        let (tx, heard) = mpsc::channel();
        let mut reader = stream.try_clone().expect("clone");
        std::thread::spawn(move || {
            while let Ok(Some((kind, payload))) = wire::read_frame(&mut reader) {
                if let Ok(down) = wire::decode_down(kind, &payload)
                    && tx.send(down).is_err()
                {
                    return;
                }
            }
        });
        Client { stream, heard }
    }

    /// The messages until one `wanted` says it is the one (that one included).
    fn until(&self, what: &str, mut wanted: impl FnMut(&Down) -> bool) -> Vec<Down> {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let down = self
                .heard
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {what} within {WAIT:?}; heard {seen:?}"));
            let done = wanted(&down);
            seen.push(down);
            if done {
                return seen;
            }
        }
    }

    /// The messages that came so far.
    fn so_far(&self) -> Vec<Down> {
        self.heard.try_iter().collect()
    }
}

/// A server with one session, `cat`, running `cat`.
fn cat_session() -> Home {
    let home = Home::new();
    let out = home.pokeshell(&["--command", "cat", "new", "-d", "--name", "cat"]);
    assert!(out.status.success(), "{out:?}");
    home.wait_listed("cat");
    home
}

fn is_output(d: &Down) -> bool {
    matches!(d, Down::Output(_))
}

#[test]
fn the_server_reads_the_keys_and_writes_the_screen_of_the_terminal_a_client_names_and_lets_go_of_it() {
    let home = cat_session();

    let term = Terminal::new();
    let client = Client::attach(&home, "cat", &term.path);
    let heard = client.until("attached", |d| matches!(d, Down::Attached { .. }));
    let answer = heard
        .iter()
        .position(|d| *d == Down::Terminal { taken: true })
        .unwrap_or_else(|| panic!("the terminal was taken: {heard:?}"));
    let attached = heard.len() - 1;
    assert!(answer < attached, "the answer comes first: {heard:?}");

    // Typed on the terminal, echoed by the session's program, shown on the terminal.
    write_fd(term.master(), b"typed-into-the-terminal\r");
    let shown = read_fd(term.master(), WAIT, "typed-into-the-terminal");
    assert!(
        shown.contains("typed-into-the-terminal"),
        "the terminal shows: {shown:?}"
    );
    let on_socket: Vec<Down> = heard.into_iter().chain(client.so_far()).collect();
    assert!(
        !on_socket.iter().any(is_output),
        "no screen byte went by the socket: {on_socket:?}"
    );

    // Detached: the server lets go of the terminal before it says so; what is typed afterwards is
    // the shell's, left where it is.
    let mut stream = &client.stream;
    stream.write_all(&wire::encode_up(&Up::Detach)).expect("detach");
    client.until("detached", |d| matches!(d, Down::Detached { .. }));
    write_fd(term.master(), b"for-the-shell");
    // A server still reading would take them within this time (it reads as soon as they come).
    let after = read_fd(term.master(), Duration::from_millis(500), "never");
    assert!(
        !after.contains("for-the-shell"),
        "nothing was echoed after the detach: {after:?}"
    );
    let left = read_fd(term.slave.as_raw_fd(), Duration::from_secs(2), "for-the-shell");
    assert_eq!(
        left, "for-the-shell",
        "the keys after the detach were left to the terminal's owner"
    );
}

#[test]
fn a_terminal_the_server_cannot_open_stays_the_clients_and_the_screen_comes_by_the_socket() {
    let home = cat_session();
    // Not a terminal: the server says it did not take it.
    let client = Client::attach(&home, "cat", "/dev/null");
    let heard = client.until("attached", |d| matches!(d, Down::Attached { .. }));
    assert!(
        heard.contains(&Down::Terminal { taken: false }),
        "the server said it left the terminal to the client: {heard:?}"
    );
    let mut stream = &client.stream;
    stream
        .write_all(&wire::encode_input(b"typed-by-the-client\r"))
        .expect("input");
    let mut screen = Vec::new();
    client.until("the echo on the socket", |d| {
        if let Down::Output(bytes) = d {
            screen.extend_from_slice(bytes);
        }
        String::from_utf8_lossy(&screen).contains("typed-by-the-client")
    });
}

/// Whether the server of `pty`'s pokeshell holds the terminal `pty` runs in open.
fn held_by_the_server(pty: &Pty) -> bool {
    let tty = pty.tty_name().expect("the terminal's path");
    let pid = pty.home().and_then(|h| h.server_pid()).expect("a server");
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the server's descriptors")
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|link| link == tty))
}

/// The real client in a real terminal, both ways: the server takes the terminal, or (under the
/// test hook `POKESHELL_TEST_KEEP_TERMINAL`, as when it cannot open it) the client reads its keys
/// and writes the frames itself. Typing shows either way.
#[test]
fn a_client_types_and_sees_its_session_whether_the_server_takes_its_terminal_or_not() {
    for server_takes in [true, false] {
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
        cmd.args(["--command", "cat"]);
        cmd.env("TERM", "xterm-256color");
        cmd.env("LANG", "C.UTF-8");
        if !server_takes {
            cmd.env("POKESHELL_TEST_KEEP_TERMINAL", "1");
        }
        let mut pty = Pty::spawn(cmd, 40, 120);
        // Attached, the terminal raw: the side pane names the session's program.
        pty.wait_until("the side pane", WAIT, |s| s.contents().contains("command cat"));
        pty.send("typed-in-the-terminal\r");
        pty.wait_until("the echo", WAIT, |s| {
            s.contents().matches("typed-in-the-terminal").count() >= 2
        });
        assert_eq!(
            held_by_the_server(&pty),
            server_takes,
            "the server holds the terminal only when it took it"
        );
        pty.send([0x1d, b'd']);
        assert_eq!(pty.wait_exit(WAIT), 0, "detached");
        pty.wait_for_text("detached from", WAIT);
    }
}

/// How many times a thread of process `pid` went to sleep and was woken (`voluntary_ctxt_switches`).
fn wakes(pid: i32, tid: i32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).expect("the thread's status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("a count of voluntary switches")
}

/// docs/architecture.md, "Data path through the server": a key typed in an attached terminal is read
/// by the session's own thread and handed to the session there, so the server's main thread (the
/// core, and the connections of clients that follow no session) does not wake for it. Typed one at
/// a time, each after the echo of the one before; the main thread may wake for other things (the
/// core hears that the client typed, once a second), never once a key.
#[test]
fn keys_typed_in_an_attached_terminal_reach_the_session_without_waking_the_servers_main_thread() {
    let home = cat_session();
    let term = Terminal::new();
    let client = Client::attach(&home, "cat", &term.path);
    client.until("attached", |d| matches!(d, Down::Attached { .. }));
    write_fd(term.master(), b"w");
    assert!(
        read_fd(term.master(), WAIT, "w").contains('w'),
        "the echo of a first key"
    );
    let pid = home.server.server_pid().expect("a server");
    // The main thread's id is the process's.
    let before = wakes(pid, pid);
    let keys = 100;
    for i in 0..keys {
        let key = char::from(b'a' + (i % 26) as u8).to_string();
        write_fd(term.master(), key.as_bytes());
        let shown = read_fd(term.master(), WAIT, &key);
        assert!(shown.contains(&key), "the echo of key {i}: {shown:?}");
    }
    let woke = wakes(pid, pid) - before;
    println!("the server's main thread woke {woke} times for {keys} keys");
    assert!(
        woke < keys / 4,
        "the main thread woke {woke} times for {keys} keys: keys go through it"
    );
}
