//! What one session shows of itself to the others: a [`SessionBrief`] for the side pane's session
//! list, the switcher and `pokeshell ls`, built from what the session already knows (pi's status
//! report, the supervisor's view, the child, the restart watch).

use super::Session;
use super::view::BridgeStatus;
use crate::brief::{Attention, Finished, Need, NeedKind, SessionBrief};
use crate::config::KeyId;
use crate::format::{clock, duration};
use crate::screen::ProgramState;
use crate::supervisor::ledger::rule;
use crate::supervisor::message::{Message, StopReason, last_visible};
use crate::supervisor::promise::{HandBack, hand_back};
use crate::supervisor::{Action, AgentState, LedgerKind, NotifyLevel, Now};

/// What the session noticed in the supervisor's actions that its view does not keep: a rule that gave
/// up, and when a run that pokeshell had to stop went silent; and how the last run ended (a question
/// for the person, or a plain finish).
#[derive(Debug, Default, PartialEq)]
pub(super) struct Trouble {
    /// The supervisor's give-up notice, until pi runs again or is relaunched.
    gave_up: Option<String>,
    /// When the silence of a stalled run began (mono ms), as far as the session can tell.
    stalled_at: Option<u64>,
    /// The last run ended handing the turn back to the person, until pi runs again.
    ending: Option<HandBack>,
    /// The runs that settled well without asking anything.
    finished: Finished,
}

impl Trouble {
    /// Looks through one batch of supervisor actions. A give-up is the only place the supervisor
    /// records a refusal and then raises an error to the desktop (`Supervisor::give_up`); a stall
    /// abort is recorded under the stall rules when the silence reached `stall_limit_ms`.
    pub(super) fn note(&mut self, actions: &[Action], now: Now, stall_limit_ms: u64) {
        let mut after_refusal = false;
        for action in actions {
            match action {
                Action::Log(r) => {
                    if r.kind == LedgerKind::Action && [rule::STALL_STREAM, rule::STALL_RUN].contains(&r.rule)
                    {
                        self.stalled_at = Some(now.mono_ms.saturating_sub(stall_limit_ms));
                    }
                    after_refusal = r.kind == LedgerKind::Declined;
                    continue;
                }
                Action::Notify {
                    level: NotifyLevel::Error,
                    text,
                    desktop: true,
                } if after_refusal => self.gave_up = Some(text.clone()),
                _ => {}
            }
            after_refusal = false;
        }
    }

    /// pi runs again, or a new pi started: whatever was given up on, or asked, is behind.
    pub(super) fn clear_gave_up(&mut self) {
        self.gave_up = None;
        self.ending = None;
    }

    /// Another conversation started in the same pi: its predecessor's question is not asked here.
    pub(super) fn clear_ending(&mut self) {
        self.ending = None;
    }

    /// A run settled: a final message with text and no tool call, from a run that neither failed
    /// nor was stopped, either hands the turn back (the promise classifier's "no" that waits for the
    /// person) or finished. `text` is the final message's end as the bridge gave it.
    pub(super) fn settled(&mut self, aborted: bool, idle: bool, tail: &[Message], text: Option<&str>) {
        self.ending = None;
        let Some(last) = last_visible(tail) else {
            return;
        };
        let ended_well = !aborted
            && idle
            && last.is_assistant()
            && !last.has_tool_call()
            && last.has_text()
            && !matches!(
                last.stop_reason,
                Some(StopReason::Error | StopReason::Length | StopReason::Aborted)
            );
        let Some(text) = text.filter(|_| ended_well) else {
            return;
        };
        match hand_back(text) {
            Some(back) => self.ending = Some(back),
            None => {
                self.finished.runs += 1;
                self.finished.quote = crate::supervisor::promise::quote_end(text);
            }
        }
    }
}

impl Session {
    /// This session as the others see it, at `now`.
    pub fn brief(&self, now: Now) -> SessionBrief {
        let view = self.supervisor_view(now);
        let (attention, state) = self.attention(&view, now);
        let tool = view.tools.first().map(|t| (t.name.clone(), t.started_wall_ms));
        let last_intervention = view
            .recent
            .iter()
            .rev()
            .find(|r| r.kind == LedgerKind::Action)
            .map(|r| format!("{} {}", &clock(r.wall_ms, self.utc_offset_secs)[..5], r.reason));
        SessionBrief {
            number: self.opts.spec.number,
            name: self.opts.spec.name.clone(),
            dir: self.opts.spec.dir.clone(),
            attention,
            state,
            tool,
            last_intervention,
            created_wall_ms: self.created_wall_ms,
            attached: 0,
            spend: self.usage.session,
            branch: None,
            dirty: None,
            machine: None,
            context_percent: self.pi.context.as_ref().and_then(|u| u.percent),
            offer: view.guard.halt.as_ref().map(|h| h.offer.label()),
            changes: None,
        }
    }

    /// The commit the session's changes are read against, when known.
    pub fn base(&self) -> Option<&str> {
        self.opts.spec.base.as_deref()
    }

    /// The directory the session runs in.
    pub fn dir(&self) -> &str {
        &self.opts.spec.dir
    }

