//! A program in a PTY of its own, drained like a terminal would: its output is read as fast as it
//! comes, DA1 queries are answered, and every chunk can be looked at on the way.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;

pub type SharedWriter = Arc<Mutex<Box<dyn Write + Send>>>;

pub struct Running {
    pub child: Box<dyn Child + Send + Sync>,
    pub pid: u32,
    pub writer: SharedWriter,
    drain: JoinHandle<u64>,
}

/// What the process used, sampled while it ran.
#[derive(Default, Clone, Copy)]
pub struct Usage {
    /// Peak resident set, kB (VmHWM).
    pub peak_rss_kb: u64,
    /// User plus system CPU time of the process itself (all threads, not its children), ticks.
    pub cpu_ticks: u64,
}

impl Usage {
    pub fn sample(&mut self, pid: u32) {
        if let Some(kb) = status_kb(pid, "VmHWM:") {
            self.peak_rss_kb = self.peak_rss_kb.max(kb);
        }
        if let Some(t) = cpu_ticks(pid) {
            self.cpu_ticks = self.cpu_ticks.max(t);
        }
    }

    /// Two processes' usage together: CPU times add up, and so do the peaks (an upper bound of the
    /// peak of the sum).
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            peak_rss_kb: self.peak_rss_kb + other.peak_rss_kb,
            cpu_ticks: self.cpu_ticks + other.cpu_ticks,
        }
    }

    pub fn cpu(&self) -> Duration {
        Duration::from_secs_f64(self.cpu_ticks as f64 / ticks_per_sec())
    }
}

pub fn ticks_per_sec() -> f64 {
    // SAFETY: sysconf has no memory effects.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }) as f64
}

pub fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Starts `program` in a fresh 120x40 PTY. `watch` sees every chunk of output.
pub fn spawn(
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
    mut watch: impl FnMut(&[u8]) + Send + 'static,
) -> Running {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("TMUX");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let pid = child.process_id().expect("pid");
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let writer: SharedWriter = Arc::new(Mutex::new(pair.master.take_writer().expect("writer")));
    let answer = Arc::clone(&writer);
    // The master must outlive the child's output: keep it in the drain thread.
    let master = pair.master;
    let drain = std::thread::spawn(move || {
        let _master = master;
        let mut buf = vec![0u8; 256 * 1024];
        let mut total = 0u64;
        let mut tail = [0u8; 2];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n as u64;
                    let chunk = &buf[..n];
                    // A DA1 query may straddle two reads.
                    let straddles = (tail == *b"\x1b[" && chunk.first() == Some(&b'c'))
                        || (tail[1] == 0x1b && chunk.starts_with(b"[c"));
                    if straddles || chunk.windows(3).any(|w| w == b"\x1b[c") {
                        let mut w = answer.lock().unwrap_or_else(|p| p.into_inner());
                        let _ = w.write_all(b"\x1b[?62;22c");
                        let _ = w.flush();
                    }
                    if n >= 2 {
                        tail.copy_from_slice(&chunk[n - 2..]);
                    } else {
                        tail = [tail[1], chunk[0]];
                    }
                    watch(chunk);
                }
            }
        }
        total
    });
    Running {
        child,
        pid,
        writer,
        drain,
    }
}

impl Running {
    pub fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let _ = w.write_all(bytes);
        let _ = w.flush();
    }

    /// Waits for the child to exit, sampling `also` (another process, e.g. tmux's server) too;
    /// kills it after `limit`. Returns the wall time since `start`, the usage, and the bytes read.
    pub fn finish(
        mut self,
        start: Instant,
        limit: Duration,
        mut also: impl FnMut(&mut Usage),
    ) -> (Duration, Usage, u64) {
        let mut usage = Usage::default();
        let mut other = Usage::default();
        loop {
            usage.sample(self.pid);
            also(&mut other);
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let wall = start.elapsed();
        drop(self.writer);
        let bytes = self.drain.join().unwrap_or(0);
        (wall, usage.plus(other), bytes)
    }
}

/// The pid of tmux's server on `socket` (the daemon forked by the client), if it runs.
pub fn tmux_server_pid(socket: &str, client: u32) -> Option<u32> {
    for pid in all_pids() {
        if pid == client {
            continue;
        }
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        // The server renames itself ("tmux: server (/tmp/tmux-0/NAME)"); the client keeps `-L NAME`.
        let named = cmdline.windows(socket.len()).any(|w| w == socket.as_bytes());
        if cmdline.starts_with(b"tmux") && named {
            return Some(pid);
        }
    }
    None
}

/// Every process's pid.
pub fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The parent's pid of `pid`.
pub fn ppid(pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &s[s.rfind(')')? + 2..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Every descendant of `pid` (not `pid` itself).
pub fn descendants(pid: u32) -> Vec<u32> {
    let pairs: Vec<(u32, u32)> = all_pids()
        .into_iter()
        .filter_map(|p| Some((p, ppid(p)?)))
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(p, pp) in &pairs {
            if pp == parent {
                out.push(p);
                frontier.push(p);
            }
        }
    }
    out
}
