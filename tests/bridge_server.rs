//! The bridge socket server against hand-written clients: handshake, bad input of every kind,
//! replacement of connections, refusal of other processes while one is live, replies, cleanup.

use std::time::Duration;

use pokeshell::bridge::protocol::{
    Command, ENV_SOCKET, ENV_TOKEN, MAX_LINE_BYTES, PROTOCOL_VERSION, PiEvent, SendMessage,
};
use pokeshell::bridge::server::ServerOptions;
use pokeshell::bridge::{BridgeEvent, BridgeHandle, BridgeServer, SendError};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc::Receiver;

const WAIT: Duration = Duration::from_secs(10);

struct Server {
    handle: BridgeHandle,
    events: Receiver<BridgeEvent>,
    _dir: tempfile::TempDir,
}

fn start() -> Server {
    start_with(Duration::from_secs(5))
}

fn start_with(hello_timeout: Duration) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let options = ServerOptions {
        parent_dir: Some(dir.path().to_owned()),
        hello_timeout,
        ..ServerOptions::default()
    };
    let (handle, events) = BridgeServer::start_with(options).unwrap();
    Server {
        handle,
        events,
        _dir: dir,
    }
}

impl Server {
    fn token(&self) -> String {
        let env = self.handle.env();
        let token = env.iter().find(|(k, _)| *k == ENV_TOKEN).unwrap();
        token.1.to_str().unwrap().to_owned()
    }

    async fn next(&mut self) -> BridgeEvent {
        tokio::time::timeout(WAIT, self.events.recv())
            .await
            .expect("no bridge event within the deadline")
            .expect("the event channel closed")
    }

    /// Skips nothing: the next event must match.
    async fn expect<T>(&mut self, what: &str, pick: impl FnOnce(BridgeEvent) -> Option<T>) -> T {
        let event = self.next().await;
        let shown = format!("{event:?}");
        pick(event).unwrap_or_else(|| panic!("expected {what}, got {shown}"))
    }

    async fn connect(&mut self) -> Client {
        let token = self.token();
        self.connect_with(hello_line(&token, PROTOCOL_VERSION)).await
    }

    async fn connect_with(&mut self, hello: String) -> Client {
        let mut client = Client::open(&self.handle).await;
        client.write_raw(hello.as_bytes()).await;
        client
    }

    /// Connects, checks the welcome and the Connected event; returns the client and its conn id.
    async fn connect_ok(&mut self) -> (Client, u64) {
        let mut client = self.connect().await;
        let welcome = client.read_json().await;
        assert_eq!(welcome, json!({"type": "welcome", "protocol": PROTOCOL_VERSION}));
        let conn = self
            .expect("Connected", |e| match e {
                BridgeEvent::Connected { conn, hello } => {
                    assert_eq!(hello.pid, 77);
                    Some(conn)
                }
                _ => None,
            })
            .await;
        (client, conn)
    }
}

struct Client {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Client {
    async fn open(handle: &BridgeHandle) -> Client {
        let stream = UnixStream::connect(handle.socket_path()).await.unwrap();
        let (r, w) = stream.into_split();
        Client {
            reader: BufReader::new(r),
            writer: w,
        }
    }

    async fn write_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    async fn send_event(&mut self, seq: u64, event: Value) {
        let line = json!({"type": "event", "seq": seq, "at": 1, "event": event}).to_string() + "\n";
        self.write_raw(line.as_bytes()).await;
    }

    /// The next line from the server, or None at end of stream.
    async fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        let n = tokio::time::timeout(WAIT, self.reader.read_line(&mut line))
            .await
            .expect("no line from the server within the deadline")
            .unwrap_or(0);
        (n > 0).then_some(line)
    }

    async fn read_json(&mut self) -> Value {
        let line = self.read_line().await.expect("the server closed the connection");
        serde_json::from_str(&line).unwrap()
    }

    async fn expect_eof(&mut self) {
        assert_eq!(
            self.read_line().await,
            None,
            "the server should have closed the connection"
        );
    }
}

