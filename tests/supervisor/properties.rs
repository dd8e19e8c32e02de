//! Invariants over random event sequences, counting every message pokeshell sends to the model
//! (resume, orphan, retry, nudge, in-run nudge, wakeup, manual; the handoff compacts and sends none):
//! at most one of pokeshell's own per settle, or per turn inside a run (ARB-ONE; a manual poke the user
//! asked for may add one, never two); none after an aborted settle until the user acts again, and no
//! nudge at a turn the user's Esc is unwinding (ARB-ABORT, WAK-ESC); none while a compaction runs; no
//! counter moved by a rule that lost the settle (ARB-LOSE); counters within their bounds; nothing
//! automatic while supervision is off; every forwarded tool call answered once; no deadline that spins
//! the shell.

use pokeshell_core::supervisor::view::Counters;
use pokeshell_core::supervisor::{
    Action, CompactReason, Event, LedgerKind, Message, Now, Supervisor, SupervisorConfig, texts,
};
use proptest::prelude::*;

use super::random_events::{Step, config, step};

fn is_manual(text: &str) -> bool {
    text == texts::manual_poke()
}

/// The last visible message is a tool result the user's Esc cut short.
fn esc_unwinding(tail: &[Message]) -> bool {
    tail.iter()
        .rev()
        .find(|message| !message.is_custom())
        .is_some_and(Message::is_aborted_tool_result)
}

/// Minutes after which the supervisor stops waiting for a compaction's end.
const COMPACTION_HOLD_MS: u64 = 10 * 60 * 1000;

struct Checker {
    sup: Supervisor,
    config: SupervisorConfig,
    now: Now,
    /// Messages of pokeshell's own (everything but the manual poke) since the last settle or turn end.
    own_in_window: usize,
    /// The user asked for a poke that has not gone out yet.
    manual_pending: bool,
    stopped: bool,
    /// pokeshell aborted a silent run (STALL-S1, STALL-R1): the next aborted settle is its own, and
    /// resumes the run.
    stall_abort: bool,
    /// Compaction as the events say: since when it runs (None: not running), and a handoff in flight.
    compacting_since: Option<u64>,
    handoff: bool,
    next_send_failed: bool,
}

impl Checker {
    fn compacting(&self) -> bool {
        self.compacting_since
            .is_some_and(|since| self.now.mono_ms < since + COMPACTION_HOLD_MS)
    }

    fn apply(&mut self, actions: Vec<Action>, cause: Option<&Event>) -> Result<(), TestCaseError> {
        for action in &actions {
            if let Action::SendMessage {
                custom_type, text, ..
            } = action
            {
                prop_assert!(!self.compacting(), "sent while a compaction runs: {action:?}");
                if is_manual(text) {
                    prop_assert!(self.manual_pending, "a manual poke nobody asked for: {action:?}");
                    self.manual_pending = false;
                } else {
                    self.own_in_window += 1;
                    prop_assert!(
                        self.own_in_window <= 1,
                        "two messages of pokeshell's own within one settle or turn: {action:?}"
                    );
                    prop_assert!(
                        !self.stopped,
                        "a message of pokeshell's own after Esc: {action:?}"
                    );
                    if let Some(Event::TurnEnd { tail }) = cause {
                        prop_assert!(
                            !(esc_unwinding(tail) && *custom_type == texts::CT_LOOP),
                            "a loop nudge while Esc unwinds the run"
                        );
                    }
                }
            }
            if let Action::Log(record) = action
                && matches!(record.rule, "STALL-S1" | "STALL-R1")
                && record.kind == LedgerKind::Action
            {
                self.stall_abort = true;
            }
            if let Action::Compact { .. } = action {
                self.compacting_since = Some(self.now.mono_ms);
                self.handoff = true;
            }
            if !self.config.poke.enabled {
                match action {
                    Action::SendMessage { text, .. } => {
                        prop_assert!(is_manual(text), "sent while off: {text}")
                    }
                    Action::Abort => prop_assert!(false, "aborted while off"),
                    Action::Compact { .. } => {
                        prop_assert!(
                            matches!(cause, Some(Event::ManualHandoff { .. })),
                            "compacted while off"
                        )
                    }
                    _ => {}
                }
            }
        }
        if let Some(Event::ToolCallRequest { call_id, .. }) = cause {
            let replies = actions
                .iter()
                .filter(|action| matches!(action, Action::ToolReply { call_id: id, .. } if id == call_id))
                .count();
            prop_assert_eq!(replies, 1, "each tool call gets exactly one reply");
        }
        let counters = self.sup.view(self.now).counters;
        prop_assert!(counters.pokes <= counters.max_pokes, "{counters:?}");
        prop_assert!(counters.retries <= counters.max_retries, "{counters:?}");
        // Answer the sends like the bridge, sometimes with a refusal.
        for action in actions {
            if let Action::SendMessage { send_id, .. } = action {
                let error = self.next_send_failed.then(|| "refused".to_string());
                self.next_send_failed = !self.next_send_failed && send_id % 3 == 0;
                let reply = self.sup.handle(Event::SendResult { send_id, error }, self.now);
                self.apply(reply, None)?;
            }
        }
        Ok(())
    }

