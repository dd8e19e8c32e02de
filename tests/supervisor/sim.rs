//! A small driver that reads like the rules of docs/supervision.md: feed events, move the clock, look at what went out.
//! Every `SendMessage` is acknowledged like a working bridge would (or refused, see `refuse_sends`).

use pokeshell_core::supervisor::{
    Action, Block, CompactReason, ContextUsage, CustomEntry, DeliverAs, Event, InputSource, Message, Now,
    StopReason, Supervisor, SupervisorConfig,
};
use serde_json::Value;

pub const START_MONO: u64 = 1_000_000;
pub const START_WALL: u64 = 1_700_000_000_000;

#[derive(Clone, Debug, PartialEq)]
pub struct Sent {
    pub custom_type: &'static str,
    pub text: String,
    pub display: bool,
    pub deliver_as: DeliverAs,
    pub trigger_turn: bool,
}

/// What `agent_settled` carries; the default is a healthy idle settle on a text reply.
pub struct Settled {
    pub aborted: bool,
    pub is_idle: bool,
    /// Context use in percent (`None`: unknown, as right after a compaction).
    pub percent: Option<f64>,
    pub tail: Vec<Message>,
}

impl Default for Settled {
    fn default() -> Self {
        Self {
            aborted: false,
            is_idle: true,
            percent: None,
            tail: vec![Message::user("go"), text_reply("done")],
        }
    }
}

pub struct Sim {
    pub sup: Supervisor,
    pub now: Now,
    /// Every action so far, in order.
    pub actions: Vec<Action>,
    refuse_sends: Option<String>,
}

impl Default for Sim {
    fn default() -> Self {
        Self::new()
    }
}

impl Sim {
    pub fn new() -> Self {
        Self::with(SupervisorConfig::default())
    }

    pub fn with(config: SupervisorConfig) -> Self {
        let mut sim = Self {
            sup: Supervisor::new(config),
            now: Now::new(START_MONO, START_WALL),
            actions: Vec::new(),
            refuse_sends: None,
        };
        sim.session("s1");
        sim
    }

    /// Default config with a change applied.
    pub fn configured(change: impl FnOnce(&mut SupervisorConfig)) -> Self {
        let mut config = SupervisorConfig::default();
        change(&mut config);
        Self::with(config)
    }

    /// From now on the bridge answers every send with this error.
    pub fn refuse_sends(&mut self, error: &str) -> &mut Self {
        self.refuse_sends = Some(error.to_string());
        self
    }

    /// Records a batch, then answers its sends, as the bridge would after the batch was performed.
    fn absorb(&mut self, actions: Vec<Action>) {
        let send_ids: Vec<u64> = actions
            .iter()
            .filter_map(|action| match action {
                Action::SendMessage { send_id, .. } => Some(*send_id),
                _ => None,
            })
            .collect();
        self.actions.extend(actions);
        for send_id in send_ids {
            let reply = self.sup.handle(
                Event::SendResult {
                    send_id,
                    error: self.refuse_sends.clone(),
                },
                self.now,
            );
            self.absorb(reply);
        }
    }

    pub fn event(&mut self, event: Event) -> &mut Self {
        let actions = self.sup.handle(event, self.now);
        self.absorb(actions);
        self
    }

    /// Moves both clocks; nothing runs (call `tick` like the shell would).
    pub fn advance(&mut self, seconds: u64) -> &mut Self {
        self.advance_ms(seconds * 1000)
    }

    pub fn advance_ms(&mut self, ms: u64) -> &mut Self {
        self.now = self.now.plus_ms(ms);
        self
    }

    pub fn tick(&mut self) -> &mut Self {
        let actions = self.sup.tick(self.now);
        self.absorb(actions);
        self
    }

    /// Lets `seconds` pass the way the shell does: ticking at every deadline on the way.
    pub fn run_for(&mut self, seconds: u64) -> &mut Self {
        let end = self.now.mono_ms + seconds * 1000;
        while let Some(deadline) = self.sup.next_deadline() {
            if deadline > end {
                break;
            }
            if deadline > self.now.mono_ms {
                self.advance_ms(deadline - self.now.mono_ms);
            }
            let before = self.actions.len();
            self.tick();
            // A deadline that stays in the past without any effect would spin the shell.
            assert!(
                self.actions.len() > before || self.sup.next_deadline() != Some(deadline),
                "deadline {deadline} did not move after a tick"
            );
        }
        self.advance_ms(end - self.now.mono_ms)
    }

    pub fn set_config(&mut self, change: impl FnOnce(&mut SupervisorConfig)) -> &mut Self {
        let mut config = self.sup.config().clone();
        change(&mut config);
        let actions = self.sup.set_config(config, self.now);
        self.absorb(actions);
        self
    }

    // pi's lifecycle.

    pub fn session(&mut self, id: &str) -> &mut Self {
        self.session_with(id, Vec::new())
    }

