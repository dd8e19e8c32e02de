//! Soak of the pure supervisor: days of a busy pi on a fake clock (runs, tools with lost ends, stuck
//! tools, compactions and handoffs, wakeups, reconnects, new sessions, errors, failing-call loops,
//! sends that fail or are never answered), driven like the shell drives it (ticking at every
//! deadline). After every step its state must stay within bounds that do not grow with the session's
//! length: the ledger's and the send log's caps, the tools a model of the session says can still be
//! running, the wakeups it says can still be pending, and a few recovery budgets.

use std::collections::BTreeSet;

use pokeshell_core::supervisor::ledger::KEPT_RECORDS;
use pokeshell_core::supervisor::recovery::{KEPT_SESSIONS, KEPT_SIGNATURES};
use pokeshell_core::supervisor::{Action, Event, Now, StateSize, Supervisor, SupervisorConfig, texts};

#[path = "supervisor_soak/episodes.rs"]
mod episodes;

use episodes::Rng;

const DAY_MS: u64 = 24 * 3600 * 1000;
/// The supervisor remembers this many sends waiting for their answer (src/supervisor/delivery.rs).
const REMEMBERED_SENDS: usize = 64;

/// What the session can hold at most, kept beside the supervisor from the same events.
#[derive(Default)]
struct Model {
    /// Tools started and not ended since the supervisor last forgot them all.
    open_tools: BTreeSet<String>,
    /// Wakeups scheduled and neither cancelled nor fired (nor dropped with their session).
    wakeups: BTreeSet<String>,
}

struct Soak {
    sup: Supervisor,
    now: Now,
    rng: Rng,
    model: Model,
    config: SupervisorConfig,
    /// Sends whose answer comes later (or never).
    unanswered: Vec<u64>,
    /// A handoff's compaction waiting for its result.
    compact_pending: bool,
    counter: u64,
    sessions: u64,
    steps: u64,
    most: StateSize,
}

impl Soak {
    fn new(seed: u64) -> Self {
        let mut config = SupervisorConfig::default();
        config.poke.threshold_seconds = 30;
        config.poke.auto_abort = true;
        config.poke.auto_poke = true;
        config.recovery.max_retries = 2;
        config.handoff.enabled = true;
        config.handoff.percent = 80.0;
        let mut soak = Self {
            sup: Supervisor::new(config.clone()),
            now: Now::new(1_000_000, 1_700_000_000_000),
            rng: Rng(seed),
            model: Model::default(),
            config,
            unanswered: Vec::new(),
            compact_pending: false,
            counter: 0,
            sessions: 0,
            steps: 0,
            most: StateSize::default(),
        };
        soak.new_session();
        soak
    }