    /// ARB-LOSE: a rule that records it was pre-empted leaves its counters (and the user) alone.
    fn check_losers(&self, actions: &[Action], before: &Counters) -> Result<(), TestCaseError> {
        let after = self.sup.view(self.now).counters;
        for action in actions {
            let Action::Log(record) = action else { continue };
            if record.kind != LedgerKind::Declined || !record.reason.contains("pre-empted by") {
                continue;
            }
            match record.rule {
                "SAR-S8" | "SAR-S7" => {
                    prop_assert_eq!(after.retries, before.retries, "the retry lost: {:?}", record);
                    let give_up = texts::notify_retry_give_up(self.config.recovery.max_retries);
                    prop_assert!(
                        !actions
                            .iter()
                            .any(|a| matches!(a, Action::Notify { text, .. } if *text == give_up)),
                        "a losing retry gave up"
                    );
                }
                "POKE-W4" => {
                    prop_assert_eq!(after.pokes, before.pokes, "the wake lost: {:?}", record);
                    let give_up = texts::notify_poke_limit(self.config.poke.post_compact_max_pokes);
                    prop_assert!(
                        !actions
                            .iter()
                            .any(|a| matches!(a, Action::Notify { text, .. } if *text == give_up)),
                        "a losing wake gave up"
                    );
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn tick(&mut self) -> Result<(), TestCaseError> {
        let actions = self.sup.tick(self.now);
        self.apply(actions, None)?;
        // A deadline left in the past must be acted on by the next few ticks, or the shell would spin.
        for _ in 0..5 {
            match self.sup.next_deadline() {
                Some(deadline) if deadline <= self.now.mono_ms => {
                    let actions = self.sup.tick(self.now);
                    prop_assert!(!actions.is_empty(), "a due deadline produced nothing");
                    self.apply(actions, None)?;
                }
                _ => return Ok(()),
            }
        }
        prop_assert!(
            self.sup
                .next_deadline()
                .is_none_or(|deadline| deadline > self.now.mono_ms),
            "spinning deadline"
        );
        Ok(())
    }

    /// What the event tells the checker, before the supervisor sees it.
    fn observe(&mut self, event: &Event) {
        match event {
            Event::AgentSettled { aborted, tail, .. } => {
                self.own_in_window = 0;
                let tail_aborted = tail
                    .iter()
                    .rev()
                    .find(|message| !message.is_custom())
                    .is_some_and(Message::is_aborted_assistant);
                let own_abort = std::mem::take(&mut self.stall_abort);
                if (*aborted || tail_aborted) && self.config.poke.enabled && !own_abort {
                    self.stopped = true;
                }
            }
            Event::TurnEnd { .. } => self.own_in_window = 0,
            Event::Input { source } if source.is_user() => self.stopped = false,
            Event::ManualPoke => {
                self.stopped = false;
                self.manual_pending = true;
            }
            Event::SessionStart { .. } | Event::SessionShutdown => {
                if matches!(event, Event::SessionStart { .. }) {
                    self.own_in_window = 0;
                }
                self.stopped = false;
                self.stall_abort = false;
                self.manual_pending = false;
                self.compacting_since = None;
                self.handoff = false;
            }
            Event::SessionTree => self.stopped = false,
            Event::CompactStart { .. } => self.compacting_since = Some(self.now.mono_ms),
            Event::Compact { reason, .. } | Event::CompactFailed { reason, .. } => {
                self.compacting_since = None;
                if *reason == CompactReason::Manual {
                    self.handoff = false;
                }
            }
            Event::CompactResult { .. } if self.handoff => {
                self.compacting_since = None;
                self.handoff = false;
            }
            _ => {}
        }
    }

    fn step(&mut self, step: Step) -> Result<(), TestCaseError> {
        match step {
            Step::Event(event) => {
                self.observe(&event);
                let before = self.sup.view(self.now).counters;
                let actions = self.sup.handle(event.clone(), self.now);
                if matches!(event, Event::AgentSettled { .. }) {
                    self.check_losers(&actions, &before)?;
                }
                self.apply(actions, Some(&event))
            }
            Step::Advance(ms) => {
                self.now = self.now.plus_ms(ms);
                Ok(())
            }
            Step::Tick => self.tick(),
            Step::RunToDeadline => {
                if let Some(deadline) = self.sup.next_deadline() {
                    if deadline > self.now.mono_ms {
                        self.now = self.now.plus_ms(deadline - self.now.mono_ms);
                    }
                    self.tick()?;
                }
                Ok(())
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn prop_arbiter_invariants_hold_over_random_sequences(
        config in config(),
        steps in proptest::collection::vec(step(), 1..120),
    ) {
        let mut checker = Checker {
            sup: Supervisor::new(config.clone()),
            config,
            now: Now::new(10_000, 1_700_000_000_000),
            own_in_window: 0,
            manual_pending: false,
            stopped: false,
            stall_abort: false,
            compacting_since: None,
            handoff: false,
            next_send_failed: false,
        };
        for step in steps {
            checker.step(step)?;
        }
    }
}
