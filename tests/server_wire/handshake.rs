//! The handshake as the server runs it (peer check, then the hello within a deadline) against clients
//! that get it right, get it wrong in every way, or run as another uid.

use crate::foreign_peer::{ForeignPeer, can_pose};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pokeshell::ipc::frame_async::read_frame_async;
use pokeshell::ipc::socket::{Listening, admit, connect_in, read_hello, read_token_in};
use pokeshell_core::wire::{Down, PROTOCOL, Up, decode_down, decode_up, encode_down, encode_up};
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(20);
const HELLO_WAIT: Duration = Duration::from_millis(300);

/// What the server does with a new connection: admit, hello, then welcome or refuse.
async fn handshake(mut stream: UnixStream, token: &str) -> Result<(), String> {
    let verdict = match admit(&stream).await {
        Ok(()) => read_hello(&mut stream, token, HELLO_WAIT).await,
        Err(reason) => Err(reason),
    };
    let answer = match &verdict {
        Ok(()) => Down::Welcome {
            server_pid: std::process::id(),
            restoring: 0,
        },
        Err(message) => Down::Error {
            message: message.clone(),
        },
    };
    let _ = stream.write_all(&encode_down(&answer)).await;
    verdict
}

/// A server in a temp dir whose accept loop reports each connection's verdict, in the order the
/// handshakes end.
struct Server {
    listening: Arc<Listening>,
    verdicts: mpsc::UnboundedReceiver<Result<(), String>>,
    _tmp: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let tmp = tempfile::tempdir().unwrap();
        let listening = Arc::new(Listening::bind_in(&tmp.path().join("server")).unwrap());
        let (tx, verdicts) = mpsc::unbounded_channel();
        let accepting = listening.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = accepting.listener.accept().await else {
                    return;
                };
                let token = accepting.token.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let _ = tx.send(handshake(stream, &token).await);
                });
            }
        });
        Server {
            listening,
            verdicts,
            _tmp: tmp,
        }
    }

    fn dir(&self) -> &Path {
        self.listening.dir()
    }

    async fn verdict(&mut self) -> Result<(), String> {
        tokio::time::timeout(WAIT, self.verdicts.recv())
            .await
            .expect("no verdict within the deadline")
            .expect("the accept loop ended")
    }

    /// Connects, sends `bytes` (and closes the sending side when asked), returns the server's answer.
    async fn exchange(&mut self, bytes: &[u8], close: bool) -> Down {
        let std_stream = connect_in(self.dir()).unwrap();
        std_stream.set_nonblocking(true).unwrap();
        let mut stream = UnixStream::from_std(std_stream).unwrap();
        stream.write_all(bytes).await.unwrap();
        if close {
            stream.shutdown().await.unwrap();
        }
        let (kind, payload) = tokio::time::timeout(WAIT, read_frame_async(&mut stream))
            .await
            .expect("no answer within the deadline")
            .unwrap()
            .expect("closed without an answer");
        decode_down(kind, &payload).unwrap()
    }

    /// A client that knows the token is welcomed.
    async fn good_client_is_welcomed(&mut self) {
        let token = read_token_in(self.dir()).unwrap();
        let answer = self
            .exchange(
                &encode_up(&Up::Hello {
                    token,
                    protocol: PROTOCOL,
                }),
                false,
            )
            .await;
        let pid = std::process::id();
        assert_eq!(
            answer,
            Down::Welcome {
                server_pid: pid,
                restoring: 0
            }
        );
        assert_eq!(self.verdict().await, Ok(()));
    }
}

#[tokio::test]
async fn clients_with_the_token_are_welcomed() {
    let mut server = Server::start();
    server.good_client_is_welcomed().await;
    server.good_client_is_welcomed().await;
}