fn hello_line(token: &str, protocol: u32) -> String {
    json!({
        "type": "hello", "protocol": protocol, "token": token, "piVersion": "1.6.0", "pid": 77,
        "instance": "test", "reconnect": false, "dropped": 0, "sessionId": "s1", "sessionFile": null,
        "sessionName": null, "mode": "tui", "model": "mock/mock-model", "cwd": "/w"
    })
    .to_string()
        + "\n"
}

fn poke() -> Command {
    Command::SendMessage(SendMessage {
        custom_type: "pokeshell-poke".into(),
        content: "[Poke] continue".into(),
        display: false,
        trigger_turn: true,
        deliver_as: None,
        details: None,
    })
}

#[tokio::test]
async fn hello_with_the_right_token_connects_and_events_flow() {
    let mut server = start();
    assert!(!server.handle.is_connected());
    let (mut client, conn) = server.connect_ok().await;
    assert!(server.handle.is_connected());
    client
        .send_event(1, json!({"type": "agent_settled", "aborted": true}))
        .await;
    let (seq, event) = server
        .expect("agent_settled", |e| match e {
            BridgeEvent::Event {
                conn: c, seq, event, ..
            } if c == conn => Some((seq, event)),
            _ => None,
        })
        .await;
    assert_eq!(seq, 1);
    let PiEvent::AgentSettled(settled) = event else {
        panic!("{event:?}")
    };
    assert!(settled.aborted);
    assert!(settled.tail.is_empty());
}

#[tokio::test]
async fn commands_are_sent_and_replies_matched_by_id() {
    let mut server = start();
    let (mut client, _) = server.connect_ok().await;
    let first = server.handle.send(poke()).unwrap();
    let second = server.handle.send(Command::IsIdle).unwrap();
    assert_ne!(first, second);

    let line = client.read_json().await;
    assert_eq!(line["type"], "command");
    assert_eq!(line["id"], first);
    assert_eq!(line["command"]["type"], "send_message");
    assert_eq!(line["command"]["customType"], "pokeshell-poke");
    assert_eq!(line["command"]["triggerTurn"], true);
    assert_eq!(client.read_json().await["command"]["type"], "is_idle");

    // Answer out of order.
    let answer = json!({"type": "reply", "id": second, "ok": true, "result": {"idle": true}}).to_string();
    client.write_raw(format!("{answer}\n").as_bytes()).await;
    let answer = json!({"type": "reply", "id": first, "ok": false, "error": "no session"}).to_string();
    client.write_raw(format!("{answer}\n").as_bytes()).await;

    let r = server
        .expect("reply", |e| match e {
            BridgeEvent::Reply { id, command, result } => Some((id, command, result)),
            _ => None,
        })
        .await;
    assert_eq!(r, (second, "is_idle", Ok(json!({"idle": true}))));
    let r = server
        .expect("reply", |e| match e {
            BridgeEvent::Reply { id, command, result } => Some((id, command, result)),
            _ => None,
        })
        .await;
    assert_eq!(r, (first, "send_message", Err("no session".to_owned())));
}

#[tokio::test]
async fn send_without_a_bridge_says_not_connected() {
    let server = start();
    assert_eq!(server.handle.send(Command::Abort), Err(SendError::NotConnected));
}

#[tokio::test]
async fn env_names_the_socket_and_a_64_char_token() {
    let server = start();
    let env = server.handle.env();
    let socket = env.iter().find(|(k, _)| *k == ENV_SOCKET).unwrap();
    assert_eq!(std::path::Path::new(&socket.1), server.handle.socket_path());
    assert_eq!(server.token().len(), 64);
    let dir = server.handle.socket_path().parent().unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(dir).unwrap().mode() & 0o777, 0o700);
}

#[tokio::test]
async fn a_wrong_token_is_rejected() {
    let mut server = start();
    let mut client = server
        .connect_with(hello_line("not-the-token", PROTOCOL_VERSION))
        .await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("wrong token"), "{reason}");
    assert_eq!(
        client.read_json().await,
        json!({"type": "rejected", "reason": "wrong token"})
    );
    client.expect_eof().await;
    assert!(!server.handle.is_connected());
}

