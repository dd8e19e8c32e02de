//! A link from a push, answered: the session carries the person's answer out the way its keys and
//! the web view's buttons do (the manual poke, a stop, a message of theirs), and records it as their
//! own action (AWAY-U1), or records why it was refused (AWAY-U2).

use super::link::Purpose;
use super::{Effect, Session};
use crate::away::{Act, AwayAnswer, PushPolicy};
use crate::bridge::{Command, DeliverAs, SendUserMessage, UserRequest};
use crate::supervisor::ledger::rule;
use crate::supervisor::{self as sup, Action, AgentState, InputSource, LedgerKind, Now};
use crate::ui::theme::Tone;

impl Session {
    /// The push settings as this session's settings have them, in its time zone.
    pub fn push_policy(&self) -> PushPolicy {
        PushPolicy::from_settings(self.settings.get(), self.utc_offset_secs)
    }

    pub(super) fn on_away(&mut self, answer: AwayAnswer, now: Now, fx: &mut Vec<Effect>) {
        let act = answer.act;
        if let Some(why) = answer.refused {
            let reason = format!("a link from a push ({}) was refused: {why}", act.label());
            let actions =
                self.supervisor
                    .record_person(now, rule::AWAY_REFUSED, LedgerKind::Declined, reason, None);
            self.perform(actions, now, fx);
            return;
        }
        let sent = act.answer().map(str::to_string);
        let reason = format!(
            "you chose \u{201c}{}\u{201d} from a push about {}",
            act.label(),
            answer.about
        );
        let actions = self
            .supervisor
            .record_person(now, rule::AWAY_USED, LedgerKind::Action, reason, sent);
        self.perform(actions, now, fx);
        match act {
            Act::Continue | Act::ResumeNow => self.on_client_request(UserRequest::Poke, now, fx),
            Act::Stop => self.stop_from_afar(now, fx),
            Act::Yes | Act::No => {
                let text = act.answer().unwrap_or_default().to_string();
                self.answer_from_afar(text, now, fx);
            }
            // As the web view's buttons and the prefix keys answer a pause (GUARD-A1, GUARD-A2):
            // the supervisor records it as the person's own answer too.
            Act::Allow => self.on_client_request(UserRequest::GuardAllow { usd: None }, now, fx),
            Act::Leave => self.on_client_request(UserRequest::GuardLeave, now, fx),
        }
    }

    /// As Esc, from afar: a running turn is aborted, a planned resume is dropped; nothing resumes on
    /// its own until the person acts again.
    fn stop_from_afar(&mut self, now: Now, fx: &mut Vec<Effect>) {
        if self.supervisor.limit_wait_pending() {
            self.supervise(sup::Event::UserTyped, now, fx);
        }
        let view = self.supervisor_view(now);
        if matches!(view.agent, AgentState::Running | AgentState::Compacting) {
            self.perform(vec![Action::Abort], now, fx);
        }
        self.flash.show("Stopped from a push.".to_string(), Tone::Ok, now);
        fx.push(Effect::Redraw);
    }

    /// The person's own message, as if typed in pi: the supervisor hears that they took over.
    fn answer_from_afar(&mut self, text: String, now: Now, fx: &mut Vec<Effect>) {
        let command = Command::SendUserMessage(SendUserMessage {
            text: text.clone(),
            // Asked only while pi waits; were it busy meanwhile, it goes after the turn.
            deliver_as: Some(DeliverAs::FollowUp),
        });
        self.send(command, Purpose::Other("sending your answer"), fx);
        self.supervise(
            sup::Event::Input {
                source: InputSource::Interactive,
            },
            now,
            fx,
        );
        self.flash
            .show(format!("Your answer from a push: {text}"), Tone::Ok, now);
        fx.push(Effect::Redraw);
    }
}
