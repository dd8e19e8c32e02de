//! The terminal's side of an attached session: raw mode, the start-up probe (its answers go to the
//! server, which answers pi's queries from them), keys and sizes up, frames down. Closing the
//! terminal, losing SSH, SIGTERM or prefix+d only detach: the session goes on in the server.

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::unbounded_channel;

use super::upward::Upward;
use crate::term::host::watchdog::Watchdog;
use crate::term::host::{self, TerminalGuard};
use pokeshell_core::wire::{self, Down, FrameBuf, Target, Up};

/// How an attachment ended.
#[derive(Debug)]
pub enum Ending {
    /// The user chose a session on another machine; the terminal is restored, ssh goes there.
    Hop { dest: String, name: String },
    /// The session's program ended: its code, and what it left on its main screen.
    Exited { code: i32, farewell: Vec<u8> },
    /// The client detached (or was detached).
    Detached(String),
    /// The terminal went away, or a signal asked the client to end.
    Signal(i32),
    /// The server refused, or went away.
    Failed(String),
}

pub(crate) const GONE: &str = "the pokeshell server went away";

/// How long the client's loop waits for room in the socket (a server that does not read).
const SEND_LIMIT: Duration = Duration::from_secs(2);

enum Event {
    /// A key could not be sent: the server is gone.
    Gone,
    StdinClosed,
    Signal(i32),
}

/// Takes the terminal, reaches the server (`connect`: starting it if need be) and attaches this
/// terminal to `target` until the session ends or the client detaches. The terminal is restored
/// before this returns.
pub fn run(
    connect: impl FnOnce() -> Result<StdUnixStream, String> + Send + 'static,
    target: Target,
    probe_timeout: Duration,
) -> Result<Ending> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(attached(connect, target, probe_timeout))
}

