//! The connection against a real socket and a real pseudo-terminal, with the test playing the
//! performer (the connection's commands), the core (what the connection sends the server) and the
//! session's loop (a task on a runtime of its own thread, whose events the test reads).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use super::*;
use crate::ipc::terminal::tests::{pty, quiet, shown, type_in};
use crate::server::event_loop::ClientLink;
use pokeshell_core::wire::{self, Target};

const WAIT: Duration = Duration::from_secs(5);

/// A session's thread: its runtime runs until `stop`, and what its loop hears comes to `heard`.
struct Session {
    tx: UnboundedSender<WorldEvent>,
    runtime: Runtime,
    heard: mpsc::Receiver<WorldEvent>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<tokio::runtime::Runtime>>,
}

impl Session {
    fn start() -> Session {
        let (tx, mut rx) = unbounded_channel::<WorldEvent>();
        let (heard_tx, heard) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (handle_tx, handle_rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            handle_tx.send(rt.handle().clone()).expect("handle");
            rt.block_on(async move {
                tokio::select! {
                    _ = stopped => {}
                    () = async { while let Some(ev) = rx.recv().await { let _ = heard_tx.send(ev); } } => {}
                }
            });
            rt
        });
        Session {
            tx,
            runtime: handle_rx.recv().expect("handle"),
            heard,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The next thing the loop heard.
    fn next(&self) -> WorldEvent {
        self.heard
            .recv_timeout(WAIT)
            .expect("the session heard something in time")
    }

    fn keys(&self) -> Vec<u8> {
        match self.next() {
            WorldEvent::Client(ClientEvent::Input { id: 7, bytes, .. }) => bytes,
            other => panic!("not client 7's keys: {other:?}"),
        }
    }

    /// Its runtime stops running tasks; they are dropped with it.
    fn end(&mut self) -> Option<tokio::runtime::Runtime> {
        let _ = self.stop.take().map(|s| s.send(()));
        self.thread.take().map(|t| t.join().expect("the thread"))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // (A runtime cannot be dropped inside another's context.)
        if let Some(rt) = self.end() {
            rt.shutdown_background();
        }
    }
}

/// A connection (client 7) run on this runtime, the client's end of its socket, the commands'
/// sender and what it sends the server.
struct Fixture {
    client: UnixStream,
    ctl: UnboundedSender<ConnCmd>,
    server: UnboundedReceiver<ServerMsg>,
}

fn connect(setup: impl FnOnce(&mut Conn)) -> Fixture {
    let (ours, client) = UnixStream::pair().expect("socket pair");
    ours.set_nonblocking(true).expect("non-blocking");
    let (ctl, ctl_rx) = unbounded_channel();
    let (server_tx, server) = unbounded_channel();
    let socket = Arc::new(std::os::fd::OwnedFd::from(ours).into());
    let mut conn = Conn::new(7, socket, ctl_rx, server_tx, Runtime::current());
    setup(&mut conn);
    tokio::spawn(run(Held(Some(conn))));
    client.set_read_timeout(Some(WAIT)).expect("timeout");
    Fixture { client, ctl, server }
}

impl Fixture {
    /// The performer's follow of `session`; the session's sender of frames for this client.
    fn follow(&self, session: &Session) -> UnboundedSender<ClientOut> {
        let (tx, out) = unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let link = ClientLink {
            tx: tx.clone(),
            cols: 80,
            rows: 24,
            queued: queued.clone(),
            watch: false,
        };
        let follow = Follow {
            session: super::Session {
                number: 1,
                tx: session.tx.clone(),
                runtime: session.runtime.clone(),
                input_queued: Arc::default(),
            },
            out,
            queued,
            attach: ClientEvent::Attach {
                id: 7,
                link,
                caps: None,
            },
        };
        self.ctl
            .send(ConnCmd::Follow(follow))
            .expect("the connection runs");
        tx
    }

    fn send(&mut self, up: &Up) {
        let bytes = match up {
            Up::Input(keys) => wire::encode_input(keys),
            up => wire::encode_up(up),
        };
        self.client.write_all(&bytes).expect("written");
    }

    /// The next message on the client's socket.
    fn heard(&mut self) -> Down {
        let (kind, payload) = wire::read_frame(&mut self.client)
            .expect("read")
            .expect("a frame");
        wire::decode_down(kind, &payload).expect("a message")
    }

