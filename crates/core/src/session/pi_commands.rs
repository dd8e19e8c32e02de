//! The pi commands the bridge registers (`/poke`, `/poke status|on|off`, `/handoff [focus]`,
//! `/wakeups`, `/wakeups cancel ID`): each takes the path its key or dialog takes, and the text the
//! user would have read in pokeshell goes back to pi as the command's answer.

use super::link::Purpose;
use super::{Effect, Session};
use crate::bridge::{Command, NotifyLevel as WireLevel, UserCommand, UserRequest};
use crate::config::{Change, KeyId, SettingValue};
use crate::format::{clock, duration};
use crate::supervisor::{self as sup, Action, NotifyLevel, Now};

impl Session {
    pub(super) fn on_user_command(&mut self, command: UserCommand, now: Now, fx: &mut Vec<Effect>) {
        let (text, level) = self.carry_out(command.request, now, fx);
        let answer = Command::CommandAnswer {
            request_id: command.request_id,
            text,
            level,
        };
        self.send(answer, Purpose::Other("answering a pi command"), fx);
    }

    /// The same request from a client without prefix keys (the web view): what it did shows in
    /// the footer, as for the key.
    pub(super) fn on_client_request(&mut self, request: UserRequest, now: Now, fx: &mut Vec<Effect>) {
        let (text, level) = self.carry_out(request, now, fx);
        let tone = match level {
            WireLevel::Info => crate::ui::theme::Tone::Ok,
            WireLevel::Warning => crate::ui::theme::Tone::Warn,
            WireLevel::Error => crate::ui::theme::Tone::Error,
        };
        self.flash.show(text, tone, now);
        fx.push(Effect::Redraw);
    }

    fn carry_out(&mut self, request: UserRequest, now: Now, fx: &mut Vec<Effect>) -> (String, WireLevel) {
        match request {
            UserRequest::Poke => self.supervise_told(sup::Event::ManualPoke, now, fx),
            UserRequest::Handoff { focus } => {
                let focus = focus.filter(|f| !f.trim().is_empty());
                self.supervise_told(sup::Event::ManualHandoff { focus }, now, fx)
            }
            UserRequest::PokeStatus => (self.status_text(now), WireLevel::Info),
            UserRequest::PokeOn => self.switch_supervision(true, now, fx),
            UserRequest::PokeOff => self.switch_supervision(false, now, fx),
            UserRequest::Wakeups => (self.wakeups_text(now), WireLevel::Info),
            UserRequest::WakeupCancel { id } => self.supervise_told(sup::Event::CancelWakeup { id }, now, fx),
            UserRequest::GuardAllow { usd } => self.supervise_told(sup::Event::GuardAllow { usd }, now, fx),
            UserRequest::GuardLeave => self.supervise_told(sup::Event::GuardLeave, now, fx),
            UserRequest::Unknown => (
                "This pokeshell does not know that command; the bridge is newer than pokeshell.".into(),
                WireLevel::Warning,
            ),
        }
    }

    /// Feeds the supervisor as the key would, and returns what it told the user (its notices).
    fn supervise_told(&mut self, event: sup::Event, now: Now, fx: &mut Vec<Effect>) -> (String, WireLevel) {
        let actions = self.supervisor.handle(event, now);
        let told = told(&actions);
        self.perform(actions, now, fx);
        fx.push(Effect::Redraw);
        told
    }

    /// `poke.enabled` through the settings dialog's path: the session layer, saved in pi's session.
    fn switch_supervision(&mut self, on: bool, now: Now, fx: &mut Vec<Effect>) -> (String, WireLevel) {
        let was = self.settings.get().effective().poke.enabled;
        let change = Change {
            key: KeyId::PokeEnabled,
            value: SettingValue::Bool(on),
        };
        self.apply_changes(&[change], now, fx);
        let word = if on { "on" } else { "off" };
        let text = if was == on {
            format!("pokeshell's supervision was already {word} (p:{word}).")
        } else {
            format!("pokeshell's supervision is now {word} (p:{word}), for this session.")
        };
        (text, WireLevel::Info)
    }

    /// What prefix+i shows live, one `label: value` line each.
    fn status_text(&self, now: Now) -> String {
        let on = if self.settings.get().effective().poke.enabled {
            "on"
        } else {
            "off"
        };
        let mut lines = vec!["pokeshell status".to_string(), format!("Supervision: {on}")];
        lines.extend(
            self.live_lines(now)
                .into_iter()
                .map(|l| format!("{}: {}", l.label, l.value)),
        );
        lines.join("\n")
    }

    fn wakeups_text(&self, now: Now) -> String {
        let wakeups = self.supervisor_view(now).wakeups;
        if wakeups.is_empty() {
            return "No wakeups are pending.".into();
        }
        let mut lines = vec![format!("{} pending wakeup(s):", wakeups.len())];
        for w in wakeups {
            let when = match w.held {
                Some(why) => format!("due now, waiting: {why}"),
                None => format!(
                    "due in {} (at {})",
                    duration(w.remaining_ms),
                    clock(w.fire_at_wall_ms, self.utc_offset_secs)
                ),
            };
            let reason = if w.reason.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", w.reason.trim())
            };
            lines.push(format!("{} {when}{reason}", w.id));
        }
        lines.push("/wakeups cancel ID cancels one.".into());
        lines.join("\n")
    }
}

/// The notices among `actions`, joined, at the level of the gravest one.
fn told(actions: &[Action]) -> (String, WireLevel) {
    let notices: Vec<(NotifyLevel, &str)> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Notify { level, text, .. } => Some((*level, text.as_str())),
            _ => None,
        })
        .collect();
    if notices.is_empty() {
        return ("Done.".into(), WireLevel::Info);
    }
    let level = notices
        .iter()
        .map(|(level, _)| wire_level(*level))
        .max_by_key(|level| match level {
            WireLevel::Info => 0,
            WireLevel::Warning => 1,
            WireLevel::Error => 2,
        })
        .unwrap_or_default();
    let text = notices.iter().map(|(_, t)| *t).collect::<Vec<_>>().join("\n");
    (text, level)
}

fn wire_level(level: NotifyLevel) -> WireLevel {
    match level {
        NotifyLevel::Info | NotifyLevel::Success => WireLevel::Info,
        NotifyLevel::Warning => WireLevel::Warning,
        NotifyLevel::Error => WireLevel::Error,
    }
}

#[cfg(test)]
mod tests;