#[tokio::test]
async fn another_protocol_version_is_rejected() {
    let mut server = start();
    let token = server.token();
    let mut client = server
        .connect_with(hello_line(&token, PROTOCOL_VERSION + 1))
        .await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("protocol"), "{reason}");
    assert_eq!(client.read_json().await["type"], "rejected");
}

#[tokio::test]
async fn garbage_instead_of_a_hello_is_rejected() {
    let mut server = start();
    let mut client = server.connect_with("\u{1b}[31mhello?\n".to_owned()).await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("not a valid hello"), "{reason}");
    client.read_json().await;
    client.expect_eof().await;
}

#[tokio::test]
async fn a_silent_peer_is_rejected_after_the_hello_timeout() {
    let mut server = start_with(Duration::from_millis(200));
    let mut client = Client::open(&server.handle).await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("no hello"), "{reason}");
    assert_eq!(client.read_json().await["type"], "rejected");
}

#[tokio::test]
async fn an_oversized_hello_is_rejected() {
    let mut server = start();
    let mut client = Client::open(&server.handle).await;
    let big = vec![b'x'; MAX_LINE_BYTES + 10];
    client.write_raw(&big).await;
    client.write_raw(b"\n").await;
    let reason = server
        .expect("Rejected", |e| match e {
            BridgeEvent::Rejected { reason } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("over the limit"), "{reason}");
}

#[tokio::test]
async fn malformed_json_is_skipped_and_the_next_good_line_arrives() {
    let mut server = start();
    let (mut client, conn) = server.connect_ok().await;
    client.write_raw(b"{\"type\":\"event\",\"seq\":1,\n").await;
    client.write_raw(b"not json at all\n").await;
    client.write_raw(b"\xff\xfe\xfd\n").await;
    client
        .send_event(2, json!({"type": "turn_start", "turnIndex": 4}))
        .await;
    for _ in 0..3 {
        let reason = server
            .expect("Warning", |e| match e {
                BridgeEvent::Warning { conn: c, reason } if c == conn => Some(reason),
                _ => None,
            })
            .await;
        assert!(reason.contains("malformed"), "{reason}");
    }
    let event = server
        .expect("turn_start", |e| match e {
            BridgeEvent::Event { event, .. } => Some(event),
            _ => None,
        })
        .await;
    assert!(matches!(event, PiEvent::TurnStart(t) if t.turn_index == 4));
}

#[tokio::test]
async fn an_oversized_line_is_skipped_and_the_next_good_line_arrives() {
    let mut server = start();
    let (mut client, _) = server.connect_ok().await;
    let big = format!(
        "{{\"type\":\"event\",\"pad\":\"{}\"}}\n",
        "y".repeat(MAX_LINE_BYTES)
    );
    client.write_raw(big.as_bytes()).await;
    client.send_event(2, json!({"type": "agent_start"})).await;
    let reason = server
        .expect("Warning", |e| match e {
            BridgeEvent::Warning { reason, .. } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains(&format!("{} bytes", big.len() - 1)), "{reason}");
    let event = server
        .expect("agent_start", |e| match e {
            BridgeEvent::Event { event, .. } => Some(event),
            _ => None,
        })
        .await;
    assert_eq!(event, PiEvent::AgentStart);
}

#[tokio::test]
async fn half_lines_across_writes_are_joined() {
    let mut server = start();
    let (mut client, _) = server.connect_ok().await;
    let line = json!({"type": "event", "seq": 9, "at": 1, "event": {"type": "turn_start", "turnIndex": 1}})
        .to_string();
    let (a, rest) = line.split_at(7);
    let (b, c) = rest.split_at(20);
    client.write_raw(a.as_bytes()).await;
    tokio::task::yield_now().await;
    client.write_raw(b.as_bytes()).await;
    tokio::task::yield_now().await;
    client.write_raw(format!("{c}\n").as_bytes()).await;
    let seq = server
        .expect("turn_start", |e| match e {
            BridgeEvent::Event {
                seq,
                event: PiEvent::TurnStart(_),
                ..
            } => Some(seq),
            _ => None,
        })
        .await;
    assert_eq!(seq, 9);
}

#[tokio::test]
async fn a_peer_closing_mid_line_disconnects_cleanly_and_fails_its_commands() {
    let mut server = start();
    let (mut client, conn) = server.connect_ok().await;
    let id = server.handle.send(Command::ContextUsage).unwrap();
    assert_eq!(client.read_json().await["id"], id);
    client
        .write_raw(b"{\"type\":\"event\",\"seq\":3,\"at\":1,\"ev")
        .await;
    drop(client);

    let reason = server
        .expect("Warning", |e| match e {
            BridgeEvent::Warning { conn: c, reason } if c == conn => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("middle of a line"), "{reason}");
    server
        .expect("Disconnected", |e| {
            matches!(e, BridgeEvent::Disconnected { conn: c, .. } if c == conn).then_some(())
        })
        .await;
    let (reply_id, result) = server
        .expect("Reply", |e| match e {
            BridgeEvent::Reply { id, result, .. } => Some((id, result)),
            _ => None,
        })
        .await;
    assert_eq!(reply_id, id);
    assert!(result.unwrap_err().contains("ended before replying"));
    assert!(!server.handle.is_connected());
    assert_eq!(server.handle.send(Command::Abort), Err(SendError::NotConnected));
}

/// Both clients are this test process: one pi process replacing its extension runtime (/new, /reload).
#[tokio::test]
async fn a_second_connection_from_the_same_process_replaces_the_first() {
    let mut server = start();
    let (mut first, first_conn) = server.connect_ok().await;
    let pending = server.handle.send(Command::IsIdle).unwrap();
    first.read_json().await;

    let mut second = server.connect().await;
    assert_eq!(second.read_json().await["type"], "welcome");
    // The old connection ends before the new one is announced; its command fails.
    let reason = server
        .expect("Disconnected of the first", |e| match e {
            BridgeEvent::Disconnected { conn, reason } if conn == first_conn => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("replaced"), "{reason}");
    let failed = server
        .expect("Reply", |e| match e {
            BridgeEvent::Reply {
                id, result: Err(_), ..
            } => Some(id),
            _ => None,
        })
        .await;
    assert_eq!(failed, pending);
    let second_conn = server
        .expect("Connected", |e| match e {
            BridgeEvent::Connected { conn, .. } => Some(conn),
            _ => None,
        })
        .await;
    assert_ne!(first_conn, second_conn);
    first.expect_eof().await;

    // Commands go to the new one; a late reply from the old one is not delivered.
    let id = server.handle.send(Command::Abort).unwrap();
    assert_eq!(second.read_json().await["id"], id);
    let _ = first
        .writer
        .write_all(format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":true}}\n").as_bytes())
        .await;
    second
        .write_raw(
            format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":true,\"result\":{{\"from\":2}}}}\n").as_bytes(),
        )
        .await;
    let result = server
        .expect("Reply", |e| match e {
            BridgeEvent::Reply { id: i, result, .. } if i == id => Some(result),
            _ => None,
        })
        .await;
    assert_eq!(result, Ok(json!({"from": 2})));
}

#[tokio::test]
async fn a_reply_to_an_unknown_id_is_a_warning() {
    let mut server = start();
    let (mut client, _) = server.connect_ok().await;
    client
        .write_raw(b"{\"type\":\"reply\",\"id\":999,\"ok\":true}\n")
        .await;
    let reason = server
        .expect("Warning", |e| match e {
            BridgeEvent::Warning { reason, .. } => Some(reason),
            _ => None,
        })
        .await;
    assert!(reason.contains("999"), "{reason}");
}

#[tokio::test]
async fn dropping_the_handle_removes_the_socket_dir_and_ends_the_events() {
    let mut server = start();
    let dir = server.handle.socket_path().parent().unwrap().to_owned();
    assert!(dir.exists());
    drop(server.handle);
    assert!(!dir.exists());
    let end = tokio::time::timeout(WAIT, server.events.recv()).await.unwrap();
    assert_eq!(end, None);
}

/// SO_PEERCRED reports the effective uid at connect time. As root, a child can switch its effective uid
/// to nobody while keeping filesystem uid 0 (setfsuid), so it still reaches the 0700 socket dir and the
/// server sees a foreign peer. Not root: the check itself is covered by the unit tests of `auth`.
#[test]
fn a_peer_of_another_uid_is_rejected() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: cannot simulate a foreign peer here (auth::check_peer_uid is unit-tested)");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let mut server = start();
    let path = server.handle.socket_path().as_os_str().to_owned();
    let token = server.token();
    let hello = hello_line(&token, PROTOCOL_VERSION);

    // Everything the child needs is prepared before fork: after it, only raw syscalls.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    use std::os::unix::ffi::OsStrExt;
    for (dst, src) in addr.sun_path.iter_mut().zip(path.as_bytes()) {
        *dst = *src as libc::c_char;
    }
    let nobody: libc::uid_t = 65534;
    // SAFETY: the child calls only async-signal-safe functions and leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe {
            if libc::setresuid(nobody, nobody, 0) != 0 {
                libc::_exit(10);
            }
            libc::setfsuid(0);
            let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
            if fd < 0 {
                libc::_exit(11);
            }
            let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
            if libc::connect(fd, &addr as *const _ as *const libc::sockaddr, len) != 0 {
                libc::_exit(12);
            }
            libc::write(fd, hello.as_ptr() as *const libc::c_void, hello.len());
            let mut buf = [0u8; 256];
            while libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) > 0 {}
            libc::_exit(0);
        }
    }
    let event = runtime.block_on(async { tokio::time::timeout(WAIT, server.events.recv()).await });
    let mut status = 0;
    // SAFETY: reaping our own child; a child still connected (the check failed) is killed first.
    unsafe {
        if libc::waitpid(pid, &mut status, libc::WNOHANG) == 0 {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
        }
    }
    let event = event.unwrap_or_else(|_| panic!("no event; child exit status {}", libc::WEXITSTATUS(status)));
    match event {
        Some(BridgeEvent::Rejected { reason }) => assert!(reason.contains("uid 65534"), "{reason}"),
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert!(!server.handle.is_connected());
}

