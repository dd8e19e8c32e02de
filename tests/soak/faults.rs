//! The soak's fault injector: at seeded random times it stalls a session's stream, answers 429 or
//! 529 with or without a reset time, freezes (SIGSTOP) or kills pi, kills the server (a `pokeshell
//! attach` brings it back), attaches and detaches terminals, and drops every bridge's socket
//! (SIGUSR1 to the server).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::support::procs::{children_of, process_alive};
use super::support::pty::Pty;
use super::tasks::{Pending, Shared};

/// SplitMix64, as the simulation's: a seed names the whole schedule.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        lo + (z ^ (z >> 31)) % (hi - lo).max(1)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Stall,
    RateLimit,
    RateLimitNoReset,
    Overloaded,
    OverloadedReset,
    Freeze,
    KillPi,
    KillServer,
    Terminal,
    DropBridges,
}

pub const KINDS: [Kind; 10] = [
    Kind::Stall,
    Kind::RateLimit,
    Kind::RateLimitNoReset,
    Kind::Overloaded,
    Kind::OverloadedReset,
    Kind::Freeze,
    Kind::KillPi,
    Kind::KillServer,
    Kind::Terminal,
    Kind::DropBridges,
];

/// One fault as injected: on which session, when.
pub struct Injected {
    pub kind: Kind,
    pub tag: String,
    pub at: Instant,
}

/// What the injector needs of the world.
pub struct World<'a> {
    pub board: &'a Shared,
    /// `(tag, its directory)` of every session.
    pub sessions: &'a [(String, PathBuf)],
    pub server_pid: &'a dyn Fn() -> Option<i32>,
    /// A terminal running `pokeshell attach NAME`.
    pub attach: &'a dyn Fn(&str) -> Pty,
}

/// pi of the session in `dir`: the server's child that runs there.
pub fn pi_of(server: i32, dir: &Path) -> Option<i32> {
    children_of(server as u32)
        .into_iter()
        .find(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir))
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: a signal to a process of this soak (pi or the server, found by their parent and cwd).
    unsafe { libc::kill(pid, sig) };
}

/// Injects one fault of `kind`; returns the session it hit, if it could.
pub fn inject(kind: Kind, rng: &mut Rng, w: &World, terminals: &mut Vec<(Pty, Instant)>) -> Option<String> {
    // A session still at work, when there is one: a fault on finished work tells nothing.
    let finished = w.board.lock().unwrap_or_else(|e| e.into_inner()).finished.clone();
    let working: Vec<&(String, PathBuf)> = w.sessions.iter().filter(|(t, _)| !finished.contains(t)).collect();
    let pool: Vec<&(String, PathBuf)> = if working.is_empty() {
        w.sessions.iter().collect()
    } else {
        working
    };
    let (tag, dir) = pool[rng.range(0, pool.len() as u64) as usize];
    let model = |p: Pending| {
        w.board
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pending
            .insert(tag.clone(), p);
    };
    match kind {
        Kind::Stall => model(Pending::Stall),
        Kind::RateLimit => model(Pending::Error {
            status: 429,
            reset_s: Some(rng.range(5, 40)),
            left: 4,
        }),
        Kind::RateLimitNoReset => model(Pending::Error {
            status: 429,
            reset_s: None,
            left: 4,
        }),
        Kind::Overloaded => model(Pending::Error {
            status: 529,
            reset_s: None,
            left: 1,
        }),
        Kind::OverloadedReset => model(Pending::Error {
            status: 529,
            reset_s: Some(rng.range(5, 40)),
            left: 1,
        }),
        Kind::Freeze => {
            let pi = pi_of((w.server_pid)()?, dir)?;
            signal(pi, libc::SIGSTOP);
            let thaw = Duration::from_secs(rng.range(3, 40));
            std::thread::spawn(move || {
                std::thread::sleep(thaw);
                if process_alive(pi) {
                    signal(pi, libc::SIGCONT);
                }
            });
        }
        Kind::KillPi => signal(pi_of((w.server_pid)()?, dir)?, libc::SIGKILL),
        Kind::KillServer => {
            signal((w.server_pid)()?, libc::SIGKILL);
            // `pokeshell attach` finds no server, starts one, which brings the saved sessions back.
            std::thread::sleep(Duration::from_millis(rng.range(200, 3_000)));
            let pty = (w.attach)(tag);
            terminals.push((pty, Instant::now() + Duration::from_secs(rng.range(2, 15))));
        }
        Kind::Terminal => {
            let pty = (w.attach)(tag);
            terminals.push((pty, Instant::now() + Duration::from_secs(rng.range(2, 30))));
        }
        Kind::DropBridges => signal((w.server_pid)()?, libc::SIGUSR1),
    }
    Some(tag.clone())
}

/// Terminals whose time is up leave: prefix+d, or the terminal closes under the client.
pub fn retire_terminals(terminals: &mut Vec<(Pty, Instant)>, rng: &mut Rng) {
    let now = Instant::now();
    let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(terminals)
        .into_iter()
        .partition(|(_, at)| *at <= now);
    *terminals = keep;
    for (mut pty, _) in due {
        if rng.range(0, 2) == 0 && pty.try_exit_code().is_none() {
            pty.send([0x1d, b'd']);
            let _ = pty.try_wait_exit(Duration::from_secs(10));
        }
        drop(pty);
    }
}
