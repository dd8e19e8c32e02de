//! A world for the real loop: a fake child, a fake bridge, a `TestScreen` shaped like the server's
//! screen, a ledger in a temp dir, and one channel of `WorldEvent`s, the way the server's session
//! thread wires the real ones: terminals attach as clients, and their keys, sizes and departures
//! come with their ids, as the server hands them over.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pokeshell::pi::bridge::server::BridgeEvent;
use pokeshell::pi::ledger::LedgerFile;
use pokeshell::server::event_loop::{
    Bridge, Child, ClientEvent, ClientLink, Clock, Layer, Loop, TestScreen, WorldEvent, lock,
};
use pokeshell::term::pty::{ChildExit, PtyEvent};
use pokeshell::term::screen::{HostCaps, Mirror};
use pokeshell_core::bridge::{Command, FromBridge, SendMessage, parse_from_bridge};
use pokeshell_core::config::{ConfigPaths, Settings};
use pokeshell_core::session::{Input, Session, SessionOptions};
use pokeshell_core::workspace::Workspace;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::Instant;

/// The host terminal: wide enough for the side pane.
pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;
/// The client attached from the start, which types when a test does not say which.
pub const CLIENT: u64 = 1;
/// The default prefix key, Ctrl+].
pub const PREFIX: &[u8] = b"\x1d";
/// The wall clock at the loop's start (any fixed value: nothing here reads the real one).
const WALL_START_MS: u64 = 1_700_000_000_000;

/// The child process: records what the loop does to it. With `echo` on, what it is sent shows on
/// its screen, as a shell in cooked mode would show it.
pub struct FakeChild {
    pub writes: Vec<Vec<u8>>,
    /// (rows, cols), in the order the loop asked.
    pub resizes: Vec<(u16, u16)>,
    pub signals: Vec<i32>,
    /// The arguments of every relaunch, in order.
    pub respawns: Vec<Vec<String>>,
    /// How many children the loop gave up on (killed, never reaped).
    pub abandoned: usize,
    pub echo: bool,
    mirror: Arc<Mutex<Mirror>>,
    output_pending: Arc<AtomicBool>,
    events: UnboundedSender<WorldEvent>,
}

impl FakeChild {
    /// Everything written to the child so far, in order.
    pub fn written(&self) -> Vec<u8> {
        self.writes.concat()
    }

    /// The child draws: its bytes are parsed into the mirror, then the loop is told, coalesced the way
    /// the PTY reader does it (one event until the loop takes the output).
    pub fn output(&self, bytes: &[u8]) {
        lock(&self.mirror).process(bytes);
        if !self.output_pending.swap(true, Ordering::AcqRel) {
            let _ = self.events.send(WorldEvent::Pty(PtyEvent::Output));
        }
    }
}

impl Child for FakeChild {
    fn write(&mut self, bytes: Vec<u8>) {
        if self.echo {
            self.output(&bytes);
        }
        self.writes.push(bytes);
    }

    fn resize(&mut self, rows: u16, cols: u16) -> anyhow::Result<()> {
        self.resizes.push((rows, cols));
        Ok(())
    }

    fn signal(&mut self, sig: i32) {
        self.signals.push(sig);
    }

    fn respawn(&mut self, args: Vec<String>) -> anyhow::Result<i32> {
        self.respawns.push(args);
        Ok(100 + self.respawns.len() as i32)
    }

    fn abandon(&mut self) {
        self.abandoned += 1;
    }
}

/// The bridge inside pi: records every command the loop hands it; with `refuse` set, every send fails
/// with that error, as a bridge whose socket is gone would.
#[derive(Default)]
pub struct FakeBridge {
    pub sent: Vec<(u64, Command)>,
    pub refuse: Option<String>,
    pub disconnects: Vec<String>,
}

impl FakeBridge {
    /// The `send_message` commands so far.
    pub fn messages(&self) -> Vec<(u64, SendMessage)> {
        self.sent
            .iter()
            .filter_map(|(id, c)| match c {
                Command::SendMessage(m) => Some((*id, m.clone())),
                _ => None,
            })
            .collect()
    }
}

impl Bridge for FakeBridge {
    fn send(&mut self, id: u64, command: Command) -> Result<(), String> {
        self.sent.push((id, command));
        match &self.refuse {
            Some(error) => Err(error.clone()),
            None => Ok(()),
        }
    }

    fn disconnect(&mut self, reason: &str) {
        self.disconnects.push(reason.to_string());
    }
}

/// Ticks at one instant past which the loop is taken to spin.
const SPIN_LIMIT: u32 = 1000;

