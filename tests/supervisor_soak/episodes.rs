//! The soak's days: what pi, the model, the bridge and the user do, drawn from a seeded generator.

use pokeshell_core::supervisor::{
    Block, CompactReason, ContextUsage, Event, InputSource, Message, StopReason,
};
use serde_json::json;

use super::{KEPT_RECORDS, Soak};

/// SplitMix64: a fixed seed gives the same days every run.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

impl Soak {
    /// A failing call whose command differs from run to run: a new loop signature each time.
    fn failing_tail(&mut self) -> Vec<Message> {
        let command = format!("make target-{}", self.rng.below(1000));
        let mut tail = vec![Message::user("go")];
        for _ in 0..self.rng.range(1, 5) {
            let id = self.id("call");
            tail.push(Message::assistant(
                StopReason::ToolUse,
                vec![Block::tool_call(&id, "bash", json!({ "command": command }))],
            ));
            tail.push(Message::tool_result(&id, "bash", true));
        }
        tail
    }

    fn settle_tail(&mut self) -> (Vec<Message>, Option<StopReason>) {
        let user = Message::user("go");
        match self.rng.below(10) {
            0..=3 => (
                vec![
                    user,
                    Message::assistant(StopReason::Stop, vec![Block::text("done")]),
                ],
                Some(StopReason::Stop),
            ),
            4 => (
                vec![user, Message::assistant(StopReason::Stop, vec![])],
                Some(StopReason::Stop),
            ),
            5 => (
                vec![
                    user,
                    Message::assistant(StopReason::Error, vec![]).with_error("overloaded"),
                ],
                Some(StopReason::Error),
            ),
            6 => (
                vec![user, Message::assistant(StopReason::Aborted, vec![])],
                Some(StopReason::Aborted),
            ),
            _ => (self.failing_tail(), Some(StopReason::ToolUse)),
        }
    }

    /// One run of the agent: turns with tools (some ends lost, some tools stuck past the threshold),
    /// wakeup requests, then the end and the settle.
    fn run(&mut self) {
        self.event(Event::Input {
            source: InputSource::Interactive,
        });
        self.event(Event::AgentStart);
        for _ in 0..self.rng.range(1, 4) {
            self.event(Event::TurnStart);
            for _ in 0..self.rng.range(0, 3) {
                let id = self.id("tool");
                self.event(Event::ToolStart {
                    id: id.clone(),
                    name: "bash".into(),
                    args_preview: "cargo test".into(),
                    args: serde_json::json!({"command": "cargo test"}),
                });
                let ms = if self.rng.chance(10) {
                    self.rng.range(31_000, 600_000)
                } else {
                    self.rng.range(50, 20_000)
                };
                self.pass(ms);
                if !self.rng.chance(5) {
                    self.event(Event::ToolEnd {
                        id,
                        outcome: Default::default(),
                    });
                }
            }
            if self.rng.chance(15) {
                let call_id = self.id("wake-call");
                let delay = self.rng.range(60, 3600);
                self.event(Event::ToolCallRequest {
                    call_id,
                    name: "schedule_wakeup".into(),
                    args: json!({ "delay_seconds": delay, "prompt": "check the build" }),
                });
            }
            if self.rng.chance(3) {
                let call_id = self.id("cancel-call");
                self.event(Event::ToolCallRequest {
                    call_id,
                    name: "cancel_wakeup".into(),
                    args: json!({}),
                });
            }
            let tail = self.failing_tail();
            self.event(Event::TurnEnd { tail });
            let ms = self.rng.range(500, 30_000);
            self.pass(ms);
        }
        let (tail, stop) = self.settle_tail();
        let aborted = stop == Some(StopReason::Aborted);
        let error_message = (stop == Some(StopReason::Error)).then(|| "overloaded".into());
        self.event(Event::AgentEnd {
            stop_reason: stop,
            error_message,
        });
        let percent = Some(self.rng.below(100) as f64);
        self.event(Event::AgentSettled {
            aborted,
            is_idle: true,
            context_usage: Some(ContextUsage {
                tokens: None,
                window: None,
                percent,
            }),
            tail,
            final_text: None,
        });
    }

    /// A model that fails in ever new ways, run after run, without one text reply in between.
    fn flail(&mut self) {
        for _ in 0..self.rng.range(40, 120) {
            self.event(Event::AgentStart);
            let tail = self.failing_tail();
            self.event(Event::AgentEnd {
                stop_reason: Some(StopReason::ToolUse),
                error_message: None,
            });
            self.event(Event::AgentSettled {
                aborted: false,
                is_idle: true,
                context_usage: None,
                tail,
                final_text: None,
            });
            let ms = self.rng.range(1_000, 20_000);
            self.pass(ms);
        }
    }

    fn compaction(&mut self) {
        let reason = [
            CompactReason::Manual,
            CompactReason::Threshold,
            CompactReason::Overflow,
        ][self.rng.below(3) as usize];
        let will_retry = self.rng.chance(30);
        self.event(Event::CompactStart { reason, will_retry });
        let ms = self.rng.range(1_000, 90_000);
        self.pass(ms);
        if self.rng.chance(80) {
            self.event(Event::Compact {
                reason,
                will_retry,
                tokens_before: Some(150_000),
            });
        } else {
            let aborted = self.rng.chance(50);
            self.event(Event::CompactFailed {
                reason,
                aborted,
                will_retry,
                error_message: Some("summary failed".into()),
            });
        }
    }

    /// One stretch of a day.
    pub fn episode(&mut self) {
        if self.compact_pending && self.rng.chance(70) {
            self.compact_pending = false;
            let error = self.rng.chance(20).then(|| "the handoff failed".to_string());
            self.event(Event::CompactResult { error });
        }
        if !self.unanswered.is_empty() && self.rng.chance(30) {
            let send_id = self.unanswered.remove(0);
            self.answer(send_id, None);
        }
        match self.rng.below(100) {
            0..=54 => self.run(),
            55..=64 => self.compaction(),
            65..=69 => {
                self.event(Event::BridgeDisconnected {
                    reason: "pi restarted its extension host".into(),
                });
                let ms = self.rng.range(100, 120_000);
                self.pass(ms);
                self.event(Event::BridgeConnected);
            }
            70..=73 => self.new_session(),
            74..=75 => {
                self.event(Event::SessionShutdown);
                self.new_session();
            }
            76 => self.event(Event::SessionTree),
            77 => self.flail(),
            78..=80 => self.event(Event::ManualPoke),
            81 => self.event(Event::ManualHandoff {
                focus: Some("the failing test".into()),
            }),
            82..=84 => {
                let mut config = self.config.clone();
                config.poke.enabled = !self.sup.config().poke.enabled;
                let actions = self.sup.set_config(config, self.now);
                self.absorb(actions);
                self.check();
            }
            85..=97 => {
                let source = if self.rng.chance(50) {
                    InputSource::Rpc
                } else {
                    InputSource::Extension
                };
                self.event(Event::Input { source });
            }
            _ => {
                // Idle: minutes to an hour, wakeups fire meanwhile.
                let ms = self.rng.range(60_000, 3600 * 1000);
                self.pass(ms);
            }
        }
        let ms = self.rng.range(1_000, 30_000);
        self.pass(ms);
        // The view is built every frame; it must not choke on a long session either.
        let view = self.sup.view(self.now);
        assert!(view.recent.len() <= KEPT_RECORDS);
    }
}
