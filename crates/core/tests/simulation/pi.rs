//! A small model of pi and its scripted model: what pi does with the keys it reads, the commands its
//! bridge carries out, its runs, turns, tools, retries and compactions, its heartbeat, and what a
//! signal does to it. It answers pokeshell's effects the way pi 1.6.0 does (docs/pi-facts.md), so
//! histories stay realistic: a message sent becomes a turn, an abort ends the run, a killed pi says
//! nothing more. Each method returns what pi did ([`Out`]); the world delivers it.

use pokeshell_core::bridge::{
    BridgeEvent, Command, CompactReason, ContextUsage, Heartbeat, Hello, MessageEnd, PiEvent, Progress,
    ProgressKind, SessionReason, SessionStart, ToolExecutionStart,
};
use serde_json::json;

use super::conv::{Conv, Reply, assistant};
use super::history::{Compaction, Ending, Task};
use super::rng::Rng;

/// What the world has in store for one session's model requests (kept by session number: it
/// outlives pi's relaunches and the server's).
#[derive(Clone, Debug, Default)]
pub struct Faults {
    pub stall_next: bool,
    /// The provider answers `status` until `until_ms`, naming a reset or not.
    pub outage: Option<(u16, Option<u64>, u64)>,
    pub compact_next: Option<Compaction>,
    pub wakeup_next: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    Boot,
    Heartbeat,
    Progress(u64),
    Reply(u64),
    ToolDone(u64),
    Retry(u64),
    CompactDone(u64),
    Reconnect,
}

// Most of what pi does is a bridge event: boxing the common case buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Out {
    Bridge(BridgeEvent),
    After(u64, Timer),
    Exit {
        code: i32,
        signal: Option<i32>,
    },
    /// A prompt the user typed went into the conversation.
    Delivered(u64),
    /// The run the user's Esc stopped settled.
    UserStopped,
    /// pi died before it read this prompt.
    Lost(u64),
}

#[derive(Debug, PartialEq)]
enum Phase {
    Streaming,
    Tool(String),
    ToolReply(String),
    Retrying,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Then {
    NextTurn,
    FailTurn,
    Settle,
    Idle,
}

#[derive(Debug)]
struct Compacting {
    reason: CompactReason,
    will_retry: bool,
    handoff: bool,
    then: Then,
    reply: Option<u64>,
}

#[derive(Debug)]
enum Queued {
    User(u64, Task),
    Custom(String, bool),
}

pub struct Pi {
    pub pid: i32,
    pub file: String,
    pub alive: bool,
    pub frozen: bool,
    up: bool,
    args_prompts: Vec<(u64, Task)>,
    conn: Option<u64>,
    outbox: Vec<PiEvent>,
    seq: u64,
    pty: Vec<u8>,
    editor: Vec<u8>,
    run: Option<(Phase, u8)>,
    compaction: Option<Compacting>,
    queue: Vec<Queued>,
    epoch: u64,
    fail_next: bool,
    held: Vec<Timer>,
    held_commands: Vec<(u64, Command)>,
    rng: Rng,
    now: u64,
    run_since: u64,
    out: Vec<Out>,
}

/// The prompt a user types for task `id`, and back.
pub fn prompt_text(id: u64, task: Task) -> String {
    let ending = match task.ending {
        Ending::Done => 'd',
        Ending::Promise => 'p',
        Ending::Empty => 'e',
    };
    format!("task{id}.{}{ending}", task.turns)
}

pub fn parse_prompt(text: &str) -> Option<(u64, Task)> {
    let rest = text.strip_prefix("task")?;
    let (id, spec) = rest.split_once('.')?;
    let ending = match spec.chars().last()? {
        'p' => Ending::Promise,
        'e' => Ending::Empty,
        _ => Ending::Done,
    };
    let turns = spec[..spec.len() - 1].parse().ok()?;
    Some((id.parse().ok()?, Task { turns, ending }))
}

impl Pi {
    /// pi starts with `args` (pi's own, the bridge's included) on session file `file`.
    pub fn spawn(pid: i32, args: &[String], file: String, seed: u64) -> (Self, Vec<Out>) {
        let args_prompts = args.iter().filter_map(|a| parse_prompt(a)).collect();
        let mut pi = Self {
            pid,
            file,
            alive: true,
            frozen: false,
            up: false,
            args_prompts,
            conn: None,
            outbox: Vec::new(),
            seq: 0,
            pty: Vec::new(),
            editor: Vec::new(),
            run: None,
            compaction: None,
            queue: Vec::new(),
            epoch: 0,
            fail_next: false,
            held: Vec::new(),
            held_commands: Vec::new(),
            rng: Rng::new(seed),
            now: 0,
            run_since: 0,
            out: Vec::new(),
        };
        let boot = pi.rng.range(300, 2_500);
        pi.out.push(Out::After(boot, Timer::Boot));
        let out = std::mem::take(&mut pi.out);
        (pi, out)
    }

    /// pi shows its editor and reads it: a person would type a prompt now.
    pub fn editable(&self) -> bool {
        self.alive && self.up && !self.frozen && self.run.is_none() && self.compaction.is_none()
    }

    /// Since when a run is under way.
    pub fn run_since(&self) -> Option<u64> {
        self.run.as_ref().map(|_| self.run_since)
    }

    /// The bridge's socket is open (pi may be stopped: the kernel keeps what is sent).
    pub fn socket_open(&self) -> bool {
        self.conn.is_some() && self.alive
    }