/// Watches the loop from above, as the demo's director does: counts its ticks, and fails the test
/// when the loop spins (ticks while no time passes), which on the paused clock would hang it instead.
#[derive(Default)]
pub struct Watch {
    pub ticks: u64,
    last: Option<Instant>,
    at_last: u32,
}

impl Layer for Watch {
    fn observe(&mut self, input: &Input) {
        if !matches!(input, Input::Tick) {
            return;
        }
        self.ticks += 1;
        let now = Instant::now();
        if self.last == Some(now) {
            self.at_last += 1;
            assert!(
                self.at_last < SPIN_LIMIT,
                "the loop spins: {SPIN_LIMIT} ticks without time passing"
            );
        } else {
            self.last = Some(now);
            self.at_last = 0;
        }
    }
}

pub type TestLoop = Loop<TestScreen, FakeChild, FakeBridge, Watch>;

pub struct World {
    pub lp: TestLoop,
    rx: UnboundedReceiver<WorldEvent>,
    tx: UnboundedSender<WorldEvent>,
    /// Holds the settings dirs and the ledger; removed when the test ends.
    dir: tempfile::TempDir,
}

impl World {
    /// pi with its bridge, in a 120×40 host terminal that speaks the kitty keyboard protocol. Must be
    /// made inside the test's runtime: the loop's clock starts now.
    pub fn new() -> Self {
        Self::numbered(0)
    }

    /// Session `number` of a server (0: a session of its own, without the server's keys).
    pub fn numbered(number: u32) -> Self {
        let dir = tempfile::tempdir().expect("a temp dir");
        // Settings from an empty home and work dir: the defaults, nothing from this machine.
        let paths = ConfigPaths::resolve(Some(&dir.path().join("home")), None, &dir.path().join("work"))
            .expect("config paths");
        let settings = Settings::from_loaded(paths, Vec::new());
        let (tx, rx) = unbounded_channel();
        let start = Instant::now();
        let clock = Clock::new(start, WALL_START_MS);
        let ledger = LedgerFile::new(&dir.path().join("state"));
        let opts = SessionOptions {
            label: "pi".into(),
            bridge: Some(Ok(())),
            ledger_path: Some(ledger.path().to_path_buf()),
            host_kitty: true,
            child_args: vec!["-e".into(), "/b/bridge.ts".into(), "fix it".into()],
            spec: pokeshell_core::spec::SessionSpec {
                number,
                ..Default::default()
            },
        };
        let session = Session::new(opts, settings, COLS, ROWS, clock.now(start));
        let pane = session.pane();
        let caps = HostCaps {
            kitty: true,
            ..HostCaps::default()
        };
        let mirror = Arc::new(Mutex::new(Mirror::new(pane.height, pane.width, caps)));
        let output_pending = Arc::new(AtomicBool::new(false));
        let child = FakeChild {
            writes: Vec::new(),
            resizes: Vec::new(),
            signals: Vec::new(),
            respawns: Vec::new(),
            abandoned: 0,
            echo: false,
            mirror: mirror.clone(),
            output_pending: output_pending.clone(),
            events: tx.clone(),
        };
        let screen = TestScreen::new(COLS, ROWS).expect("a test screen");
        let lp = Loop::new(
            Workspace::new(session),
            screen,
            child,
            FakeBridge::default(),
            Watch::default(),
            mirror,
            output_pending,
            ledger,
            clock,
            tx.clone(),
        );
        let w = Self { lp, rx, tx, dir };
        w.attach(CLIENT, COLS, ROWS);
        w
    }

    /// A terminal of `cols`×`rows` attaches as client `id`, as the server attaches one (its probe's
    /// answers follow later, or never).
    pub fn attach(&self, id: u64, cols: u16, rows: u16) {
        let (tx, _) = unbounded_channel();
        let link = ClientLink {
            tx,
            cols,
            rows,
            queued: Default::default(),
            watch: false,
        };
        self.send(WorldEvent::Client(ClientEvent::Attach { id, link, caps: None }));
    }

    /// Client `id`'s terminal now has this size.
    pub fn resize(&self, id: u64, cols: u16, rows: u16) {
        self.send(WorldEvent::Client(ClientEvent::Resize { id, cols, rows }));
    }

    pub fn send(&self, ev: WorldEvent) {
        self.tx.send(ev).expect("the loop's channel is open");
    }

    /// The user types (or pastes) these bytes in [`CLIENT`]'s terminal.
    pub fn stdin(&self, bytes: &[u8]) {
        self.keys(CLIENT, bytes);
    }

