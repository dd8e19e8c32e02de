//! Key-to-echo latency. The bench binary doubles as the echo program (`--pokeshell-bench-echo
//! quiet|flood`): it shows every key it reads on the last row of its terminal, like an editor line
//! under a busy output area, and in `flood` mode writes coloured lines into the rows above as fast as
//! the terminal takes them. The bench types Greek letters (they occur nowhere else in the output)
//! and times each until it shows up in what the outer terminal receives.

use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::{private, pty_run};

pub const ECHO_FLAG: &str = "--pokeshell-bench-echo";

/// Runs the echo program on this process's terminal until it reads `q`.
pub fn echo_program(flood: bool) {
    let mut out = std::io::stdout().lock();
    // SAFETY: termios calls on fd 0 with a valid local struct.
    let rows = unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(0, &mut t) == 0 {
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(0, libc::TCSANOW, &t);
        }
        let mut ws: libc::winsize = std::mem::zeroed();
        libc::ioctl(0, libc::TIOCGWINSZ, &mut ws);
        ws.ws_row.max(3)
    };
    let _ = write!(out, "\x1b[2J\x1b[1;{}r\x1b[{};1Hecho: ready", rows - 1, rows);
    let _ = write!(out, "\x1b[1;1H");
    let _ = out.flush();
    let mut line = 0u64;
    let mut buf = [0u8; 64];
    loop {
        let mut fds = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        let wait = if flood { 0 } else { -1 };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut fds, 1, wait) } > 0 {
            // SAFETY: reading into a local buffer of its length.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 || buf[..n as usize].contains(&b'q') {
                break;
            }
            let _ = out.write_all(format!("\x1b7\x1b[{rows};1Hecho: ").as_bytes());
            let _ = out.write_all(&buf[..n as usize]);
            let _ = out.write_all(b"\x1b[K\x1b8");
            let _ = out.flush();
        }
        if flood {
            let mut block = String::with_capacity(4096);
            while block.len() < 4000 {
                line += 1;
                block.push_str(&format!(
                    "\x1b[38;5;{}m{line:>9}\x1b[0m \x1b[1mflood\x1b[0m line of output {}\r\n",
                    line % 256,
                    line * 7919 % 100_000
                ));
            }
            if out
                .write_all(block.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                break;
            }
        }
    }
    let _ = out.write_all(b"\x1b[r\x1b[2J");
    let _ = out.flush();
}

fn greek(i: usize) -> char {
    char::from_u32(0x3b1 + (i % 24) as u32).unwrap_or('α')
}

/// Types `keys` keys into `program` and returns each key's latency until its echo arrived (keys
/// whose echo never came within two seconds are left out and counted in the second value).
/// `pokeshell`: the program is pokeshell, which gets a server of its own for the run.
pub fn measure(program: &str, args: &[&str], keys: usize, pokeshell: bool) -> (Vec<Duration>, usize) {
    let expected = Arc::new(AtomicU32::new(0));
    let (seen_tx, seen_rx) = mpsc::channel::<Instant>();
    let watch_expected = Arc::clone(&expected);
    let mut carry: Vec<u8> = Vec::new();
    let watch = move |chunk: &[u8]| {
        let want = watch_expected.load(Ordering::Acquire);
        let Some(c) = char::from_u32(want).filter(|_| want != 0) else {
            carry.clear();
            return;
        };
        let mut enc = [0u8; 4];
        let needle = c.encode_utf8(&mut enc).as_bytes();
        carry.extend_from_slice(chunk);
        if carry.windows(needle.len()).any(|w| w == needle)
            && watch_expected
                .compare_exchange(want, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            let _ = seen_tx.send(Instant::now());
        }
        let keep = carry.len().saturating_sub(needle.len() - 1);
        carry.drain(..keep);
    };
    let (running, private) = if pokeshell {
        let (r, p) = private::spawn(program, args, watch);
        (r, Some(p))
    } else {
        (pty_run::spawn(program, args, &[], watch), None)
    };
    let start = Instant::now();
    // The first key also waits for the program (and pokeshell) to start.
    let mut latencies = Vec::new();
    let mut missed = 0;
    for i in 0..=keys {
        let c = greek(i);
        expected.store(c as u32, Ordering::Release);
        let sent = Instant::now();
        let mut enc = [0u8; 4];
        running.send(c.encode_utf8(&mut enc).as_bytes());
        let limit = if i == 0 {
            Duration::from_secs(30)
        } else {
            Duration::from_secs(2)
        };
        match seen_rx.recv_timeout(limit) {
            Ok(at) if i > 0 => latencies.push(at.saturating_duration_since(sent)),
            Ok(_) => {}
            Err(_) => {
                expected.store(0, Ordering::Release);
                missed += 1;
            }
        }
        // Keys come at a typist's pace, off the frame rhythm.
        std::thread::sleep(Duration::from_millis(15 + (i as u64 * 7) % 20));
    }
    running.send(b"q");
    let limit = Duration::from_secs(60);
    match private {
        Some(p) => drop(private::finish(running, p, start, limit)),
        None => drop(running.finish(start, limit, |_| {})),
    }
    (latencies, missed)
}

/// The p-th percentile (0..=100) of `v`, in milliseconds.
pub fn percentile_ms(v: &[Duration], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut v = v.to_vec();
    v.sort();
    let idx = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
    v[idx.min(v.len() - 1)].as_secs_f64() * 1000.0
}

/// The `n` largest of `v`, in milliseconds, largest first.
pub fn slowest_ms(v: &[Duration], n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = v
        .iter()
        .map(|d| (d.as_secs_f64() * 10_000.0).round() / 10.0)
        .collect();
    v.sort_by(|a, b| b.total_cmp(a));
    v.truncate(n);
    v
}
