//! The test's side of the socket: a server in a temp dir, hand-written clients, and clients forked into
//! another process (the server tells processes apart by their kernel-reported pid).

use std::time::Duration;

use pokeshell::pi::bridge::server::ServerOptions;
use pokeshell::pi::bridge::{BridgeEvent, BridgeHandle, BridgeServer};
use pokeshell_core::bridge::{Command, ENV_TOKEN, PROTOCOL_VERSION, SendMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc::Receiver;

pub const WAIT: Duration = Duration::from_secs(10);

pub struct Server {
    pub handle: BridgeHandle,
    pub events: Receiver<BridgeEvent>,
    _dir: tempfile::TempDir,
}

pub fn start() -> Server {
    start_with(Duration::from_secs(5))
}

pub fn start_with(hello_timeout: Duration) -> Server {
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
    pub fn token(&self) -> String {
        let env = self.handle.env();
        let token = env.iter().find(|(k, _)| *k == ENV_TOKEN).unwrap();
        token.1.to_str().unwrap().to_owned()
    }

    pub async fn next(&mut self) -> BridgeEvent {
        tokio::time::timeout(WAIT, self.events.recv())
            .await
            .expect("no bridge event within the deadline")
            .expect("the event channel closed")
    }

    /// Skips nothing: the next event must match.
    pub async fn expect<T>(&mut self, what: &str, pick: impl FnOnce(BridgeEvent) -> Option<T>) -> T {
        let event = self.next().await;
        let shown = format!("{event:?}");
        pick(event).unwrap_or_else(|| panic!("expected {what}, got {shown}"))
    }

    pub async fn connect(&mut self) -> Client {
        let token = self.token();
        self.connect_with(hello_line(&token, PROTOCOL_VERSION)).await
    }

    pub async fn connect_with(&mut self, hello: String) -> Client {
        let mut client = Client::open(&self.handle).await;
        client.write_raw(hello.as_bytes()).await;
        client
    }

    /// Connects, checks the welcome and the Connected event; returns the client and its conn id.
    pub async fn connect_ok(&mut self) -> (Client, u64) {
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

pub struct Client {
    pub reader: BufReader<OwnedReadHalf>,
    pub writer: OwnedWriteHalf,
}

impl Client {
    pub async fn open(handle: &BridgeHandle) -> Client {
        let stream = UnixStream::connect(handle.socket_path()).await.unwrap();
        let (r, w) = stream.into_split();
        Client {
            reader: BufReader::new(r),
            writer: w,
        }
    }

    pub async fn write_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    pub async fn send_event(&mut self, seq: u64, event: Value) {
        let line = json!({"type": "event", "seq": seq, "at": 1, "event": event}).to_string() + "\n";
        self.write_raw(line.as_bytes()).await;
    }

    /// The next line from the server, or None at end of stream.
    pub async fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        let n = tokio::time::timeout(WAIT, self.reader.read_line(&mut line))
            .await
            .expect("no line from the server within the deadline")
            .unwrap_or(0);
        (n > 0).then_some(line)
    }

    pub async fn read_json(&mut self) -> Value {
        let line = self.read_line().await.expect("the server closed the connection");
        serde_json::from_str(&line).unwrap()
    }

    pub async fn expect_eof(&mut self) {
        assert_eq!(
            self.read_line().await,
            None,
            "the server should have closed the connection"
        );
    }
}

pub fn hello_line(token: &str, protocol: u32) -> String {
    json!({
        "type": "hello", "protocol": protocol, "token": token, "piVersion": "1.6.0", "pid": 77,
        "instance": "test", "reconnect": false, "dropped": 0, "sessionId": "s1", "sessionFile": null,
        "sessionName": null, "mode": "tui", "model": "mock/mock-model", "cwd": "/w"
    })
    .to_string()
        + "\n"
}

pub fn poke() -> Command {
    Command::SendMessage(SendMessage {
        custom_type: "pokeshell-poke".into(),
        content: "[Poke] continue".into(),
        display: false,
        trigger_turn: true,
        deliver_as: None,
        details: None,
    })
}

/// What a forked child saw after its hello: its exit code tells the first line it read.
pub const CHILD_WELCOMED: i32 = 0;
pub const CHILD_REJECTED: i32 = 2;

/// Forks a child that connects, sends `hello` and leaves with [`CHILD_WELCOMED`], [`CHILD_REJECTED`] or
/// another code, after the first line it reads. Another process, so the server sees another pid.
pub fn hello_from_child(server: &Server, hello: &str) -> libc::pid_t {
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
pub fn child_exit(pid: libc::pid_t) -> i32 {
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
