//! Invariants over random event sequences: at most one automatic resume per settle; none after an
//! aborted settle until the user acts again; counters within their bounds; nothing automatic while
//! supervision is off; every forwarded tool call answered once; no deadline that spins the shell.

use pokeshell::supervisor::{
    Action, Block, CompactReason, ContextUsage, Event, InputSource, Message, Now, StopReason, Supervisor,
    SupervisorConfig, texts,
};
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Debug)]
enum Step {
    Event(Event),
    Advance(u64),
    Tick,
    /// Jump to the next deadline and tick, like the shell's timer.
    RunToDeadline,
}

fn stop_reason() -> impl Strategy<Value = StopReason> {
    prop_oneof![
        Just(StopReason::Stop),
        Just(StopReason::Error),
        Just(StopReason::Length),
        Just(StopReason::Aborted),
        Just(StopReason::ToolUse),
    ]
}

fn compact_reason() -> impl Strategy<Value = CompactReason> {
    prop_oneof![
        Just(CompactReason::Manual),
        Just(CompactReason::Threshold),
        Just(CompactReason::Overflow)
    ]
}

fn tail() -> impl Strategy<Value = Vec<Message>> {
    (0..8u8, 1..8u32).prop_map(|(kind, failures)| {
        let mut tail = vec![Message::user("go")];
        match kind {
            0 => tail.push(Message::assistant(StopReason::Stop, vec![Block::text("done")])),
            1 => tail.push(Message::assistant(StopReason::Stop, vec![Block::thinking("hmm")])),
            2 => tail.push(Message::assistant(StopReason::Stop, vec![])),
            3 => {
                for index in 0..failures {
                    let id = format!("c{index}");
                    tail.push(Message::assistant(
                        StopReason::ToolUse,
                        vec![Block::tool_call(&id, "bash", json!({"command": "make"}))],
                    ));
                    tail.push(Message::tool_result(&id, "bash", true));
                }
            }
            4 => {
                tail.push(Message::assistant(
                    StopReason::ToolUse,
                    vec![Block::tool_call("ok", "ls", json!({}))],
                ));
                tail.push(Message::tool_result("ok", "ls", false));
            }
            5 => tail.push(Message::assistant(StopReason::Aborted, vec![])),
            6 => tail.push(Message::assistant(StopReason::Error, vec![]).with_error("boom")),
            _ => tail.push(Message::custom("poke", "[Poke] x")),
        }
        tail
    })
}

