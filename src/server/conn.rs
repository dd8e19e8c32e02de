//! One client's connection to the server: who it is (same uid, the token), then frames both ways.
//! What the client sends goes to the server's state as [`ServerMsg::Up`] (its writer is handed over
//! first, as [`Handle::Conn`]); what goes back is the
//! server's own messages and the frames of the session the client follows. A client follows one
//! session at a time: switching hands the writer a new channel, so nothing of the old session can
//! arrive after the new one's first frame.
//!
//! When the client names its terminal and the server can open it (`crate::ipc::terminal`), the
//! keys are read from the terminal ([`TerminalKeys`]) and the screen's bytes written there; the
//! socket then carries everything else.

use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use keyboard::{TerminalKeys, take_terminal};
use lent::{Lent, Reading};

use super::perform::Handle;
use super::route::Route;
use super::serve::{ServerEvent, ServerMsg};
use crate::ipc::halves::{self, ReadHalf};
use crate::ipc::outbox::Outbox;
use crate::ipc::socket;
use crate::server::event_loop::ClientOut;
use crate::server::event_loop::input_meter::{self, Ticket, Verdict};
use pokeshell_core::wire::{self, Down, FrameBuf, Up};

mod keyboard;
pub mod lent;
mod writer;

/// How often a client typing the short way tells the core, which keeps the session used last.
const TYPED_EVERY: Duration = Duration::from_secs(1);
/// What a connection's reader takes from the socket at once: many keys' frames.
const READ_BUFFER: usize = 16 * 1024;

/// What the server's state tells a connection's writer.
#[derive(Debug)]
pub enum ConnCmd {
    Down(Down),
    /// Follow this session's frames from now on (and no other's).
    Follow {
        out: UnboundedReceiver<ClientOut>,
        queued: Arc<AtomicUsize>,
        /// The session's program's input queue: reading this client stops while it is high.
        input_queued: Arc<AtomicUsize>,
    },
    /// Stop following any session.
    Unfollow,
}

async fn refuse(stream: &mut (impl AsyncWriteExt + Unpin), reason: &str) {
    let frame = wire::encode_down(&Down::Error {
        message: format!("refused: {reason}"),
    });
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), stream.write_all(&frame)).await;
}

/// Serves one accepted connection until either side ends it.
pub async fn serve(
    id: u64,
    mut stream: UnixStream,
    token: Arc<str>,
    server: UnboundedSender<ServerMsg>,
    handles: UnboundedSender<Handle>,
) {
    if let Err(reason) = socket::admit(&stream).await {
        refuse(&mut stream, &reason).await;
        return;
    }
    let outbox = match Outbox::new(stream.as_fd()) {
        Ok(outbox) => Arc::new(outbox),
        Err(e) => {
            refuse(
                &mut stream,
                &format!("the server cannot take the connection: {e}"),
            )
            .await;
            return;
        }
    };
    let (rd, mut wr) = match stream.into_std().and_then(halves::split) {
        Ok(halves) => halves,
        Err(e) => {
            eprintln!("pokeshell server: cannot take a connection: {e}");
            return;
        }
    };
    // A frame is read whole in one call where the socket has it whole.
    let mut rd = BufReader::with_capacity(READ_BUFFER, rd);
    if let Err(reason) = socket::read_hello(&mut rd, &token, socket::HELLO_TIMEOUT).await {
        refuse(&mut wr, &reason).await;
        return;
    }
    let (ctl_tx, ctl_rx) = unbounded_channel::<ConnCmd>();
    outbox.counted();
    let _ = ctl_tx.send(ConnCmd::Down(Down::Welcome {
        server_pid: std::process::id(),
        restoring: super::restoring::pending(),
    }));
    let route = Arc::new(Route::default());
    let answers = ctl_tx.clone();
    let handle = Handle::Conn {
        id,
        ctl: ctl_tx,
        route: route.clone(),
        outbox: outbox.clone(),
    };
    if handles.send(handle).is_err() {
        return;
    }
    let following = Following::default();
    let writer = tokio::spawn(writer::write_loop(wr, ctl_rx, following.clone(), outbox.clone()));
    // This client's input not yet taken by its session's loop.
    let in_flight = Arc::new(AtomicUsize::new(0));
    let mut told_typed: Option<Instant> = None;
    let held_limit = input_meter::held_limit();
    let mut frames = FrameBuf::new();
    frames.push(rd.buffer());
    let mut rd = rd.into_inner();
    let mut buf = vec![0u8; READ_BUFFER];
    // The route's generation for which the session's runtime did not take the reading.
    let mut refused: Option<u64> = None;
    let garbage = |reason: String| {
        let _ = server.send(ServerEvent::Garbage { id, reason }.into());
    };
    // The keys of the client's terminal, when the server reads it: from the terminal's answers to
    // the probe on (they are read by the client).
    let mut keyboard: Option<tokio::task::JoinHandle<()>> = None;
    let mut keys_after_caps = false;
    loop {
        if let Err(reason) = input_room(&in_flight, &following, held_limit).await {
            garbage(reason);
            break;
        }
        let (kind, payload) = match frames.next() {
            Ok(Some(frame)) => frame,
            Ok(None) => {
                // Nothing whole is left to read here: the session the client types into may read
                // the socket on its own thread until anything but a key comes (see `lent`); not
                // when its keys come from its terminal.
                if let Some(to) = route
                    .lendable()
                    .filter(|to| refused != Some(to.generation) && outbox.terminal().is_none())
                {
                    let reading = Reading {
                        stream: rd.into_stream(),
                        frames: std::mem::take(&mut frames),
                        refused: false,
                    };
                    let counts = (in_flight.clone(), following.clone());
                    let (lent, back) =
                        Lent::new(id, reading, route.clone(), to.generation, server.clone(), counts);
                    to.runtime.spawn(lent::read(lent));
                    let Ok(reading) = back.await else { break };
                    refused = reading.refused.then_some(to.generation);
                    frames = reading.frames;
                    rd = match ReadHalf::of(reading.stream) {
                        Ok(rd) => rd,
                        Err(e) => {
                            eprintln!("pokeshell server: cannot read a connection again: {e}");
                            break;
                        }
                    };
                    continue;
                }
                match rd.read(&mut buf).await {
                    Ok(0) => {
                        if let Err(e) = frames.finish() {
                            garbage(e.to_string());
                        }
                        break;
                    }
                    Ok(n) => frames.push(&buf[..n]),
                    Err(e) => {
                        garbage(e.to_string());
                        break;
                    }
                }
                continue;
            }
            Err(e) => {
                garbage(e.to_string());
                break;
            }
        };
        match wire::decode_up(kind, &payload) {
            Ok(Up::Input(bytes)) => {
                if !pass_keys(id, bytes, &in_flight, &route, &server, &mut told_typed) {
                    break;
                }
            }
            Ok(up) => {
                let read_keys = match &up {
                    Up::Open {
                        terminal: Some(path),
                        caps_follow,
                        ..
                    } if outbox.terminal().is_none() => {
                        let taken = take_terminal(path, &outbox);
                        outbox.counted();
                        if answers.send(ConnCmd::Down(Down::Terminal { taken })).is_err() {
                            outbox.uncounted();
                        }
                        keys_after_caps = taken && *caps_follow;
                        taken && !*caps_follow
                    }
                    Up::Caps(_) => std::mem::take(&mut keys_after_caps),
                    Up::Resumed { .. } => {
                        // The client has its terminal back from the shell.
                        if let Some(t) = outbox.terminal() {
                            t.resume();
                        }
                        false
                    }
                    _ => false,
                };
                route.went_long_way();
                if server.send(ServerEvent::Up { id, up }.into()).is_err() {
                    break;
                }
                // After what came before them is on its way: the keys do not overtake it.
                if read_keys
                    && keyboard.is_none()
                    && let Some(term) = outbox.terminal()
                {
                    let keys = TerminalKeys {
                        id,
                        term: term.clone(),
                        route: route.clone(),
                        server: server.clone(),
                        in_flight: in_flight.clone(),
                        following: following.clone(),
                        held_limit,
                    };
                    keyboard = Some(tokio::spawn(keys.run()));
                }
            }
            Err(e) => {
                garbage(e.to_string());
                break;
            }
        }
    }
    // The client is gone: its terminal is not the server's any more.
    if let Some(t) = outbox.terminal() {
        t.close();
    }
    if let Some(keyboard) = keyboard {
        keyboard.abort();
    }
    let _ = server.send(ServerEvent::Gone { id }.into());
    // The writer ends once the server's state has dropped this client's channel.
    let _ = writer.await;
}