/// What a forked child saw after its hello: its exit code tells the first line it read.
const CHILD_WELCOMED: i32 = 0;
const CHILD_REJECTED: i32 = 2;

/// Forks a child that connects, sends `hello` and leaves with [`CHILD_WELCOMED`], [`CHILD_REJECTED`] or
/// another code, after the first line it reads. Another process, so the server sees another pid.
fn hello_from_child(server: &Server, hello: &str) -> libc::pid_t {
    use std::os::unix::ffi::OsStrExt;
    let path = server.handle.socket_path().as_os_str().to_owned();
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (dst, src) in addr.sun_path.iter_mut().zip(path.as_bytes()) {
        *dst = *src as libc::c_char;
    }
    // SAFETY: the child calls only async-signal-safe functions and leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe {
            let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
            let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
            if fd < 0 || libc::connect(fd, &addr as *const _ as *const libc::sockaddr, len) != 0 {
                libc::_exit(11);
            }
            libc::write(fd, hello.as_ptr() as *const libc::c_void, hello.len());
            let mut buf = [0u8; 512];
            let mut got = 0usize;
            while got < buf.len() && !buf[..got].contains(&b'\n') {
                let n = libc::read(fd, buf[got..].as_mut_ptr() as *mut libc::c_void, buf.len() - got);
                if n <= 0 {
                    break;
                }
                got += n as usize;
            }
            let line = &buf[..got];
            if line.starts_with(b"{\"type\":\"welcome\"") {
                libc::_exit(CHILD_WELCOMED);
            }
            if line.starts_with(b"{\"type\":\"rejected\"") {
                libc::_exit(CHILD_REJECTED);
            }
            libc::_exit(12);
        }
    }
    pid
}