#[tokio::test]
async fn read_hello_leaves_the_frames_after_the_hello_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let listening = Listening::bind_in(&tmp.path().join("server")).unwrap();
    let std_client = connect_in(listening.dir()).unwrap();
    std_client.set_nonblocking(true).unwrap();
    let mut client = UnixStream::from_std(std_client).unwrap();
    let mut bytes = encode_up(&Up::Hello {
        token: listening.token.clone(),
        protocol: PROTOCOL,
    });
    bytes.extend(encode_up(&Up::List));
    client.write_all(&bytes).await.unwrap();

    let (mut stream, _) = tokio::time::timeout(WAIT, listening.listener.accept())
        .await
        .unwrap()
        .unwrap();
    admit(&stream).await.unwrap();
    read_hello(&mut stream, &listening.token, WAIT).await.unwrap();
    let (kind, payload) = read_frame_async(&mut stream).await.unwrap().unwrap();
    assert_eq!(decode_up(kind, &payload).unwrap(), Up::List);
}

#[tokio::test]
async fn bad_clients_are_refused_with_a_reason_and_the_next_good_client_gets_in() {
    let mut server = Server::start();
    let token = read_token_in(server.dir()).unwrap();
    let hello = |token: &str, protocol| {
        encode_up(&Up::Hello {
            token: token.to_owned(),
            protocol,
        })
    };
    let mut oversized = 0x8000_0000u32.to_be_bytes().to_vec();
    oversized.extend(b"and then some");
    let wrong_protocol = format!("speaks protocol {PROTOCOL}, this pokeshell {}", PROTOCOL + 1);
    let cases: Vec<(&str, Vec<u8>, bool, &str)> = vec![
        (
            "wrong token",
            hello(&"0".repeat(64), PROTOCOL),
            false,
            "wrong token",
        ),
        ("empty token", hello("", PROTOCOL), false, "wrong token"),
        (
            "wrong protocol",
            hello(&token, PROTOCOL + 1),
            false,
            &wrong_protocol,
        ),
        (
            "a client of protocol 2",
            hello(&token, 2),
            false,
            "this pokeshell is older than the server",
        ),
        ("silence", Vec::new(), false, "no hello within 300ms"),
        (
            "closed at once",
            Vec::new(),
            true,
            "closed the connection before its hello",
        ),
        (
            "half a hello",
            hello(&token, PROTOCOL)[..9].to_vec(),
            true,
            "in the middle of a frame",
        ),
        (
            "http",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            false,
            "exceeds the 1 MiB limit",
        ),
        (
            "oversized frame",
            oversized,
            false,
            "frame of 2147483648 bytes exceeds the 1 MiB limit",
        ),
        (
            "unknown kind",
            vec![0, 0, 0, 3, 0x7f, 1, 2],
            false,
            "bad message of kind 0x7f",
        ),
        (
            "bad json",
            [&[0, 0, 0, 3, 0x01][..], b"{x"].concat(),
            false,
            "(hello)",
        ),
        (
            "list first",
            encode_up(&Up::List),
            false,
            "must be a hello, not list",
        ),
    ];
    for (what, bytes, close, expected) in cases {
        let answer = server.exchange(&bytes, close).await;
        let Down::Error { message } = answer else {
            panic!("{what}: answered {answer:?}")
        };
        assert!(message.contains(expected), "{what}: {message}");
        assert_eq!(server.verdict().await, Err(message), "{what}");
        server.good_client_is_welcomed().await;
    }
}

/// SO_PEERCRED reports the effective uid at connect time. As root, a child can switch its effective
/// uid to nobody while keeping filesystem uid 0 (setfsuid), so it still reaches the 0700 server
/// directory and the server sees a foreign peer. Not root: the uid check is unit-tested in `auth`.
#[test]
fn a_peer_of_another_uid_is_refused() {
    if !can_pose() {
        eprintln!("not root: cannot simulate a foreign peer here (auth::check_peer_uid is unit-tested)");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let mut server = Server::start();
    let path = server.listening.socket_path().into_os_string();
    let token = read_token_in(server.dir()).unwrap();
    let hello = encode_up(&Up::Hello {
        token,
        protocol: PROTOCOL,
    });

    let peer = ForeignPeer::connect(&path, hello.as_ref());
    let verdict = runtime.block_on(async { tokio::time::timeout(WAIT, server.verdicts.recv()).await });
    let status = peer.reap();
    let verdict = verdict.unwrap_or_else(|_| panic!("no verdict; child exit status {}", status));
    let reason = verdict.expect("the accept loop ended").unwrap_err();
    assert!(reason.contains("uid 65534"), "{reason}");
    runtime.block_on(server.good_client_is_welcomed());
}
