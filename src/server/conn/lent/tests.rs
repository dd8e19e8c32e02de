use std::io::Write;

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::*;
use crate::server::event_loop::{ClientEvent, WorldEvent};
use crate::server::route::Target;
use pokeshell_core::wire::Up;

struct Fixture {
    route: Arc<Route>,
    keys: UnboundedReceiver<WorldEvent>,
    /// The client's end of the socket.
    client: UnixStream,
    in_flight: Arc<AtomicUsize>,
}

/// A route to a session whose loop is `keys`, on this runtime, and a reading lent to it.
fn lend() -> (Fixture, Lent, oneshot::Receiver<Reading>) {
    let (ours, client) = UnixStream::pair().expect("socket pair");
    ours.set_nonblocking(true).expect("non-blocking");
    let (tx, keys) = unbounded_channel();
    let route = Arc::new(Route::default());
    route.set(Some(Target {
        tx,
        runtime: tokio::runtime::Handle::current(),
    }));
    let generation = route.lendable().expect("lendable").generation;
    let reading = Reading {
        stream: Arc::new(ours),
        frames: FrameBuf::new(),
        refused: false,
    };
    let in_flight = Arc::new(AtomicUsize::new(0));
    let (server, _) = unbounded_channel();
    let counts = (in_flight.clone(), Following::default());
    let (lent, back) = Lent::new(7, reading, route.clone(), generation, server, counts);
    let fixture = Fixture {
        route,
        keys,
        client,
        in_flight,
    };
    (fixture, lent, back)
}

async fn next_key(keys: &mut UnboundedReceiver<WorldEvent>) -> Vec<u8> {
    next_with_ticket(keys).await.0
}

async fn next_with_ticket(keys: &mut UnboundedReceiver<WorldEvent>) -> (Vec<u8>, Ticket) {
    let ev = tokio::time::timeout(Duration::from_secs(5), keys.recv())
        .await
        .expect("a key in time")
        .expect("the channel open");
    match ev {
        WorldEvent::Client(ClientEvent::Input { id: 7, bytes, ticket }) => (bytes, ticket),
        _ => panic!("not client 7's input"),
    }
}

/// What is left in a reading given back, frame by frame.
fn unread(mut frames: FrameBuf) -> Vec<Up> {
    let mut out = Vec::new();
    while let Ok(Some((k, payload))) = frames.next() {
        out.push(wire::decode_up(k, &payload).expect("a message"));
    }
    out
}

#[tokio::test(flavor = "current_thread")]
async fn keys_go_to_the_session_and_the_first_other_message_goes_back_unread_in_order() {
    let (mut f, lent, back) = lend();
    let task = tokio::spawn(read(lent));
    f.client.write_all(&wire::encode_input(b"ab")).expect("write");
    let (bytes, ticket) = next_with_ticket(&mut f.keys).await;
    assert_eq!(bytes, b"ab");
    // A key's ticket keeps it counted until the session's loop took it.
    assert_eq!(f.in_flight.load(Ordering::Acquire), 2);
    drop(ticket);
    assert_eq!(f.in_flight.load(Ordering::Acquire), 0);
    let mut rest = wire::encode_input(b"c");
    rest.extend(wire::encode_up(&Up::Resize { cols: 90, rows: 30 }));
    rest.extend(wire::encode_input(b"d"));
    rest.extend(&wire::encode_input(b"e")[..3]);
    f.client.write_all(&rest).expect("write");
    let reading = tokio::time::timeout(Duration::from_secs(5), back)
        .await
        .expect("given back in time")
        .expect("given back");
    task.await.expect("the reader ended");
    assert_eq!(next_key(&mut f.keys).await, b"c");
    assert!(
        f.keys.try_recv().is_err(),
        "nothing after the resize went to the session"
    );
    assert!(!reading.refused);
    let mut frames = reading.frames;
    // The half frame stays for the connection to finish reading.
    assert_eq!(frames.buffered(), rest.len() - wire::encode_input(b"c").len());
    frames.push(&wire::encode_input(b"e")[3..]);
    assert_eq!(
        unread(frames),
        vec![
            Up::Resize { cols: 90, rows: 30 },
            Up::Input(b"d".to_vec()),
            Up::Input(b"e".to_vec())
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_change_of_route_ends_the_lending_and_no_key_goes_the_old_way() {
    let (mut f, lent, back) = lend();
    let task = tokio::spawn(read(lent));
    f.client.write_all(&wire::encode_input(b"x")).expect("write");
    assert_eq!(next_key(&mut f.keys).await, b"x");
    f.route.set(None);
    let reading = tokio::time::timeout(Duration::from_secs(5), back)
        .await
        .expect("given back in time")
        .expect("given back");
    task.await.expect("the reader ended");
    f.client.write_all(&wire::encode_input(b"y")).expect("write");
    // The socket is the connection's again, nothing is read from it here.
    tokio::task::yield_now().await;
    assert!(f.keys.try_recv().is_err());
    assert_eq!(unread(reading.frames), Vec::<Up>::new());
}

#[tokio::test(flavor = "current_thread")]
async fn input_held_back_or_a_closed_socket_gives_the_reading_back() {
    let (mut f, lent, back) = lend();
    // The session's program reads nothing: the client's input waits with the connection.
    f.in_flight.store(input_meter::SOFT_BOUND + 1, Ordering::Release);
    let task = tokio::spawn(read(lent));
    f.client.write_all(&wire::encode_input(b"z")).expect("write");
    let reading = back.await.expect("given back");
    task.await.expect("the reader ended");
    assert!(f.keys.try_recv().is_err());
    assert_eq!(unread(reading.frames), vec![Up::Input(b"z".to_vec())]);

    let (f, lent, back) = lend();
    drop(f.client);
    tokio::spawn(read(lent));
    let reading = back.await.expect("given back");
    assert_eq!(reading.frames.buffered(), 0);
    assert!(!reading.refused, "the session's runtime took it");
}

#[test]
fn a_reading_lent_to_a_runtime_that_ends_comes_back() {
    let outer = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (f, lent, back) = outer.block_on(async { lend() });
    let session = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Spawned on a runtime that never runs it, then dropped with the runtime.
    session.spawn(read(lent));
    drop(session);
    let reading = back.blocking_recv().expect("given back");
    // The connection must not lend it there again (it would go round and round).
    assert!(reading.refused);
    drop(f);
}