async fn attached(
    connect: impl FnOnce() -> Result<StdUnixStream, String> + Send + 'static,
    target: Target,
    probe_timeout: Duration,
) -> Result<Ending> {
    let (tx, mut rx) = unbounded_channel::<Event>();
    // First, so that no signal finds the terminal taken and nobody to give it back.
    let watchdog = {
        let tx = tx.clone();
        Watchdog::start(move |sig| {
            let _ = tx.send(Event::Signal(sig));
        })?
    };
    // Raw mode first: until then a Ctrl+C or Ctrl+\ typed while the server starts ends the client.
    let guard = TerminalGuard::enter()?;
    // pi starts while the terminal is still being probed: its queries wait for the answers.
    let probing = host::probe::send();
    let stream = match tokio::task::spawn_blocking(connect).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            drop(guard);
            watchdog.finished();
            return Ok(Ending::Failed(e));
        }
        Err(e) => anyhow::bail!("cannot reach the pokeshell server: {e}"),
    };
    let (cols, rows) = crossterm::terminal::size().context("cannot read the terminal size")?;
    stream
        .set_nonblocking(true)
        .context("cannot use the server's socket")?;
    let upward = Upward::new(stream.try_clone().context("cannot use the server's socket")?);
    let mut rd = crate::ipc::halves::reader(stream).context("cannot use the server's socket")?;
    let blocker = crate::term::host::test_hook::LoopBlocker::from_env();
    // The test hook's byte must reach this client's loop: its keys stay with it.
    let terminal = if blocker.is_some() { None } else { own_terminal() };
    let offered = terminal.is_some();
    let open = Up::Open {
        target,
        cols,
        rows,
        caps: Vec::new(),
        caps_follow: true,
        env: std::env::vars().collect(),
        watch: false,
        terminal,
    };
    upward
        .send(&wire::encode_up(&open), Some(SEND_LIMIT))
        .context("cannot talk to the server")?;
    let answers = if probing {
        let timeout = probe_timeout;
        tokio::task::spawn_blocking(move || host::probe::read_raw_answers(timeout))
            .await
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let typed = crate::term::screen::HostCaps::parse_probe(&answers).leftover;
    let mut first = wire::encode_up(&Up::Caps(answers));
    if !typed.is_empty() {
        first.extend(wire::encode_input(&typed));
    }
    if upward.send(&first, Some(SEND_LIMIT)).is_err() {
        drop(guard);
        watchdog.finished();
        return Ok(Ending::Failed(GONE.to_string()));
    }
    // Keys are read here unless the server reads the terminal itself: until it says which, nobody
    // reads them (they wait in the terminal).
    let mut keys_here = Some((tx.clone(), upward.clone(), watchdog, blocker));
    let mut reader = None;
    if !offered && let Some((tx, up, dog, blocker)) = keys_here.take() {
        reader = Some(spawn_stdin(tx, up, dog, blocker));
    }
    let mut winch = signal(SignalKind::window_change()).context("cannot watch terminal resizes")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    // SIGUSR1 is the server's (it drops the bridge connections); here it must not end the client.
    let mut usr1 = signal(SignalKind::user_defined1()).context("cannot watch SIGUSR1")?;
    let mut frames = FrameBuf::new();
    let mut buf = vec![0u8; 64 * 1024];
    // The open is answered (attached, or refused) within a deadline; then frames come when they do.
    let open_deadline = tokio::time::Instant::now() + super::deadline::OPEN_LIMIT;
    let mut answered = false;
    let ending = loop {
        tokio::select! {
            n = tokio::io::AsyncReadExt::read(&mut rd, &mut buf) => {
                let n = match n {
                    Ok(0) | Err(_) => break Ending::Failed(GONE.to_string()),
                    Ok(n) => n,
                };
                answered = true;
                frames.push(&buf[..n]);
                let mut taken = None;
                let step = on_frames(&mut frames, &guard, &mut taken);
                match taken {
                    Some(false) => {
                        if let Some((tx, up, dog, blocker)) = keys_here.take() {
                            reader = Some(spawn_stdin(tx, up, dog, blocker));
                        }
                    }
                    Some(true) => {
                        keys_here = None;
                        // What pi set on the terminal is no longer seen here: undone at the end
                        // whether it was set or not.
                        host::note_kitty_pushed();
                        host::note_modify_other_keys(true);
                    }
                    None => {}
                }
                match step {
                    Ok(None) => {}
                    Ok(Some(Step::End(e))) => break e,
                    Ok(Some(Step::Resumed)) => {
                        let (cols, rows) = crossterm::terminal::size().unwrap_or((cols, rows));
                        let _ = upward.send(&wire::encode_up(&Up::Resumed { cols, rows }), Some(SEND_LIMIT));
                    }
                    Err(e) => break Ending::Failed(e),
                }
            }
            ev = rx.recv() => match ev {
                Some(Event::Gone) => break Ending::Failed(GONE.to_string()),
                Some(Event::StdinClosed) => break Ending::Signal(libc::SIGHUP),
                Some(Event::Signal(sig)) => break Ending::Signal(sig),
                None => break Ending::Signal(libc::SIGHUP),
            },
            _ = winch.recv() => {
                if let Ok((cols, rows)) = crossterm::terminal::size() {
                    let _ = upward.send(&wire::encode_up(&Up::Resize { cols, rows }), Some(SEND_LIMIT));
                }
            }
            _ = int.recv() => break Ending::Signal(libc::SIGINT),
            _ = tokio::time::sleep_until(open_deadline), if !answered => {
                break Ending::Failed(super::connect::no_answer_in("the attach", super::deadline::OPEN_LIMIT, None));
            }
            _ = usr1.recv() => {}
        }
    };
    if matches!(ending, Ending::Signal(_)) {
        // Tell the server at once rather than by the socket closing; it may not be read.
        let _ = upward.send(&wire::encode_up(&Up::Detach), Some(Duration::from_millis(200)));
    }
    if matches!(ending, Ending::Hop { .. }) {
        // ssh reads the terminal next: this client's reader must be gone, not waiting in a read
        // that would take the user's first key.
        if let Some(reader) = reader {
            reader.stop();
        }
    }
    drop(guard);
    watchdog.finished();
    Ok(ending)
}

/// The terminal this client runs in, when its input and output are that one terminal: the server
/// may read and write it itself (`crate::ipc::terminal`).
fn own_terminal() -> Option<String> {
    let input = crate::ipc::terminal::path_of(std::io::stdin().as_fd())?;
    let output = crate::ipc::terminal::path_of(std::io::stdout().as_fd())?;
    (input == output).then_some(input)
}