    /// The user types these bytes in `client`'s terminal, as the server hands them to the session.
    pub fn keys(&self, client: u64, bytes: &[u8]) {
        self.send(WorldEvent::Client(ClientEvent::Input {
            id: client,
            bytes: bytes.to_vec(),
            ticket: Default::default(),
        }));
    }

    /// `client`'s terminal leaves the session.
    pub fn leave(&self, client: u64) {
        self.send(WorldEvent::Client(ClientEvent::Detach { id: client }));
    }

    /// A line as the bridge writes it on the socket (docs/protocol.md), as the server reports it.
    pub fn wire(&self, line: Value) {
        let text = line.to_string();
        let ev = match parse_from_bridge(text.as_bytes()).expect("a line as the bridge writes it") {
            FromBridge::Hello(hello) => BridgeEvent::Connected { conn: 1, hello },
            FromBridge::Event { seq, at, event } => BridgeEvent::Event {
                conn: 1,
                seq,
                at,
                event,
            },
            FromBridge::Reply(_) => panic!("a reply names its command: use World::reply"),
            FromBridge::Heartbeat(heartbeat) => BridgeEvent::Heartbeat {
                conn: 1,
                heartbeat,
                missed: 0,
            },
        };
        self.send(WorldEvent::Bridge(ev));
    }

    /// pi's bridge says hello.
    pub fn connect(&self) {
        self.wire(
            json!({"type": "hello", "protocol": 1, "token": "t", "piVersion": "1.6.0", "pid": 9,
            "instance": "u", "reconnect": false, "dropped": 0, "sessionId": "s1", "sessionFile": null,
            "sessionName": null, "model": "mock/mock-model", "mode": "tui", "cwd": "/w"}),
        );
    }

    /// The bridge answers the command sent under `id`, as the server reports the answer.
    pub fn reply(&self, id: u64, result: Result<Value, String>) {
        let command = self
            .lp
            .bridge
            .sent
            .iter()
            .find(|(sent, _)| *sent == id)
            .map(|(_, c)| c.name())
            .expect("a reply to a command that was sent");
        self.send(WorldEvent::Bridge(BridgeEvent::Reply { id, command, result }));
    }

    /// Runs the real loop for `d` of (paused) time; `Some` with the exit when it ended by itself.
    pub async fn run_for(&mut self, d: Duration) -> Option<ChildExit> {
        match tokio::time::timeout(d, self.lp.run(&mut self.rx)).await {
            Ok(result) => Some(result.expect("the loop runs without error")),
            Err(_) => None,
        }
    }

    /// Lets the loop take everything sent so far and draw: a few frames' worth of time.
    pub async fn settle(&mut self) {
        self.run_for_ms(100).await;
    }

    pub async fn run_secs(&mut self, secs: u64) {
        self.run_for_ms(secs * 1000).await;
    }

    pub async fn run_for_ms(&mut self, ms: u64) {
        let exit = self.run_for(Duration::from_millis(ms)).await;
        assert_eq!(exit, None, "the loop ended");
    }

    /// The last frame [`CLIENT`] sees, one string per row.
    pub fn rows(&self) -> Vec<String> {
        self.rows_of(CLIENT)
    }

    /// The last frame `client` sees: its own while it has an overlay or an armed prefix, else the
    /// one every other client sees.
    pub fn rows_of(&self, client: u64) -> Vec<String> {
        let terminal = self
            .lp
            .screen
            .own
            .get(&client)
            .unwrap_or(&self.lp.screen.terminal);
        let buffer = terminal.backend().buffer();
        let area = buffer.area;
        (0..area.height)
            .map(|y| (0..area.width).map(|x| buffer[(x, y)].symbol()).collect())
            .collect()
    }

    pub fn screen_text(&self) -> String {
        self.rows().join("\n")
    }

    pub fn footer(&self) -> String {
        self.rows().pop().unwrap_or_default()
    }

    /// The intervention ledger as written to disk, one JSON value per record.
    pub fn ledger(&self) -> Vec<Value> {
        let path = self.dir.path().join("state").join("interventions.jsonl");
        let Ok(text) = std::fs::read_to_string(path) else {
            return Vec::new();
        };
        text.lines()
            .map(|l| serde_json::from_str(l).expect("a ledger line is JSON"))
            .collect()
    }

    /// Ledger records of this rule and kind.
    pub fn records(&self, rule: &str, kind: &str) -> Vec<String> {
        self.ledger()
            .into_iter()
            .filter(|r| r["rule"] == rule && r["kind"] == kind)
            .map(|r| r["reason"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// An event line from the bridge; `at` is pi's wall clock.
pub fn event(seq: u64, event: Value) -> Value {
    json!({"type": "event", "seq": seq, "at": WALL_START_MS + seq, "event": event})
}