fn event() -> impl Strategy<Value = Event> {
    let tool_id = (0..3u8).prop_map(|index| format!("t{index}"));
    prop_oneof![
        4 => Just(Event::AgentStart),
        4 => stop_reason().prop_map(|stop| Event::AgentEnd { stop_reason: Some(stop), error_message: None }),
        3 => Just(Event::TurnStart),
        3 => tool_id.clone().prop_map(|id| Event::ToolStart { id, name: "bash".into(), args_preview: String::new() }),
        2 => tool_id.prop_map(|id| Event::ToolEnd { id }),
        1 => (compact_reason(), any::<bool>()).prop_map(|(reason, will_retry)| Event::CompactStart { reason, will_retry }),
        3 => (compact_reason(), any::<bool>())
            .prop_map(|(reason, will_retry)| Event::Compact { reason, will_retry, tokens_before: Some(5000) }),
        2 => (compact_reason(), any::<bool>(), any::<bool>()).prop_map(|(reason, aborted, will_retry)| {
            Event::CompactFailed { reason, aborted, will_retry, error_message: None }
        }),
        1 => proptest::option::of(Just("failed".to_string())).prop_map(|error| Event::CompactResult { error }),
        6 => (any::<bool>(), any::<bool>(), proptest::option::of(0.0..100.0f64), tail()).prop_map(
            |(aborted, is_idle, percent, tail)| Event::AgentSettled {
                aborted,
                is_idle,
                context_usage: Some(ContextUsage { tokens: None, window: None, percent }),
                tail,
            }
        ),
        2 => prop_oneof![Just(InputSource::Interactive), Just(InputSource::Rpc), Just(InputSource::Extension)]
            .prop_map(|source| Event::Input { source }),
        1 => Just(Event::ManualPoke),
        1 => Just(Event::ManualHandoff { focus: None }),
        2 => (0..200u32).prop_map(|delay| Event::ToolCallRequest {
            call_id: format!("call{delay}"),
            name: "schedule_wakeup".into(),
            args: json!({"delay_seconds": delay, "prompt": "wake"}),
        }),
        1 => Just(Event::ToolCallRequest { call_id: "cancel".into(), name: "cancel_wakeup".into(), args: json!({}) }),
        1 => Just(Event::SessionStart { session_id: "s".into(), entries: vec![] }),
        1 => Just(Event::SessionTree),
        1 => Just(Event::SessionShutdown),
        1 => Just(Event::BridgeConnected),
        1 => Just(Event::BridgeDisconnected { reason: "gone".into() }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => event().prop_map(Step::Event),
        3 => (0..45_000u64).prop_map(Step::Advance),
        2 => Just(Step::Tick),
        2 => Just(Step::RunToDeadline),
    ]
}

fn config() -> impl Strategy<Value = SupervisorConfig> {
    (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0u64), Just(30)],
        1..4u32,
        0..4u32,
        1..4u32,
        1..3u32,
        any::<bool>(),
    )
        .prop_map(
            |(enabled, auto_abort, cooldown, max_pokes, retries, threshold, nudges, auto_poke)| {
                let mut config = SupervisorConfig::default();
                config.poke.enabled = enabled;
                config.poke.auto_abort = auto_abort;
                config.poke.auto_poke = auto_poke;
                config.poke.threshold_seconds = 5;
                config.poke.post_compact_max_pokes = max_pokes;
                config.poke.post_compact_cooldown_seconds = cooldown;
                config.global_cooldown_seconds = cooldown;
                config.recovery.max_retries = retries;
                config.recovery.loop_threshold = threshold;
                config.recovery.max_loop_nudges = nudges;
                config.wakeup_min_seconds = 1;
                config
            },
        )
}

fn is_manual(text: &str) -> bool {
    text == texts::manual_poke()
}

/// An automatic resume: a poke that is not the manual one, a retry, or a loop-guard message.
fn is_auto_resume(action: &Action) -> bool {
    match action {
        Action::SendMessage {
            custom_type, text, ..
        } => match *custom_type {
            texts::CT_POKE => !is_manual(text),
            texts::CT_RETRY | texts::CT_LOOP => true,
            _ => false,
        },
        _ => false,
    }
}

struct Checker {
    sup: Supervisor,
    config: SupervisorConfig,
    now: Now,
    resumes_since_settle: usize,
    stopped: bool,
    next_send_failed: bool,
}

impl Checker {
    fn apply(&mut self, actions: Vec<Action>, cause: Option<&Event>) -> Result<(), TestCaseError> {
        for action in &actions {
            if is_auto_resume(action) {
                self.resumes_since_settle += 1;
                prop_assert!(
                    self.resumes_since_settle <= 1,
                    "two automatic resumes within one settle: {action:?}"
                );
                prop_assert!(
                    !self.stopped,
                    "automatic resume after an aborted settle: {action:?}"
                );
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

    fn step(&mut self, step: Step) -> Result<(), TestCaseError> {
        match step {
            Step::Event(event) => {
                match &event {
                    Event::AgentSettled { aborted, tail, .. } => {
                        self.resumes_since_settle = 0;
                        let tail_aborted = tail
                            .iter()
                            .rev()
                            .find(|message| !message.is_custom())
                            .is_some_and(Message::is_aborted_assistant);
                        if (*aborted || tail_aborted) && self.config.poke.enabled {
                            self.stopped = true;
                        }
                    }
                    Event::Input { source } if source.is_user() => self.stopped = false,
                    Event::ManualPoke
                    | Event::SessionStart { .. }
                    | Event::SessionTree
                    | Event::SessionShutdown => self.stopped = false,
                    _ => {}
                }
                let actions = self.sup.handle(event.clone(), self.now);
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
            resumes_since_settle: 0,
            stopped: false,
            next_send_failed: false,
        };
        for step in steps {
            checker.step(step)?;
        }
    }
}
