//! The simulated world: one server's state core (or none, between a crash and the next `pokeshell
//! attach`), its sessions, each with the model of its pi, the terminals, the disk (the saved list
//! and pi's session files) and the clock. Events wait in one queue ordered by time; a session's
//! deadline ticks it. Whatever a core asks for is done here, as the binary would do it, and each
//! hand-over passes the checker (`check.rs`).

mod acts;
mod server;
mod session;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use pokeshell_core::server::saved_session::SavedSession;
use pokeshell_core::server::state::ServerState;
use pokeshell_core::session::{Input, Session};
use pokeshell_core::supervisor::Now;

use super::check::{Check, SessionCheck};
use super::conv::Conv;
use super::history::Step;
use super::pi::{Faults, Pi, Timer};
use super::rng::Rng;

pub const WALL0: u64 = 1_800_000_000_000;

pub fn at(ms: u64) -> Now {
    Now::new(ms, WALL0 + ms)
}

#[derive(Debug, Clone)]
pub enum Ev {
    Step(usize),
    Pi {
        era: u64,
        number: u32,
        pid: i32,
        timer: Timer,
    },
    Thaw {
        era: u64,
        number: u32,
        pid: i32,
    },
    KillDue {
        era: u64,
        number: u32,
        pid: i32,
    },
    Saved {
        era: u64,
        seq: u64,
        list: Vec<SavedSession>,
    },
    ClientGone {
        era: u64,
        id: u64,
    },
    /// A bridge command reaches pi (a moment after the session sent it).
    Command {
        era: u64,
        number: u32,
        id: u64,
        command: pokeshell_core::bridge::Command,
    },
    /// The settings files, read for a session.
    SettingsLoaded {
        era: u64,
        number: u32,
    },
    /// Keys reach pi's terminal.
    Keys {
        era: u64,
        number: u32,
        bytes: Vec<u8>,
    },
    ServerBack,
}

/// One session's thread as the binary runs it: the session, its pi, and its loop's relaunch state.
pub struct Sim {
    pub session: Session,
    pub pi: Pi,
    pub respawn: Option<Vec<String>>,
    pub shutting_down: bool,
    pub killed: bool,
    pub report: Option<pokeshell_core::server::state::Report>,
    pub check: SessionCheck,
    /// pi has said hello on this session's bridge since it last started.
    pub heard: bool,
    /// When the session next wants a tick, as it said after its last input.
    pub deadline: Option<u64>,
}

pub struct Server {
    pub state: ServerState,
    pub sims: BTreeMap<u32, Sim>,
    pub save_asked: u64,
    pub save_done: u64,
    /// Saved sessions the server was told to bring back and has not started yet.
    pub to_restore: BTreeSet<u32>,
    /// SIGTERM came: the list saved then stands.
    pub stopping: bool,
}

pub struct Client {
    pub following: Option<u32>,
}

pub struct World {
    pub now: u64,
    pub steps: Vec<Step>,
    rng: Rng,
    queue: BinaryHeap<Reverse<(u64, u64)>>,
    events: BTreeMap<u64, Ev>,
    seq: u64,
    pub server: Option<Server>,
    pub era: u64,
    pub disk: Option<Vec<SavedSession>>,
    pub files: BTreeMap<String, Conv>,
    pub faults: BTreeMap<u32, Faults>,
    pub clients: BTreeMap<u64, Client>,
    next_client: u64,
    next_pid: i32,
    next_file: u64,
    conn: u64,
    saver_free_at: u64,
    pub next_prompt: u64,
    pub check: Check,
    pub trace: Vec<String>,
    /// Counts of what the history did, for the report.
    pub stats: BTreeMap<&'static str, u64>,
}

impl World {
    pub fn new(seed: u64, steps: Vec<Step>) -> Self {
        let mut w = Self {
            now: 0,
            steps,
            rng: Rng::new(seed ^ 0x5eed),
            queue: BinaryHeap::new(),
            events: BTreeMap::new(),
            seq: 0,
            server: None,
            era: 0,
            disk: None,
            files: BTreeMap::new(),
            faults: BTreeMap::new(),
            clients: BTreeMap::new(),
            next_client: 1,
            next_pid: 100,
            next_file: 1,
            conn: 0,
            saver_free_at: 0,
            next_prompt: 1,
            check: Check::default(),
            trace: Vec::new(),
            stats: BTreeMap::new(),
        };
        for i in 0..w.steps.len() {
            let at_ms = w.steps[i].at_ms;
            w.schedule(at_ms, Ev::Step(i));
        }
        w
    }

