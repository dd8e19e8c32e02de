//! pi's runs: a prompt or a message starts one, each turn is a model request (streamed, or stalled,
//! or failing while the provider is out) and its tool call, pi retries a failed request three times,
//! compacts between turns when told to, and settles at the end.

use pokeshell_core::bridge::{
    AgentEnd, AgentSettled, BridgeEvent, CompactReason, InputEvent, InputSource, PiEvent,
    SessionBeforeCompact, SessionCompact, SessionCompactFailed, StopReason, ToolCallRequest,
    ToolExecutionEnd, TurnStart,
};
use serde_json::{Value, json};

use super::{Compacting, Out, Phase, Pi, Queued, Then, Timer, message_end, tool_start, usage};
use crate::conv::{Conv, Msg, Reply};
use crate::history::{Compaction, Ending, Task};
use crate::pi::Faults;

/// The bridge's one reply to command `id`.
pub fn answer(id: u64, command: &'static str, result: Result<Value, String>) -> BridgeEvent {
    BridgeEvent::Reply { id, command, result }
}

/// The error text of a provider outage, as pi's last retry reports it.
fn outage_text(status: u16, reset_s: Option<u64>) -> String {
    let body = match status {
        429 => "rate_limit_error: Number of request tokens has exceeded your per-minute rate limit",
        529 => "overloaded_error: Overloaded",
        _ => "Service Unavailable",
    };
    match reset_s {
        Some(s) => format!("Retry failed after 3 attempts: {status}: {body}. Please try again in {s}s."),
        None => format!("Retry failed after 3 attempts: {status}: {body}"),
    }
}

impl Pi {
    /// The user pressed Enter on `task`'s prompt (or pi took it from its command line).
    pub(super) fn submit(&mut self, id: u64, task: Task, conv: &mut Conv, faults: &mut Faults) {
        let busy = self.run.is_some() || self.compaction.is_some();
        self.emit(PiEvent::Input(InputEvent {
            source: InputSource::Interactive,
            streaming_behavior: busy.then(|| "steer".to_string()),
            text_chars: 12,
            has_images: false,
        }));
        if busy {
            self.queue.push(Queued::User(id, task));
            return;
        }
        conv.take_task(id, task);
        self.out.push(Out::Delivered(id));
        self.start_run(conv, faults);
    }

    pub(super) fn start_run(&mut self, conv: &mut Conv, faults: &mut Faults) {
        self.epoch += 1;
        self.run = Some((Phase::Streaming, 0));
        self.run_since = self.now;
        self.emit(PiEvent::AgentStart);
        self.start_turn(conv, faults);
    }

    /// A model request: what was queued goes in first.
    pub(super) fn start_turn(&mut self, conv: &mut Conv, faults: &mut Faults) {
        for q in std::mem::take(&mut self.queue) {
            match q {
                Queued::User(id, task) => {
                    conv.take_task(id, task);
                    self.out.push(Out::Delivered(id));
                }
                Queued::Custom(custom_type, display) => {
                    conv.messages.push(Msg::Custom { custom_type, display })
                }
            }
        }
        let retries = self.run.as_ref().map_or(0, |r| r.1);
        self.run = Some((Phase::Streaming, retries));
        self.emit(PiEvent::TurnStart(TurnStart { turn_index: 0 }));
        let e = self.epoch;
        if std::mem::take(&mut faults.stall_next) {
            // Keep-alives only: a token or two, then nothing, for as long as nobody stops it.
            self.after(800, Timer::Progress(e));
            return;
        }
        let stream = self.rng.range(500, 12_000);
        for s in (1_000..stream).step_by(1_000) {
            self.after(s, Timer::Progress(e));
        }
        self.after(stream, Timer::Reply(e));
    }