    /// Where [`Self::dir`] led when the session first started, links followed, when known.
    pub fn real_dir(&self) -> Option<&str> {
        self.opts.spec.real_dir.as_deref()
    }

    /// What this session waits for its person about now, if anything (the one definition: see
    /// [`crate::brief::Need`]). A pi that exited or is being relaunched waits for nobody.
    pub fn need(&self, now: Now) -> Option<Need> {
        self.need_in(&self.supervisor_view(now))
    }

    /// The runs that settled well without asking anything so far, and the last one's words.
    pub fn finished(&self) -> &Finished {
        &self.trouble.finished
    }

    fn need_in(&self, view: &crate::supervisor::View) -> Option<Need> {
        if self.child.exit.is_some() || self.watch.restarting.is_some() {
            return None;
        }
        let need = |kind, quote: &str| {
            Some(Need {
                kind,
                quote: quote.to_string(),
            })
        };
        // A pause comes first: what else the session waits for waits behind it.
        if let Some(halt) = &view.guard.halt {
            // What was reached, and what allowing more grants (GUARD-A1) or leaving it (GUARD-A2).
            let quote = format!(
                "{}.\nAllow more: {}; or leave it stopped.",
                halt.cause.state(),
                halt.offer.label()
            );
            return need(NeedKind::Paused, &quote);
        }
        let reported = self.pi.program_status.as_ref();
        if let Some(status) = reported.filter(|s| s.state == ProgramState::Blocked) {
            let what = status.msg.as_ref().or(status.kind.as_ref());
            return need(NeedKind::Dialog, what.map_or("", String::as_str));
        }
        if let Some(back) = &self.trouble.ending {
            let kind = NeedKind::Answer { yes_no: back.yes_no };
            return need(kind, &back.quote);
        }
        if let Some(notice) = &self.trouble.gave_up {
            return need(NeedKind::GaveUp, notice);
        }
        if let Some(wait) = &view.limit_wait {
            let kind = NeedKind::Limit {
                until_wall_ms: wait.at_wall_ms,
            };
            return need(kind, &format!("{}: {}", wait.kind, wait.error_line));
        }
        None
    }

    pub(super) fn attention(&self, view: &crate::supervisor::View, now: Now) -> (Attention, String) {
        if let (Some((_, why)), None) = (&self.watch.not_started, self.watch.restarting) {
            return (Attention::GaveUp, format!("gave up: pi not started again, {why}"));
        }
        if let (Some(code), None) = (self.child.exit, self.watch.restarting) {
            return (Attention::Exited, format!("exited (code {code})"));
        }
        if self.watch.restarting.is_some() {
            return (Attention::Working, "restarting pi".into());
        }
        // Whether it needs the person (a pause among them) is decided once, in `need_in`.
        if let Some(need) = self.need_in(view) {
            return match need.kind {
                NeedKind::Dialog | NeedKind::Answer { .. } if need.quote.is_empty() => {
                    (Attention::Question, "waiting for you".to_string())
                }
                NeedKind::Dialog => (Attention::Question, format!("waiting for you: {}", need.quote)),
                NeedKind::Answer { .. } => {
                    let last = need.quote.lines().last().unwrap_or_default();
                    (Attention::Question, format!("waiting for you: {last}"))
                }
                NeedKind::GaveUp => (Attention::GaveUp, format!("gave up: {}", need.quote)),
                NeedKind::Limit { until_wall_ms } => {
                    let until = &clock(until_wall_ms, self.utc_offset_secs)[..5];
                    (Attention::Limit, format!("waiting for the limit until {until}"))
                }
                // The quote's first line is the halt's own words and the period `need_in` adds.
                NeedKind::Paused => {
                    let first = need.quote.lines().next().unwrap_or_default();
                    (
                        Attention::Paused,
                        first.strip_suffix('.').unwrap_or(first).to_string(),
                    )
                }
            };
        }
        let reported = self.pi.program_status.as_ref();
        let stalled_at = if view.stall_abort_pending || self.pi.frozen {
            Some(self.trouble.stalled_at.unwrap_or(now.mono_ms))
        } else {
            self.pi.silent_for(now).map(|ms| now.mono_ms.saturating_sub(ms))
        };
        if let Some(at) = stalled_at {
            return (
                Attention::Stalled,
                format!("stalled {}", duration(now.mono_ms.saturating_sub(at))),
            );
        }
        let working = match self.pi.status {
            BridgeStatus::Connected => match view.agent {
                AgentState::Running => Some("working"),
                AgentState::Compacting => Some("compacting"),
                AgentState::Idle | AgentState::Unknown => None,
            },
            _ => reported
                .filter(|s| s.state == ProgramState::Working)
                .map(|_| "working"),
        };
        match working {
            Some(words) => (Attention::Working, words.into()),
            None => (Attention::Idle, "idle".into()),
        }
    }

    /// The stall limit the supervisor watches with, in ms.
    pub(super) fn stall_limit_ms(&self) -> u64 {
        self.setting(KeyId::PokeStreamStallSeconds) * 1000
    }
}