    pub fn session_with(&mut self, id: &str, entries: Vec<CustomEntry>) -> &mut Self {
        self.event(Event::SessionStart {
            session_id: id.into(),
            entries,
        })
    }

    pub fn agent_start(&mut self) -> &mut Self {
        self.event(Event::AgentStart)
    }

    pub fn agent_end(&mut self, stop: StopReason) -> &mut Self {
        let error_message = (stop == StopReason::Error).then(|| "boom".to_string());
        self.event(Event::AgentEnd {
            stop_reason: Some(stop),
            error_message,
        })
    }

    pub fn turn_start(&mut self) -> &mut Self {
        self.event(Event::TurnStart)
    }

    pub fn tool_start(&mut self, id: &str, name: &str) -> &mut Self {
        self.event(Event::ToolStart {
            id: id.into(),
            name: name.into(),
            args_preview: "sleep 60".into(),
            args: serde_json::json!({"command": "sleep 60"}),
        })
    }

    pub fn tool_end(&mut self, id: &str) -> &mut Self {
        self.event(Event::ToolEnd {
            id: id.into(),
            outcome: Default::default(),
        })
    }

    /// An automatic compaction (threshold, or overflow when it will retry) that succeeded.
    pub fn compact(&mut self, will_retry: bool) -> &mut Self {
        let reason = if will_retry {
            CompactReason::Overflow
        } else {
            CompactReason::Threshold
        };
        self.compact_as(reason, will_retry)
    }

    pub fn compact_as(&mut self, reason: CompactReason, will_retry: bool) -> &mut Self {
        self.event(Event::CompactStart { reason, will_retry });
        self.event(Event::Compact {
            reason,
            will_retry,
            tokens_before: Some(120_734),
        })
    }

    pub fn compact_failed(&mut self, will_retry: bool) -> &mut Self {
        self.event(Event::CompactFailed {
            reason: CompactReason::Threshold,
            aborted: false,
            will_retry,
            error_message: Some("summary request failed".into()),
        })
    }

    /// `agent_settled` on a branch whose last message is an assistant text reply.
    pub fn settle(&mut self) -> &mut Self {
        self.settle_as(Settled::default())
    }

    pub fn settle_with(&mut self, tail: Vec<Message>) -> &mut Self {
        self.settle_as(Settled {
            tail,
            ..Settled::default()
        })
    }

    /// The user pressed Esc: pi settles aborted with an aborted assistant message last.
    pub fn settle_aborted(&mut self) -> &mut Self {
        let tail = vec![
            Message::user("go"),
            Message::assistant(StopReason::Aborted, vec![]),
        ];
        self.settle_as(Settled {
            aborted: true,
            tail,
            ..Settled::default()
        })
    }

    pub fn settle_at_percent(&mut self, percent: Option<f64>) -> &mut Self {
        self.settle_as(Settled {
            percent,
            ..Settled::default()
        })
    }

    pub fn settle_as(&mut self, settled: Settled) -> &mut Self {
        let usage = ContextUsage {
            tokens: settled.percent.map(|percent| (percent * 1000.0) as u64),
            window: Some(100_000),
            percent: settled.percent,
        };
        self.event(Event::AgentSettled {
            aborted: settled.aborted,
            is_idle: settled.is_idle,
            context_usage: Some(usage),
            final_text: final_text(&settled.tail),
            tail: settled.tail,
        })
    }

    pub fn input(&mut self, source: InputSource) -> &mut Self {
        self.event(Event::Input { source })
    }

    pub fn user_types(&mut self) -> &mut Self {
        self.input(InputSource::Interactive)
    }

    pub fn manual_poke(&mut self) -> &mut Self {
        self.event(Event::ManualPoke)
    }

    pub fn tool_call(&mut self, call_id: &str, name: &str, args: Value) -> &mut Self {
        self.event(Event::ToolCallRequest {
            call_id: call_id.into(),
            name: name.into(),
            args,
        })
    }
}

// Branch-tail builders.

/// What the bridge sends as `finalText`: the text of the tail's last assistant message.
pub fn final_text(tail: &[Message]) -> Option<String> {
    let last = tail.iter().rev().find(|message| message.is_assistant())?;
    let text: Vec<&str> = last
        .content
        .iter()
        .filter_map(|block| match block {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

pub fn text_reply(text: &str) -> Message {
    Message::assistant(StopReason::Stop, vec![Block::text(text)])
}

pub fn thinking_only() -> Message {
    Message::assistant(StopReason::Stop, vec![Block::thinking("reasoning...")])
}

pub fn tool_call(id: &str, name: &str, args: Value) -> Message {
    Message::assistant(StopReason::ToolUse, vec![Block::tool_call(id, name, args)])
}

/// An assistant message calling `name(args)` with id `id`, then its result.
pub fn call_and_result(id: &str, name: &str, args: Value, failed: bool) -> Vec<Message> {
    vec![tool_call(id, name, args), Message::tool_result(id, name, failed)]
}