    pub fn schedule(&mut self, at_ms: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse((at_ms, self.seq)));
        self.events.insert(self.seq, ev);
    }

    pub fn note(&mut self, line: String) {
        if self.trace.len() >= 400 {
            self.trace.drain(..100);
        }
        self.trace
            .push(format!("{:>9.1}s {line}", self.now as f64 / 1000.0));
    }

    pub fn count(&mut self, what: &'static str) {
        *self.stats.entry(what).or_default() += 1;
    }

    /// Runs until `until_ms` or until the checker found something.
    pub fn run(&mut self, until_ms: u64) {
        while self.check.failure.is_none() {
            let next_ev = self.queue.peek().map(|Reverse((t, _))| *t);
            let next_tick = self.next_tick();
            let (t, tick) = match (next_ev, next_tick) {
                (Some(e), Some((d, n))) if d < e => (d, Some(n)),
                (None, Some((d, n))) => (d, Some(n)),
                (Some(e), _) => (e, None),
                (None, None) => break,
            };
            if t > until_ms {
                break;
            }
            self.now = self.now.max(t);
            match tick {
                Some(number) => {
                    self.count("session ticks");
                    self.tick(number)
                }
                None => {
                    let Some(Reverse((_, seq))) = self.queue.pop() else {
                        break;
                    };
                    if let Some(ev) = self.events.remove(&seq) {
                        self.count("events");
                        self.event(ev);
                    }
                }
            }
            self.check_quiet_point();
        }
        self.now = self.now.max(until_ms);
    }

    fn next_tick(&self) -> Option<(u64, u32)> {
        let server = self.server.as_ref()?;
        server
            .sims
            .iter()
            .filter_map(|(n, s)| s.deadline.map(|d| (d.max(self.now), *n)))
            .min()
    }

    fn tick(&mut self, number: u32) {
        for round in 0..4 {
            self.session_hears(number, Input::Tick);
            let Some(sim) = self.server.as_ref().and_then(|s| s.sims.get(&number)) else {
                return;
            };
            match sim.deadline {
                Some(d) if d <= self.now => {
                    if round == 3 {
                        self.check.fail(format!(
                            "session {number}: a deadline stays in the past after ticking (spinning)"
                        ));
                    }
                }
                _ => return,
            }
        }
    }

    fn event(&mut self, ev: Ev) {
        match ev {
            Ev::Step(i) => {
                let act = self.steps[i].act.clone();
                self.note(format!("step {i}: {act:?}"));
                self.act(act);
            }
            Ev::Pi {
                era,
                number,
                pid,
                timer,
            } if era == self.era => {
                self.with_pi(number, pid, |pi, now, conn, conv, faults| {
                    pi.timer(timer, now, conn, conv, faults)
                });
            }
            Ev::Thaw { era, number, pid } if era == self.era => {
                self.with_pi(number, pid, |pi, now, conn, conv, faults| {
                    pi.thaw(now, conn, conv, faults)
                });
            }
            Ev::KillDue { era, number, pid } if era == self.era => {
                self.with_pi(number, pid, |pi, now, _, _, _| pi.signal(9, now));
            }
            Ev::Saved { era, seq, list } if era == self.era => {
                self.disk = Some(list);
                if let Some(s) = &mut self.server {
                    s.save_done = s.save_done.max(seq);
                }
                self.server_hears(pokeshell_core::server::state::ServerEvent::Saved { seq });
            }
            Ev::ClientGone { era, id } if era == self.era && self.clients.remove(&id).is_some() => {
                self.server_hears(pokeshell_core::server::state::ServerEvent::Gone { id });
            }
            Ev::Command {
                era,
                number,
                id,
                command,
            } if era == self.era => self.deliver_command(number, id, command),
            Ev::Keys { era, number, bytes } if era == self.era => {
                let Some(pid) = self.sim(number).map(|s| s.pi.pid) else {
                    return;
                };
                self.with_pi(number, pid, |pi, now, _, conv, faults| {
                    pi.keys(&bytes, now, conv, faults)
                });
            }
            Ev::SettingsLoaded { era, number } if era == self.era => {
                self.session_hears(number, pokeshell_core::session::Input::SettingsLoaded(Vec::new()));
            }
            Ev::ServerBack if self.server.is_none() => {
                self.count("server brought back by attach");
                self.open_client(pokeshell_core::wire::Target::Attach { name: None });
            }
            _ => {}
        }
    }

    /// Runs `f` on session `number`'s pi if it is still pid `pid`, then delivers what pi did.
    pub fn with_pi(
        &mut self,
        number: u32,
        pid: i32,
        f: impl FnOnce(&mut Pi, u64, &mut u64, &mut Conv, &mut Faults) -> Vec<super::pi::Out>,
    ) {
        let now = self.now;
        let Some(sim) = self.server.as_mut().and_then(|s| s.sims.get_mut(&number)) else {
            return;
        };
        if sim.pi.pid != pid {
            return;
        }
        let conv = self.files.entry(sim.pi.file.clone()).or_default();
        let faults = self.faults.entry(number).or_default();
        let out = f(&mut sim.pi, now, &mut self.conn, conv, faults);
        self.pi_out(number, pid, out);
    }

    pub fn new_pid(&mut self) -> i32 {
        self.next_pid += 1;
        self.next_pid
    }

    pub fn new_file(&mut self, dir: &str) -> String {
        self.next_file += 1;
        format!("{dir}/.pi/{}.jsonl", self.next_file)
    }

    pub fn random(&mut self, lo: u64, hi: u64) -> u64 {
        self.rng.range(lo, hi)
    }
}