    /// The model's reply to the request in flight has come (or the provider refused it).
    pub(super) fn reply(&mut self, conv: &mut Conv, faults: &mut Faults) {
        if let Some((status, reset_s, until)) = faults.outage {
            if self.now < until {
                return self.request_failed(outage_text(status, reset_s), true, conv);
            }
            faults.outage = None;
        }
        if std::mem::take(&mut self.fail_next) {
            let text = "400: prompt is too long: the context window is full".to_string();
            return self.request_failed(text, false, conv);
        }
        if let Some(delay) = faults.wakeup_next.take() {
            let id = conv.new_call_id();
            let reply = Reply::Tool {
                id: id.clone(),
                name: "schedule_wakeup".into(),
            };
            self.emit(message_end(&reply));
            conv.messages.push(Msg::Assistant(reply));
            self.emit(tool_start(&id, "schedule_wakeup"));
            self.emit(PiEvent::ToolCallRequest(ToolCallRequest {
                call_id: id.clone(),
                tool_name: "schedule_wakeup".into(),
                args: json!({ "delay_seconds": delay, "prompt": "check the build", "reason": "sim" }),
            }));
            self.run = Some((Phase::ToolReply(id), 0));
            return;
        }
        if conv.work.remaining > 0 {
            let id = conv.new_call_id();
            let reply = Reply::Tool {
                id: id.clone(),
                name: "bash".into(),
            };
            self.emit(message_end(&reply));
            conv.messages.push(Msg::Assistant(reply));
            self.emit(tool_start(&id, "bash"));
            self.run = Some((Phase::Tool(id), 0));
            let took = self.rng.range(200, 50_000);
            self.after(took, Timer::ToolDone(self.epoch));
            return;
        }
        let reply = match conv.work.ending.take() {
            Some(Ending::Promise) => Reply::Promise,
            Some(Ending::Empty) => Reply::Empty,
            _ => Reply::Text,
        };
        self.emit(message_end(&reply));
        conv.messages.push(Msg::Assistant(reply));
        conv.grow();
        if self.queue.is_empty() {
            self.end_run(StopReason::Stop, None, conv, faults);
        } else {
            self.start_turn(conv, faults);
        }
    }

    fn request_failed(&mut self, text: String, transient: bool, conv: &mut Conv) {
        let retries = self.run.as_ref().map_or(0, |r| r.1);
        self.emit(PiEvent::AgentEnd(AgentEnd {
            stop_reason: Some(StopReason::Error),
            error_message: Some(text.clone()),
            message_count: 1,
        }));
        if transient && retries < 3 {
            self.run = Some((Phase::Retrying, retries + 1));
            self.after(2_000 << retries, Timer::Retry(self.epoch));
            return;
        }
        conv.messages.push(Msg::Assistant(Reply::Error(text)));
        self.settle(false, conv);
    }

    pub(super) fn tool_end(&mut self, id: String, name: &str, is_error: bool, conv: &mut Conv) {
        self.emit(PiEvent::ToolExecutionEnd(ToolExecutionEnd {
            tool_call_id: id.clone(),
            tool_name: name.to_string(),
            is_error,
            duration_ms: None,
            result_digest: None,
        }));
        conv.messages.push(Msg::ToolResult {
            id,
            name: name.to_string(),
            is_error,
        });
        conv.grow();
    }

    /// A turn's tools are done: pi may compact, then asks the model again.
    pub(super) fn turn_over(&mut self, conv: &mut Conv, faults: &mut Faults) {
        match faults.compact_next.take() {
            Some(how) => {
                let (reason, will_retry, then) = match how {
                    Compaction::Threshold => (CompactReason::Threshold, false, Then::NextTurn),
                    Compaction::Overflow => (CompactReason::Overflow, true, Then::NextTurn),
                    Compaction::KillsTurn => (CompactReason::Threshold, false, Then::FailTurn),
                };
                self.compact(reason, will_retry, false, then, None);
            }
            None => self.start_turn(conv, faults),
        }
    }

    fn end_run(&mut self, stop: StopReason, error: Option<String>, conv: &mut Conv, faults: &mut Faults) {
        self.emit(PiEvent::AgentEnd(AgentEnd {
            stop_reason: Some(stop),
            error_message: error,
            message_count: 2,
        }));
        if let Some(how) = faults.compact_next.take() {
            // After a finished run pi compacts before it settles.
            let reason = match how {
                Compaction::Overflow => CompactReason::Overflow,
                _ => CompactReason::Threshold,
            };
            self.compact(reason, false, false, Then::Settle, None);
            return;
        }
        self.settle(false, conv);
    }