    fn id(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}-{}", self.counter)
    }

    /// Performs the actions as the shell would: answers most sends at once, some with an error, some
    /// later or never; remembers wakeups and handoff compactions.
    fn absorb(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::SendMessage { send_id, .. } => match self.rng.below(20) {
                    // Lost with a dying bridge: never answered.
                    0 => {}
                    1 | 2 => self.unanswered.push(send_id),
                    3 | 4 => self.answer(send_id, Some("the bridge refused it")),
                    _ => self.answer(send_id, None),
                },
                Action::Compact { .. } => self.compact_pending = true,
                Action::AppendEntry { custom_type, data } => self.note_entry(custom_type, &data),
                Action::ToolReply { .. }
                | Action::Abort
                | Action::Notify { .. }
                | Action::Log(_)
                | Action::AskModel { .. }
                | Action::Unresponsive { .. }
                | Action::Breaker(_)
                | Action::Daily(_) => {}
            }
        }
    }

    fn note_entry(&mut self, custom_type: &str, data: &serde_json::Value) {
        let id = data.get("id").and_then(|v| v.as_str()).map(str::to_string);
        match (custom_type, id) {
            (texts::ENTRY_WAKEUP_SCHEDULED, Some(id)) => {
                self.model.wakeups.insert(id);
            }
            (
                texts::ENTRY_WAKEUP_CANCELLED | texts::ENTRY_WAKEUP_FIRED | texts::ENTRY_WAKEUP_FAILED,
                Some(id),
            ) => {
                self.model.wakeups.remove(&id);
            }
            (texts::ENTRY_WAKEUP_CANCELLED, None) => self.model.wakeups.clear(),
            _ => {}
        }
    }

    fn answer(&mut self, send_id: u64, error: Option<&str>) {
        let event = Event::SendResult {
            send_id,
            error: error.map(str::to_string),
        };
        self.event(event);
    }

    fn event(&mut self, event: Event) {
        match &event {
            Event::ToolStart { id, .. } => {
                self.model.open_tools.insert(id.clone());
            }
            Event::ToolEnd { id, .. } => {
                self.model.open_tools.remove(id);
            }
            Event::BridgeConnected => self.model.open_tools.clear(),
            // The sessions here have no saved wakeups to restore.
            Event::SessionStart { .. } | Event::SessionShutdown => {
                self.model.open_tools.clear();
                self.model.wakeups.clear();
            }
            _ => {}
        }
        let actions = self.sup.handle(event, self.now);
        self.absorb(actions);
        self.check();
    }

    /// Lets `ms` pass the way the shell does: ticking at every deadline on the way.
    fn pass(&mut self, ms: u64) {
        let end = self.now.mono_ms + ms;
        while let Some(deadline) = self.sup.next_deadline() {
            if deadline > end {
                break;
            }
            if deadline > self.now.mono_ms {
                self.now = self.now.plus_ms(deadline - self.now.mono_ms);
            }
            let actions = self.sup.tick(self.now);
            let acted = !actions.is_empty();
            self.absorb(actions);
            self.check();
            assert!(
                acted || self.sup.next_deadline() != Some(deadline),
                "deadline {deadline} stays in the past without any effect: the shell would spin"
            );
        }
        self.now = self.now.plus_ms(end - self.now.mono_ms);
    }

    fn check(&mut self) {
        self.steps += 1;
        let size = self.sup.state_size();
        let most = &mut self.most;
        *most = StateSize {
            ledger: most.ledger.max(size.ledger),
            sends: most.sends.max(size.sends),
            tools: most.tools.max(size.tools),
            wakeups: most.wakeups.max(size.wakeups),
            recovery_sessions: most.recovery_sessions.max(size.recovery_sessions),
            loop_signatures: most.loop_signatures.max(size.loop_signatures),
        };
        let at = format!("after {} steps, day {:.2}", self.steps, self.day());
        assert!(size.ledger <= KEPT_RECORDS, "ledger {} {at}", size.ledger);
        assert!(size.sends <= REMEMBERED_SENDS, "send log {} {at}", size.sends);
        assert!(
            size.tools <= self.model.open_tools.len(),
            "{} tools kept, {} can still run {at}",
            size.tools,
            self.model.open_tools.len()
        );
        assert!(
            size.wakeups <= self.model.wakeups.len(),
            "{} wakeups kept, {} scheduled and not yet fired, cancelled or dropped {at}: {:?} vs {:?}",
            size.wakeups,
            self.model.wakeups.len(),
            self.sup
                .view(self.now)
                .wakeups
                .iter()
                .map(|w| (&w.id, w.held))
                .collect::<Vec<_>>(),
            self.model.wakeups
        );
        assert!(
            size.recovery_sessions <= KEPT_SESSIONS,
            "recovery budgets of {} sessions {at}",
            size.recovery_sessions
        );
        assert!(
            size.loop_signatures <= KEPT_SESSIONS * KEPT_SIGNATURES,
            "{} loop signatures {at}",
            size.loop_signatures
        );
    }

    fn day(&self) -> f64 {
        (self.now.mono_ms - 1_000_000) as f64 / DAY_MS as f64
    }

    fn new_session(&mut self) {
        self.sessions += 1;
        let session_id = format!("session-{}", self.sessions);
        self.event(Event::SessionStart {
            session_id,
            entries: Vec::new(),
        });
    }
}

fn soak(seed: u64, days: u64) -> Soak {
    let mut soak = Soak::new(seed);
    let end = soak.now.mono_ms + days * DAY_MS;
    while soak.now.mono_ms < end {
        soak.episode();
    }
    soak
}

#[test]
fn days_of_a_busy_session_keep_the_supervisor_state_bounded() {
    for seed in [1, 2, 3] {
        let soak = soak(seed, 7);
        // The run really went through everything that could grow.
        assert!(soak.steps > 20_000, "seed {seed}: only {} steps", soak.steps);
        assert!(soak.sessions > 20, "seed {seed}: only {} sessions", soak.sessions);
        let most = soak.most;
        assert_eq!(
            most.ledger, KEPT_RECORDS,
            "seed {seed}: the ledger filled up: {most:?}"
        );
        assert!(most.tools > 0 && most.wakeups > 0, "seed {seed}: {most:?}");
        assert_eq!(most.sends, REMEMBERED_SENDS, "seed {seed}: {most:?}");
        assert_eq!(most.recovery_sessions, KEPT_SESSIONS, "seed {seed}: {most:?}");
        assert!(most.loop_signatures >= KEPT_SIGNATURES, "seed {seed}: {most:?}");
        eprintln!(
            "seed {seed}: {} steps, {} sessions, most held: {most:?}",
            soak.steps, soak.sessions
        );
    }
}
