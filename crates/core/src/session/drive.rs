//! A session driven by a script or an agent (`pokeshell send`, `wait`, `read`): its messages go to
//! pi as the user's prompts (held until pi's bridge is up), its runs are counted so that a wait
//! waits for the run a message started, and a bounded transcript of what pi said is kept from the
//! bridge's `message_end` events (docs/driving.md).

use std::collections::VecDeque;

use super::link::Purpose;
use super::view::BridgeStatus;
use super::{Effect, Session};
use crate::bridge::{self as wire, Command, DeliverAs, SendUserMessage};
use crate::drive::{self, FromSession, Marks, Message, ToSession, Tokens, ToolCall, Transcript};
use crate::supervisor::{LedgerKind, LedgerRecord, Now};

/// Messages kept, and the text they may hold together: the oldest go first.
pub const KEPT_MESSAGES: usize = 100;
pub const KEPT_TEXT_BYTES: usize = 256 << 10;
/// The most one answer to `read` holds, serialized: it must fit a frame of the server's socket.
pub const ANSWER_BYTES: usize = 900 << 10;
/// How long a message waits for pi's bridge before it is refused.
pub const HOLD_MS: u64 = 30_000;
/// How long the person's review waits for pi's bridge (pi starting, or its bridge connecting
/// again) before it is refused: shorter, since the person waits on the page for the answer.
pub const REVIEW_HOLD_MS: u64 = 10_000;

/// What the session keeps for those who drive it.
#[derive(Debug, Default)]
pub(super) struct Driven {
    marks: Marks,
    /// The highest marker pi took.
    delivered: u64,
    /// Messages waiting for pi's bridge: (marker, text, steer, from, refused after mono ms).
    held: VecDeque<Held>,
    /// Reviews waiting for pi's bridge, oldest first.
    reviews: VecDeque<HeldReview>,
    transcript: VecDeque<Message>,
    text_bytes: usize,
    /// Older messages were let go.
    dropped: bool,
    /// The ledger has said which agent started the session.
    start_told: bool,
}

#[derive(Debug)]
struct Held {
    marker: u64,
    text: String,
    steer: bool,
    from: Option<String>,
    until_ms: u64,
}

/// A review waiting for pi's bridge.
#[derive(Debug)]
struct HeldReview {
    /// The server's: the answer goes under it.
    ticket: u64,
    text: String,
    until_ms: u64,
}

impl Driven {
    /// A session whose pi was given a first prompt counts that prompt as message 1.
    pub(super) fn new(prompted: bool) -> Self {
        Self {
            delivered: u64::from(prompted),
            ..Default::default()
        }
    }

    fn keep(&mut self, message: Message) {
        self.text_bytes += message.text.len();
        self.transcript.push_back(message);
        while self.transcript.len() > KEPT_MESSAGES
            || (self.text_bytes > KEPT_TEXT_BYTES && self.transcript.len() > 1)
        {
            if let Some(old) = self.transcript.pop_front() {
                self.text_bytes -= old.text.len();
                self.dropped = true;
            }
        }
    }
}

impl Session {
    /// Where the runs stand, for the server's waits.
    pub fn drive_marks(&self) -> Marks {
        Marks {
            going_on: self.supervisor.going_on(),
            ..self.driven.marks
        }
    }

    pub(super) fn on_drive(&mut self, msg: ToSession, now: Now, fx: &mut Vec<Effect>) {
        match msg {
            ToSession::Send {
                marker,
                text,
                steer,
                from,
            } => {
                let held = Held {
                    marker,
                    text,
                    steer,
                    from,
                    until_ms: now.mono_ms + HOLD_MS,
                };
                if self.pi.status == BridgeStatus::Connected {
                    self.give(held, now, fx);
                } else {
                    self.driven.held.push_back(held);
                }
            }
            ToSession::Read { ticket, last } => {
                let transcript = self.transcript(last, now);
                fx.push(Effect::Drive(FromSession::Transcript { ticket, transcript }));
            }
            ToSession::Killed { by } => {
                let reason = format!("ended by the agent of session {by}");
                self.drive_record(drive::rule::KILLED, reason, None, now, fx);
            }
            ToSession::Review { ticket, text } => self.review(ticket, text, now, fx),
        }
    }