    pub fn connected(&self) -> bool {
        self.conn.is_some() && self.alive && !self.frozen
    }

    fn emit(&mut self, event: PiEvent) {
        match self.conn {
            Some(conn) => {
                self.seq += 1;
                self.out.push(Out::Bridge(BridgeEvent::Event {
                    conn,
                    seq: self.seq,
                    at: self.now,
                    event,
                }));
            }
            None if self.outbox.len() < 1024 => self.outbox.push(event),
            None => {}
        }
    }

    fn after(&mut self, ms: u64, timer: Timer) {
        self.out.push(Out::After(ms, timer));
    }

    fn done(&mut self) -> Vec<Out> {
        std::mem::take(&mut self.out)
    }

    fn connect(&mut self, conn: u64, reconnect: bool, conv: &Conv) {
        self.conn = Some(conn);
        let hello = Hello {
            protocol: pokeshell_core::bridge::PROTOCOL_VERSION,
            token: "t".into(),
            pi_version: Some("1.6.0".into()),
            pid: self.pid as u32,
            instance: format!("i{}", self.pid),
            reconnect,
            dropped: 0,
            session_id: Some(self.file.clone()),
            session_file: Some(self.file.clone()),
            session_name: None,
            mode: Some("tui".into()),
            model: Some("sim/model".into()),
            cwd: None,
        };
        self.out.push(Out::Bridge(BridgeEvent::Connected { conn, hello }));
        if !reconnect {
            self.emit(PiEvent::SessionStart(SessionStart {
                reason: SessionReason::Startup,
                previous_session_file: None,
                session_id: Some(self.file.clone()),
                session_file: Some(self.file.clone()),
                session_name: None,
                model: None,
                custom_entries: conv.entries.clone(),
            }));
        }
        for event in std::mem::take(&mut self.outbox) {
            self.emit(event);
        }
    }

    /// A timer pi set went off.
    pub fn timer(
        &mut self,
        timer: Timer,
        now: u64,
        conn: &mut u64,
        conv: &mut Conv,
        faults: &mut Faults,
    ) -> Vec<Out> {
        self.now = now;
        if !self.alive {
            return Vec::new();
        }
        if self.frozen {
            self.held.push(timer);
            return Vec::new();
        }
        match timer {
            Timer::Boot => {
                self.up = true;
                *conn += 1;
                self.connect(*conn, false, conv);
                self.after(5_000, Timer::Heartbeat);
                for (id, task) in std::mem::take(&mut self.args_prompts) {
                    self.submit(id, task, conv, faults);
                }
                let typed = std::mem::take(&mut self.pty);
                self.read_keys(&typed, conv, faults);
            }
            Timer::Heartbeat => {
                if let Some(conn) = self.conn {
                    self.seq += 1;
                    let running_tools = match &self.run {
                        Some((Phase::Tool(id) | Phase::ToolReply(id), _)) => vec![id.clone()],
                        _ => Vec::new(),
                    };
                    let heartbeat = Heartbeat {
                        seq: self.seq,
                        at: now,
                        idle: Some(self.run.is_none() && self.compaction.is_none()),
                        pending_messages: Some(!self.queue.is_empty()),
                        running_tools,
                    };
                    self.out.push(Out::Bridge(BridgeEvent::Heartbeat {
                        conn,
                        heartbeat,
                        missed: 0,
                    }));
                }
                self.after(5_000, Timer::Heartbeat);
            }
            Timer::Reconnect => {
                *conn += 1;
                self.connect(*conn, true, conv);
                let idle = self.run.is_none() && self.compaction.is_none();
                self.emit(PiEvent::Snapshot(pokeshell_core::bridge::Snapshot {
                    idle: Some(idle),
                    pending_messages: Some(!self.queue.is_empty()),
                    context_usage: None,
                    session_id: None,
                    model: None,
                }));
            }
            Timer::Progress(e) if e == self.epoch => {
                if matches!(self.run, Some((Phase::Streaming, _))) {
                    self.emit(PiEvent::Progress(Progress {
                        kind: ProgressKind::Text,
                    }));
                }
            }
            Timer::Reply(e) if e == self.epoch => self.reply(conv, faults),
            Timer::ToolDone(e) if e == self.epoch => {
                if let Some((Phase::Tool(id), _)) = &self.run {
                    let id = id.clone();
                    self.tool_end(id, "bash", false, conv);
                    conv.work.remaining = conv.work.remaining.saturating_sub(1);
                    self.turn_over(conv, faults);
                }
            }
            Timer::Retry(e) if e == self.epoch => {
                self.emit(PiEvent::AgentStart);
                self.start_turn(conv, faults);
            }
            Timer::CompactDone(e) if e == self.epoch => self.compaction_done(conv, faults),
            _ => {}
        }
        self.done()
    }
}

mod run;
mod signals;

pub use run::answer;

fn tool_start(id: &str, name: &str) -> PiEvent {
    PiEvent::ToolExecutionStart(ToolExecutionStart {
        tool_call_id: id.to_string(),
        tool_name: name.to_string(),
        args: json!({ "command": format!("step {id}") }),
    })
}

fn message_end(reply: &Reply) -> PiEvent {
    PiEvent::MessageEnd(MessageEnd {
        message: assistant(reply),
        usage: None,
        text: None,
    })
}

fn usage(conv: &Conv) -> Option<ContextUsage> {
    Some(ContextUsage {
        tokens: conv.percent.map(|p| (p * 1000.0) as u64),
        context_window: Some(100_000),
        percent: conv.percent,
    })
}