    /// What the connection sent the server next, but that it typed.
    async fn core_heard(&mut self) -> ServerMsg {
        let server = &mut self.server;
        until(|| {
            std::iter::from_fn(|| server.try_recv().ok())
                .find(|m| !matches!(m, ServerMsg::Event(ServerEvent::Typed { .. })))
        })
        .await
    }
}

fn attached(ev: &WorldEvent) -> bool {
    matches!(ev, WorldEvent::Client(ClientEvent::Attach { id: 7, .. }))
}

/// Runs this runtime until `f` gives something (the connection at home needs it to run).
async fn until<T>(mut f: impl FnMut() -> Option<T>) -> T {
    tokio::time::timeout(WAIT, async {
        loop {
            if let Some(t) = f() {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("in time")
}

/// Claim: a key typed by a client that follows a session reaches its loop, and the echo its
/// terminal, with the server's main thread standing still (here this test's runtime, blocked while
/// it waits). A message that is not a key goes to the core, and the key after it waits until the
/// core has handled it; after an unfollow the session hears the client leave, after its last key.
#[tokio::test(flavor = "current_thread")]
async fn keys_reach_the_session_on_its_own_thread_in_order_with_what_went_through_the_core() {
    let session = Session::start();
    let mut f = connect(|_| {});
    let screen = f.follow(&session);
    until(|| session.heard.try_recv().ok().filter(attached)).await;

    // From here on this thread blocks: the connection runs on the session's.
    f.send(&Up::Input(b"ab".to_vec()));
    assert_eq!(session.keys(), b"ab");
    screen.send(ClientOut::Bytes(b"ab".to_vec())).expect("sent");
    assert_eq!(f.heard(), Down::Output(b"ab".to_vec()));

    f.send(&Up::Resize { cols: 90, rows: 30 });
    f.send(&Up::Input(b"c".to_vec()));
    assert!(matches!(
        f.core_heard().await,
        ServerMsg::Event(ServerEvent::Up {
            id: 7,
            up: Up::Resize { cols: 90, rows: 30 }
        })
    ));
    assert!(
        session.heard.recv_timeout(Duration::from_millis(200)).is_err(),
        "the key waits for the core"
    );
    let resized = ClientEvent::Resize {
        id: 7,
        cols: 90,
        rows: 30,
    };
    f.ctl.send(ConnCmd::ToSession(resized)).expect("sent");
    f.ctl.send(ConnCmd::Heard).expect("sent");
    assert!(matches!(
        session.next(),
        WorldEvent::Client(ClientEvent::Resize { id: 7, .. })
    ));
    assert_eq!(
        session.keys(),
        b"c",
        "the key comes after what the core passed on"
    );

    f.ctl.send(ConnCmd::Unfollow).expect("sent");
    assert!(matches!(
        session.next(),
        WorldEvent::Client(ClientEvent::Detach { id: 7 })
    ));
    // Home again: keys go to the core, never to the session left.
    f.send(&Up::Input(b"d".to_vec()));
    let msg = until(|| {
        f.server
            .try_recv()
            .ok()
            .filter(|m| matches!(m, ServerMsg::Input { .. }))
    })
    .await;
    assert!(matches!(msg, ServerMsg::Input { id: 7, bytes, .. } if bytes == b"d"));
    assert!(session.heard.try_recv().is_err());
}

/// Claim: the screen has one writer, the connection, which writes the screen's bytes to the held
/// terminal and the server's messages to the socket in the one order they came; it stops using the
/// terminal while the client is stopped with pi, and lets go of it before the client hears it leaves.
#[tokio::test(flavor = "current_thread")]
async fn the_held_terminal_gets_the_screen_the_socket_the_messages_in_order_paused_then_closed() {
    let (master, slave, path) = pty();
    let session = Session::start();
    let mut f = connect(|_| {});
    f.send(&Up::Open {
        target: Target::Attach { name: None },
        cols: 80,
        rows: 24,
        caps: Vec::new(),
        caps_follow: false,
        env: Vec::new(),
        watch: false,
        terminal: Some(path),
    });
    assert!(matches!(
        f.core_heard().await,
        ServerMsg::Event(ServerEvent::Up {
            up: Up::Open { .. },
            ..
        })
    ));
    assert_eq!(f.heard(), Down::Terminal { taken: true });
    f.ctl.send(ConnCmd::Heard).expect("sent");
    let screen = f.follow(&session);
    until(|| session.heard.try_recv().ok().filter(attached)).await;

    type_in(&master, b"k");
    assert_eq!(session.keys(), b"k", "keys come from the terminal");
    screen.send(ClientOut::Bytes(b"frame".to_vec())).expect("sent");
    screen.send(ClientOut::Suspend).expect("sent");
    screen
        .send(ClientOut::Bytes(b"while stopped".to_vec()))
        .expect("sent");
    assert_eq!(shown(&master), b"frame", "the screen went to the terminal, raw");
    assert_eq!(f.heard(), Down::Suspend, "the socket carries the messages");
    type_in(&master, b"for the shell");
    assert!(
        quiet(&master),
        "nothing is drawn while the shell has the terminal"
    );
    assert!(session.heard.recv_timeout(Duration::from_millis(200)).is_err());
    assert_eq!(
        shown(&slave),
        b"for the shell",
        "the shell's keys were left to it"
    );

    f.send(&Up::Resumed { cols: 80, rows: 24 });
    assert!(matches!(
        f.core_heard().await,
        ServerMsg::Event(ServerEvent::Up {
            up: Up::Resumed { .. },
            ..
        })
    ));
    f.ctl.send(ConnCmd::Heard).expect("sent");
    type_in(&master, b"back");
    assert_eq!(session.keys(), b"back");

    screen.send(ClientOut::Bytes(b"last".to_vec())).expect("sent");
    let detached = Down::Detached {
        reason: "detached from 1:work".into(),
    };
    f.ctl.send(ConnCmd::Down(detached.clone())).expect("sent");
    assert_eq!(shown(&master), b"last");
    assert_eq!(f.heard(), detached);
    type_in(&master, b"after");
    assert!(quiet(&master), "nothing reached the terminal after");
    assert!(matches!(
        session.next(),
        WorldEvent::Client(ClientEvent::Detach { id: 7 })
    ));
    assert!(
        session.heard.recv_timeout(Duration::from_millis(200)).is_err(),
        "nor was read from it"
    );
}

/// A connection on the thread of a session that ends comes home with what the session sent it,
/// writes it before the client hears the session ended, and is not sent back there.
#[tokio::test(flavor = "current_thread")]
async fn a_connection_whose_session_ends_under_it_comes_home_and_says_the_end_after_the_last_frame() {
    let mut session = Session::start();
    let f = connect(|_| {});
    let screen = f.follow(&session);
    until(|| session.heard.try_recv().ok().filter(attached)).await;
    let rt = session.end().expect("it ran");
    // Sent while the session's runtime stands still, then dropped with it.
    screen
        .send(ClientOut::Bytes(b"the last frame".to_vec()))
        .expect("sent");
    drop(screen);
    rt.shutdown_background();
    let exited = Down::Exited {
        code: 0,
        farewell: Vec::new(),
    };
    f.ctl.send(ConnCmd::Down(exited.clone())).expect("sent");
    let mut f2 = f;
    let got = tokio::task::spawn_blocking(move || {
        let got = (f2.heard(), f2.heard());
        (got, f2)
    });
    let ((first, second), mut f) = got.await.expect("read");
    assert_eq!(first, Down::Output(b"the last frame".to_vec()));
    assert_eq!(second, exited);
    // The connection ends once the client, told, closes.
    f.client.shutdown(std::net::Shutdown::Both).expect("closed");
    assert!(matches!(
        f.core_heard().await,
        ServerMsg::Event(ServerEvent::Gone { id: 7 })
    ));
}

/// Input the session's program does not take waits with the client (its socket unread) and goes on
/// once there is room again.
#[tokio::test(flavor = "current_thread")]
async fn input_held_back_waits_in_the_socket_until_there_is_room() {
    let session = Session::start();
    let gauge = Arc::new(AtomicUsize::new(input_meter::SOFT_BOUND + 1));
    let held = gauge.clone();
    let mut f = connect(move |c| c.in_flight = held);
    let _screen = f.follow(&session);
    until(|| session.heard.try_recv().ok().filter(attached)).await;
    f.send(&Up::Input(b"z".to_vec()));
    assert!(
        session.heard.recv_timeout(Duration::from_millis(200)).is_err(),
        "held back"
    );
    gauge.store(0, Ordering::Release);
    assert_eq!(session.keys(), b"z", "read once there is room");
}