/// Hands the session keys the client typed, the short way when it is open, else through the core;
/// `false`: the server is ending.
fn pass_keys(
    id: u64,
    bytes: Vec<u8>,
    in_flight: &Arc<AtomicUsize>,
    route: &Route,
    server: &UnboundedSender<ServerMsg>,
    told_typed: &mut Option<Instant>,
) -> bool {
    let ticket = Ticket::new(in_flight, bytes.len());
    match route.key(id, bytes, ticket) {
        // Off the key's path: the key is with the session already.
        Ok(()) => {
            tell_typed(told_typed, server, id);
            true
        }
        Err((bytes, ticket)) => {
            route.went_long_way();
            server.send(ServerMsg::Input { id, bytes, ticket }).is_ok()
        }
    }
}

/// The input queue of the session the client follows: the writer hears of switches, the reader
/// holds back while it is high.
pub type Following = Arc<std::sync::Mutex<Option<Arc<AtomicUsize>>>>;

/// Waits until there is room for this client's input ([`input_meter::verdict`]); `Err`: the client
/// is to be dropped, and why.
async fn input_room(in_flight: &AtomicUsize, following: &Following, limit: Duration) -> Result<(), String> {
    let held = tokio::time::Instant::now();
    loop {
        match input_meter::verdict(
            in_flight.load(Ordering::Acquire),
            queued(following),
            held.elapsed(),
            limit,
        ) {
            Verdict::Read => return Ok(()),
            Verdict::Drop(reason) => return Err(reason),
            // The queue drains as the program reads: looked at again shortly, cheaply.
            Verdict::Wait => tokio::time::sleep(input_meter::RECHECK).await,
        }
    }
}

/// The bytes waiting in the input queue of the session the client follows.
fn queued(following: &Following) -> usize {
    following
        .lock()
        .map_or(0, |f| f.as_ref().map_or(0, |q| q.load(Ordering::Acquire)))
}

/// Tells the core that client `id` typed the short way, at most once every [`TYPED_EVERY`].
fn tell_typed(told: &mut Option<Instant>, server: &UnboundedSender<ServerMsg>, id: u64) {
    if told.is_none_or(|t| t.elapsed() >= TYPED_EVERY) {
        *told = Some(Instant::now());
        let _ = server.send(ServerEvent::Typed { id }.into());
    }
}