    pub(super) fn settle(&mut self, aborted: bool, conv: &mut Conv) {
        self.run = None;
        self.epoch += 1;
        self.emit(PiEvent::AgentSettled(AgentSettled {
            aborted,
            idle: Some(true),
            pending_messages: Some(false),
            context_usage: usage(conv),
            tail: conv.tail(),
            tail_truncated: false,
            final_text: conv.final_text(),
        }));
    }

    /// Messages that came while pi was busy start a run of their own once it is idle.
    pub(super) fn run_queued(&mut self, conv: &mut Conv, faults: &mut Faults) {
        if self.run.is_none() && self.compaction.is_none() && !self.queue.is_empty() {
            self.start_run(conv, faults);
        }
    }

    pub(super) fn compact(
        &mut self,
        reason: CompactReason,
        will_retry: bool,
        handoff: bool,
        then: Then,
        reply: Option<u64>,
    ) {
        self.emit(PiEvent::SessionBeforeCompact(SessionBeforeCompact {
            reason,
            will_retry,
            tokens_before: Some(50_000),
            handoff,
        }));
        self.compaction = Some(Compacting {
            reason,
            will_retry,
            handoff,
            then,
            reply,
        });
        let took = self.rng.range(1_000, 40_000);
        self.after(took, Timer::CompactDone(self.epoch));
    }

    pub(super) fn compaction_done(&mut self, conv: &mut Conv, faults: &mut Faults) {
        let Some(c) = self.compaction.take() else { return };
        self.emit(PiEvent::SessionCompact(SessionCompact {
            reason: c.reason,
            will_retry: c.will_retry,
            from_extension: c.handoff,
            tokens_before: Some(50_000),
        }));
        conv.percent = None;
        if let Some(id) = c.reply {
            self.out.push(Out::Bridge(answer(
                id,
                "compact",
                Ok(json!({ "tokensBefore": 50_000 })),
            )));
        }
        self.after_compaction(c.then, conv, faults);
    }

    pub(super) fn after_compaction(&mut self, then: Then, conv: &mut Conv, faults: &mut Faults) {
        match then {
            Then::NextTurn => self.start_turn(conv, faults),
            Then::FailTurn => {
                self.fail_next = true;
                self.start_turn(conv, faults);
            }
            Then::Settle => self.settle(false, conv),
            Then::Idle => self.run_queued(conv, faults),
        }
    }

    /// Esc, or the bridge's `ctx.abort()`: the run stops (the user's Esc during an automatic
    /// compaction in a run stops only the compaction).
    pub(super) fn abort(&mut self, by_user: bool, conv: &mut Conv, faults: &mut Faults) {
        if let Some(c) = &self.compaction {
            let in_run = self.run.is_some();
            let then = c.then;
            let failed = SessionCompactFailed {
                reason: c.reason,
                will_retry: false,
                aborted: true,
                from_extension: c.handoff,
                error_message: Some("Compaction cancelled".into()),
            };
            let reply = c.reply;
            self.compaction = None;
            self.epoch += 1;
            self.emit(PiEvent::SessionCompactFailed(failed));
            if let Some(id) = reply {
                self.out.push(Out::Bridge(answer(
                    id,
                    "compact",
                    Err("Compaction cancelled".into()),
                )));
            }
            if by_user && in_run {
                return self.after_compaction(then, conv, faults);
            }
            if !in_run {
                if then == Then::Settle {
                    self.settle(true, conv);
                }
                return;
            }
        }
        let Some((phase, _)) = self.run.take() else { return };
        self.epoch += 1;
        if let Phase::Tool(id) | Phase::ToolReply(id) = phase {
            self.tool_end(id, "bash", true, conv);
        }
        conv.messages.push(Msg::Assistant(Reply::Aborted));
        self.emit(PiEvent::AgentEnd(AgentEnd {
            stop_reason: Some(StopReason::Aborted),
            error_message: None,
            message_count: 1,
        }));
        // Steering messages die with the run; a prompt typed meanwhile goes back to the editor.
        self.queue.retain(|q| matches!(q, Queued::User(..)));
        self.settle(true, conv);
        if by_user {
            self.out.push(Out::UserStopped);
        }
    }
}