/// The child's exit code, killing it when it has not ended within the deadline.
fn child_exit(pid: libc::pid_t) -> i32 {
    let deadline = std::time::Instant::now() + WAIT;
    let mut status = 0;
    loop {
        // SAFETY: reaping our own child.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            return libc::WEXITSTATUS(status);
        }
        if std::time::Instant::now() >= deadline {
            // SAFETY: our own child, still running.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("the child did not end within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A leaked token is not enough to take the bridge over: while a connection is live, a hello from
/// another process is refused and the live connection keeps carrying the commands.
#[test]
fn a_hello_from_another_process_is_refused_while_a_bridge_is_live() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let mut server = start();
    let (mut live, _) = runtime.block_on(server.connect_ok());
    let hello = hello_line(&server.token(), PROTOCOL_VERSION);

    let child = hello_from_child(&server, &hello);
    assert_eq!(child_exit(child), CHILD_REJECTED, "the child was not refused");
    let reason = runtime.block_on(server.expect("Rejected", |e| match e {
        BridgeEvent::Rejected { reason } => Some(reason),
        _ => None,
    }));
    assert!(reason.contains("holds the live bridge connection"), "{reason}");

    assert!(server.handle.is_connected());
    let id = server.handle.send(Command::IsIdle).unwrap();
    runtime.block_on(async {
        let command = live.read_json().await;
        assert_eq!(command["id"], id, "the live connection still gets the commands");
        live.write_raw(
            format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":true,\"result\":{{}}}}\n").as_bytes(),
        )
        .await;
        // `expect` takes the very next event: no Disconnected of the live connection came first.
        let got = server
            .expect("the reply", |e| match e {
                BridgeEvent::Reply {
                    id, result: Ok(_), ..
                } => Some(id),
                _ => None,
            })
            .await;
        assert_eq!(got, id);
    });
}

