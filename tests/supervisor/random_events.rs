//! Random event sequences for the property test: pi's lifecycle, the user's commands, the clock and
//! the settings, including turn ends, Esc during a tool, compactions and reconnects.

use pokeshell_core::supervisor::{
    Block, CompactReason, ContextUsage, Event, InputSource, Message, StopReason, SupervisorConfig,
};
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Debug)]
pub enum Step {
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

/// A failing `bash` call: the assistant's call and its failed result.
fn failing_call(tail: &mut Vec<Message>, id: &str) {
    tail.push(Message::assistant(
        StopReason::ToolUse,
        vec![Block::tool_call(id, "bash", json!({"command": "make"}))],
    ));
    tail.push(Message::tool_result(id, "bash", true));
}

fn tail() -> impl Strategy<Value = Vec<Message>> {
    (0..10u8, 1..8u32).prop_map(|(kind, failures)| {
        let mut tail = vec![Message::user("go")];
        match kind {
            0 => tail.push(Message::assistant(StopReason::Stop, vec![Block::text("done")])),
            1 => tail.push(Message::assistant(StopReason::Stop, vec![Block::thinking("hmm")])),
            2 => tail.push(Message::assistant(StopReason::Stop, vec![])),
            3 => {
                for index in 0..failures {
                    failing_call(&mut tail, &format!("c{index}"));
                }
            }
            8 => {
                // The last identical call is the one the user's Esc killed.
                for index in 0..failures {
                    failing_call(&mut tail, &format!("c{index}"));
                }
                if let Some(result) = tail.last_mut() {
                    result
                        .content
                        .push(Block::text("partial output\n\nCommand aborted"));
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
        4 => tail().prop_map(|tail| Event::TurnEnd { tail }),
        3 => tool_id.clone().prop_map(|id| Event::ToolStart {
            id,
            name: "bash".into(),
            args_preview: String::new(),
            args: serde_json::Value::Null,
        }),
        2 => tool_id.prop_map(|id| Event::ToolEnd { id, outcome: Default::default() }),
        1 => proptest::collection::vec((0..3u8).prop_map(|index| format!("t{index}")), 0..3)
            .prop_map(|ids| Event::ToolsRunning { ids }),
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
                final_text: None,
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
        1 => (1..4u32).prop_map(|n| Event::CancelWakeup { id: format!("wake-{n}") }),
        1 => Just(Event::SessionStart { session_id: "s".into(), entries: vec![] }),
        1 => Just(Event::SessionTree),
        1 => Just(Event::SessionShutdown),
        1 => Just(Event::BridgeConnected),
        1 => Just(Event::BridgeDisconnected { reason: "gone".into() }),
    ]
}

pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => event().prop_map(Step::Event),
        3 => (0..45_000u64).prop_map(Step::Advance),
        2 => Just(Step::Tick),
        2 => Just(Step::RunToDeadline),
    ]
}

pub fn config() -> impl Strategy<Value = SupervisorConfig> {
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