    /// The person's review of the changes (`ticket`: the server's, under which the client waiting
    /// for the answer hears it): the supervisor sends it once pi's bridge is there to take it, waiting for it at
    /// most [`REVIEW_HOLD_MS`]. The answer says whether it was sent; one that was not is also said
    /// loudly here, since the person may be far from this session's footer.
    fn review(&mut self, ticket: u64, text: String, now: Now, fx: &mut Vec<Effect>) {
        match self.pi.status {
            BridgeStatus::Connected => self.review_goes(ticket, text, now, fx),
            BridgeStatus::NotUsed => {
                self.review_not_sent(ticket, "this session's program is not pi".into(), now, fx);
            }
            BridgeStatus::Waiting | BridgeStatus::Disconnected(_) => {
                self.driven.reviews.push_back(HeldReview {
                    ticket,
                    text,
                    until_ms: now.mono_ms + REVIEW_HOLD_MS,
                });
            }
        }
    }

    fn review_goes(&mut self, ticket: u64, text: String, now: Now, fx: &mut Vec<Effect>) {
        self.supervise(crate::supervisor::Event::Review { text }, now, fx);
        fx.push(Effect::Drive(FromSession::Reviewed { ticket, error: None }));
    }

    fn review_not_sent(&mut self, ticket: u64, why: String, now: Now, fx: &mut Vec<Effect>) {
        let notice = crate::supervisor::texts::notify_review_not_sent(&why);
        self.flash
            .show(notice.clone(), crate::ui::theme::Tone::Error, now);
        let display = self.settings.get().effective().display;
        fx.push(Effect::Notify {
            text: notice,
            bell: display.bell,
            desktop: display.notifications,
        });
        fx.push(Effect::Redraw);
        fx.push(Effect::Drive(FromSession::Reviewed {
            ticket,
            error: Some(why),
        }));
    }

    /// The message goes to pi: at once when pi is idle (it starts a run), else as a follow-up, or
    /// steered into the run under way.
    fn give(&mut self, held: Held, now: Now, fx: &mut Vec<Effect>) {
        if let Some(by) = &held.from {
            let reason = format!(
                "a message from the agent of session {by} ({} bytes)",
                held.text.len()
            );
            self.drive_record(drive::rule::MESSAGE, reason, Some(held.text.clone()), now, fx);
        }
        let deliver_as = if held.steer {
            DeliverAs::Steer
        } else {
            DeliverAs::FollowUp
        };
        let command = Command::SendUserMessage(SendUserMessage {
            text: held.text,
            deliver_as: Some(deliver_as),
        });
        self.send(command, Purpose::Drive(held.marker), fx);
    }

    /// pi's bridge is up: held messages go, in order.
    pub(super) fn drive_connected(&mut self, now: Now, fx: &mut Vec<Effect>) {
        while let Some(held) = self.driven.held.pop_front() {
            self.give(held, now, fx);
        }
        while let Some(review) = self.driven.reviews.pop_front() {
            self.review_goes(review.ticket, review.text, now, fx);
        }
    }

    /// The program started: the first time, the ledger says which agent started the session.
    pub(super) fn drive_started(&mut self, now: Now, fx: &mut Vec<Effect>) {
        if !self.driven.start_told {
            self.driven.start_told = true;
            if let Some(parent) = self.opts.spec.parent.clone() {
                let reason = format!("started by the agent of session {parent}");
                self.drive_record(drive::rule::STARTED, reason, None, now, fx);
            }
        }
    }

    /// Messages that waited too long for pi's bridge are refused.
    pub(super) fn drive_tick(&mut self, now: Now, fx: &mut Vec<Effect>) {
        while self
            .driven
            .held
            .front()
            .is_some_and(|h| h.until_ms <= now.mono_ms)
        {
            if let Some(held) = self.driven.held.pop_front() {
                let error = Some(format!("pi's bridge did not connect within {} s", HOLD_MS / 1000));
                fx.push(Effect::Drive(FromSession::Delivered {
                    marker: held.marker,
                    error,
                }));
            }
        }
        while self
            .driven
            .reviews
            .front()
            .is_some_and(|r| r.until_ms <= now.mono_ms)
        {
            if let Some(review) = self.driven.reviews.pop_front() {
                let why = format!("pi's bridge did not connect within {} s", REVIEW_HOLD_MS / 1000);
                self.review_not_sent(review.ticket, why, now, fx);
            }
        }
    }

    pub(super) fn drive_deadline(&self) -> Option<u64> {
        let message = self.driven.held.front().map(|h| h.until_ms);
        let review = self.driven.reviews.front().map(|r| r.until_ms);
        message.into_iter().chain(review).min()
    }

    /// pi's answer to a message.
    pub(super) fn drive_delivered(&mut self, marker: u64, result: Result<(), String>, fx: &mut Vec<Effect>) {
        if result.is_ok() {
            self.driven.delivered = self.driven.delivered.max(marker);
        }
        fx.push(Effect::Drive(FromSession::Delivered {
            marker,
            error: result.err(),
        }));
    }

    /// A run started: the messages pi took so far are under way.
    pub(super) fn drive_run_started(&mut self) {
        self.driven.marks.begun = self.driven.delivered;
    }