/// A connection pokeshell dropped (SIGUSR1) or one that broke is not live: the next hello, from any
/// process, is welcomed.
#[test]
fn a_hello_from_another_process_is_welcomed_once_the_live_connection_was_dropped() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let mut server = start();
    let (_first, first_conn) = runtime.block_on(server.connect_ok());
    server.handle.disconnect("dropped on request").unwrap();
    runtime.block_on(server.expect("Disconnected", |e| match e {
        BridgeEvent::Disconnected { conn, .. } if conn == first_conn => Some(()),
        _ => None,
    }));
    let hello = hello_from_child(&server, &hello_line(&server.token(), PROTOCOL_VERSION));
    assert_eq!(child_exit(hello), CHILD_WELCOMED, "the child was not welcomed");
    let conn = runtime.block_on(server.expect("Connected", |e| match e {
        BridgeEvent::Connected { conn, .. } => Some(conn),
        _ => None,
    }));
    assert_ne!(conn, first_conn);
}

/// Heartbeats reach the app with the count of lines missing from the numbering since the previous one:
/// lines the bridge never sent, and lines skipped here.
#[tokio::test]
async fn heartbeats_carry_the_lines_missing_from_the_numbering() {
    let mut server = start();
    let (mut client, conn) = server.connect_ok().await;
    let beat = |seq: u64, tools: &[&str]| {
        json!({"type": "heartbeat", "seq": seq, "at": 5, "idle": false, "pendingMessages": false,
               "runningTools": tools})
        .to_string()
            + "\n"
    };
    client.send_event(1, json!({"type": "agent_start"})).await;
    client.write_raw(beat(2, &[]).as_bytes()).await;
    client
        .send_event(3, json!({"type": "turn_start", "turnIndex": 0}))
        .await;
    // 4 and 5 never come; 6 is garbage and skipped.
    client.write_raw(b"{\"type\":\"event\",\"seq\":6,\"at\":\n").await;
    client.write_raw(beat(7, &["call_1"]).as_bytes()).await;

    let mut beats = Vec::new();
    while beats.len() < 2 {
        if let BridgeEvent::Heartbeat {
            conn: c,
            heartbeat,
            missed,
        } = server.next().await
        {
            assert_eq!(c, conn);
            beats.push((heartbeat.seq, missed, heartbeat.running_tools, heartbeat.idle));
        }
    }
    assert_eq!(
        beats,
        [
            (2, 0, vec![], Some(false)),
            (7, 3, vec!["call_1".to_owned()], Some(false))
        ]
    );
}