/// The stdin reader's thread and the pipe that tells it to end.
struct Reader {
    thread: Option<std::thread::JoinHandle<()>>,
    stop: Option<std::os::fd::OwnedFd>,
}

impl Reader {
    fn stop(mut self) {
        // Closing the write end wakes the reader's poll.
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Waits until stdin has bytes (true) or the stop pipe is closed (false).
fn wait_stdin(stop: &std::os::fd::OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    loop {
        let mut fds = [
            libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: stop.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds on the stack.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if r < 0 {
            // poll itself failed: the read decides, as it did without the stop pipe.
            return true;
        }
        if fds[1].revents != 0 {
            return false;
        }
        if fds[0].revents != 0 {
            return true;
        }
    }
}

fn stop_pipe() -> Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds on success; each is owned once.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: fresh fds from pipe2, owned by nothing else.
    Some(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

enum Step {
    End(Ending),
    Resumed,
}

/// The frames read so far; `taken` is set when the server said who reads the keys.
fn on_frames(
    frames: &mut FrameBuf,
    guard: &TerminalGuard,
    taken: &mut Option<bool>,
) -> Result<Option<Step>, String> {
    let mut out = std::io::stdout().lock();
    let mut step = None;
    while let Some((kind, payload)) = frames.next().map_err(|e| e.to_string())? {
        if kind == wire::kind::OUTPUT {
            // The hot path: written as it came, no message built.
            host::note_modes_in(&payload);
            out.write_all(&payload)
                .map_err(|e| format!("cannot write to the terminal: {e}"))?;
            continue;
        }
        match wire::decode_down(kind, &payload).map_err(|e| e.to_string())? {
            Down::Output(bytes) => {
                host::note_modes_in(&bytes);
                out.write_all(&bytes)
                    .map_err(|e| format!("cannot write to the terminal: {e}"))?
            }
            Down::Exited { code, farewell } => return Ok(Some(Step::End(Ending::Exited { code, farewell }))),
            Down::Detached { reason } => return Ok(Some(Step::End(Ending::Detached(reason)))),
            Down::Error { message } => return Ok(Some(Step::End(Ending::Failed(message)))),
            Down::Hop { dest, name } => return Ok(Some(Step::End(Ending::Hop { dest, name }))),
            Down::Terminal { taken: t } => *taken = Some(t),
            Down::Suspend => {
                let _ = out.flush();
                guard.suspend().map_err(|e| e.to_string())?;
                step = Some(Step::Resumed);
            }
            Down::Welcome { .. }
            | Down::Attached { .. }
            | Down::Listing { sessions: _ }
            | Down::Done { .. }
            | Down::Notice { .. }
            | Down::Size { .. }
            | Down::Note { .. }
            | Down::Acted { .. }
            | Down::Said { .. }
            | Down::Meanwhile { .. }
            | Down::WebLogin { .. } => {}
        }
    }
    out.flush()
        .map_err(|e| format!("cannot write to the terminal: {e}"))?;
    Ok(step)
}

/// Reads the terminal on a thread of its own (a blocking read that ends with the terminal) and
/// sends what it reads up to the server.
fn spawn_stdin(
    tx: tokio::sync::mpsc::UnboundedSender<Event>,
    upward: Upward,
    watchdog: Watchdog,
    mut blocker: Option<crate::term::host::test_hook::LoopBlocker>,
) -> Reader {
    let (read_end, write_end) = stop_pipe().map_or((None, None), |(r, w)| (Some(r), Some(w)));
    let thread = std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            if let Some(stop) = &read_end
                && !wait_stdin(stop)
            {
                return;
            }
            // SAFETY: reading into a local buffer of the given length.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if n <= 0 {
                // From this thread: the loop may be the thing that is stuck.
                watchdog.terminal_lost();
                let _ = tx.send(Event::StdinClosed);
                return;
            }
            let bytes = &buf[..n as usize];
            if blocker.as_mut().is_some_and(|b| b.intercept(bytes)) {
                continue;
            }
            // Straight to the socket: a key does not wait for the client's loop to wake.
            if upward.send(&wire::encode_input(bytes), None).is_err() {
                let _ = tx.send(Event::Gone);
                return;
            }
        }
    });
    Reader {
        thread: Some(thread),
        stop: write_end,
    }
}