    /// pi settled; for good when it is idle with nothing queued.
    pub(super) fn drive_settled(&mut self, settle: &wire::AgentSettled) {
        if settle.idle == Some(true) && settle.pending_messages != Some(true) {
            let d = self.driven.delivered;
            self.driven.marks.settled = d;
            self.driven.marks.begun = self.driven.marks.begun.max(d);
        }
    }

    /// A finished message, for the transcript.
    pub(super) fn drive_message(&mut self, m: &wire::MessageEnd, now: Now) {
        let s = &m.message;
        let role = match s.role {
            wire::Role::User => "user",
            wire::Role::Assistant => "assistant",
            wire::Role::ToolResult => "tool_result",
            wire::Role::Custom => "custom",
            _ => "other",
        };
        let tool_calls = s
            .content
            .iter()
            .filter_map(|b| match b {
                wire::Block::ToolCall { name, arguments, .. } => Some(ToolCall {
                    name: name.clone(),
                    arguments: arguments.clone(),
                }),
                _ => None,
            })
            .collect();
        let message = Message {
            role: role.into(),
            text: m.text.as_deref().unwrap_or_default().to_string(),
            tool_calls,
            tool_name: s.tool_name.clone(),
            is_error: s.is_error,
            stop_reason: s.stop_reason.map(stop_word),
            error: s.error_message.clone(),
            tokens: m.usage.map(|u| Tokens {
                input: u.input,
                output: u.output,
                cache_read: u.cache_read,
                cache_write: u.cache_write,
            }),
            cost_usd: m.usage.and_then(|u| u.cost_usd).filter(|c| *c > 0.0),
            at_ms: now.wall_ms,
        };
        self.driven.keep(message);
    }

    /// The last reply and the last `last` messages (the last reply's alone without it), with the
    /// session's state and spend, made to fit one answer.
    fn transcript(&self, last: Option<u32>, now: Now) -> Transcript {
        let kept = &self.driven.transcript;
        let reply_at = kept.iter().rposition(Message::is_reply);
        let mut messages: Vec<Message> = match last {
            Some(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX).min(kept.len());
                kept.iter().skip(kept.len() - n).cloned().collect()
            }
            None => reply_at.map(|i| kept[i].clone()).into_iter().collect(),
        };
        let mut truncated = last.is_some_and(|n| usize::try_from(n).unwrap_or(usize::MAX) > kept.len())
            && self.driven.dropped;
        let brief = self.brief(now);
        let spend = self.usage.session;
        let mut doc = Transcript {
            schema: drive::SCHEMA,
            session: format!("{}:{}", self.opts.spec.number, self.opts.spec.name),
            attention: brief.attention.keyword().into(),
            state: brief.state,
            reply: reply_at.map(|i| kept[i].text.clone()),
            messages: Vec::new(),
            truncated,
            tokens: Tokens {
                input: spend.input,
                output: spend.output,
                cache_read: spend.cache_read,
                cache_write: spend.cache_write,
            },
            cost_usd: spend.cost(),
            context_percent: brief.context_percent,
        };
        let fixed = serde_json::to_vec(&doc).map_or(0, |v| v.len());
        let mut size: usize = messages
            .iter()
            .map(|m| serde_json::to_vec(m).map_or(0, |v| v.len() + 1))
            .sum();
        while fixed + size > ANSWER_BYTES && !messages.is_empty() {
            let gone = messages.remove(0);
            size -= serde_json::to_vec(&gone).map_or(0, |v| v.len() + 1);
            truncated = true;
        }
        doc.messages = messages;
        doc.truncated = truncated;
        doc
    }

    /// A ledger record of what an agent did to this session; written to the ledger's file (not
    /// shown among pokeshell's own interventions).
    fn drive_record(
        &mut self,
        rule: &'static str,
        reason: String,
        sent: Option<String>,
        now: Now,
        fx: &mut Vec<Effect>,
    ) {
        fx.push(Effect::Ledger(LedgerRecord {
            wall_ms: now.wall_ms,
            session_id: self.supervisor.view(now).session_id,
            rule,
            kind: LedgerKind::Action,
            reason,
            sent,
        }));
    }
}

fn stop_word(r: wire::StopReason) -> String {
    match r {
        wire::StopReason::Stop => "stop",
        wire::StopReason::Length => "length",
        wire::StopReason::ToolUse => "tool_use",
        wire::StopReason::Error => "error",
        wire::StopReason::Aborted => "aborted",
        wire::StopReason::Pending => "pending",
        wire::StopReason::Deferred => "deferred",
        wire::StopReason::Other => "other",
    }
    .into()
}
