//! The server's eye on one session's loop: a [`Layer`] that tells the server's state what changed
//! as it changes (the brief `pokeshell ls` and the other sessions' side panes show, pi's session
//! file, whether a run is under way) and every notification, with the notification command the
//! session's settings name at that moment, and what it hears of the conversation (`talk`: prompts,
//! replies, tool calls, interventions, runs' ends) for the web view's conversation view. Nothing is
//! polled: the loop hands the layer each input and effect, and the layer looks again only after an
//! input that can change what it reports.

use tokio::sync::mpsc::UnboundedSender;

use super::serve::{ServerEvent, ServerMsg};
use crate::server::event_loop::Layer;
use pokeshell_core::drive::FromSession;
use pokeshell_core::server::state::Report;
use pokeshell_core::session::{Effect, Input, Session};
use pokeshell_core::supervisor::LedgerKind;
use pokeshell_core::supervisor::Now;
use pokeshell_core::talk::Heard;

/// Screen output alone rarely changes a report: after it, the layer looks at most this often.
const OUTPUT_EVERY_MS: u64 = 250;

pub struct Observer {
    number: u32,
    server: UnboundedSender<ServerMsg>,
    /// `pokeshell.notifyCommand` as the session's settings have it.
    command: String,
    last: Option<Report>,
    /// An input that may change the report came since the last look.
    dirty: bool,
    /// Screen output came since the last look.
    output: bool,
    looked_at: Option<u64>,
    /// The session's branch and changes, looked up off the loop.
    tree: crate::git::worktree::watch::TreeWatch,
    /// The conversation as heard so far (a run's cost, who wrote the next prompt).
    heard: Heard,
}

impl Observer {
    /// `command`: the notification command from the session's settings as it starts (a session
    /// brought back mid-run notifies as pi starts, before the layer first looks).
    pub fn new(number: u32, server: UnboundedSender<ServerMsg>, command: String) -> Self {
        Self {
            number,
            server,
            command,
            last: None,
            dirty: true,
            output: false,
            looked_at: None,
            tree: Default::default(),
            heard: Heard::default(),
        }
    }

    fn tell_said(&self, said: Option<pokeshell_core::talk::Said>) {
        if let Some(said) = said {
            let ev = ServerEvent::Talk {
                number: self.number,
                said: vec![said],
            };
            let _ = self.server.send(ev.into());
        }
    }
}

impl Layer for Observer {
    fn observe(&mut self, input: &Input) {
        match input {
            // Keys and the pane's own bytes say nothing of the run (program-status reports come as
            // inputs of their own).
            Input::Stdin { .. } | Input::InputIdle { .. } => {}
            Input::ChildOutput { .. } => self.output = true,
            Input::Bridge(pokeshell_core::bridge::BridgeEvent::Event { event, .. }) => {
                self.dirty = true;
                let said = self.heard.event(event);
                self.tell_said(said);
            }
            _ => self.dirty = true,
        }
        if changes_files(input) {
            self.tree.stir();
        }
    }

    fn observe_effect(&mut self, effect: &Effect) {
        if let Effect::Guard(note) = effect {
            let ev = ServerEvent::Guard {
                number: self.number,
                note: note.clone(),
            };
            let _ = self.server.send(ev.into());
        }
        if let Effect::Ledger(record) = effect {
            let said = self.heard.record(record);
            self.tell_said(said);
        }
        let event = match effect {
            Effect::Notify { text, bell, desktop } => ServerEvent::Notify {
                number: self.number,
                text: text.clone(),
                bell: *bell,
                desktop: *desktop,
                command: self.command.clone(),
            },
            Effect::Drive(out) => ServerEvent::Drive {
                number: self.number,
                out: out.clone(),
            },
            // pokeshell's own interventions, for `pokeshell events` (what agents did to the
            // session is said by the server itself).
            Effect::Ledger(r) if r.kind == LedgerKind::Action && !r.rule.starts_with("DRIVE-") => {
                ServerEvent::Drive {
                    number: self.number,
                    out: FromSession::Intervention {
                        rule: r.rule.to_string(),
                        text: r.reason.clone(),
                    },
                }
            }
            _ => return,
        };
        let _ = self.server.send(event.into());
    }

    fn act(&mut self, now: Now, session: &Session) -> Vec<Input> {
        let output_due = self.output
            && self
                .looked_at
                .is_none_or(|t| now.mono_ms.saturating_sub(t) >= OUTPUT_EVERY_MS);
        if !self.dirty && !output_due {
            return Vec::new();
        }
        (self.dirty, self.output) = (false, false);
        self.looked_at = Some(now.mono_ms);
        self.command = session.notify_command();
        let mut brief = session.brief(now);
        if let Some(look) = self.tree.get(&brief.dir, now.mono_ms) {
            (brief.branch, brief.dirty) = (look.state.branch, Some(look.state.dirty));
            brief.changes = Some(look.mark);
        }
        let mut report = Report {
            brief: Some(brief),
            base: session.base().map(str::to_string),
            real_dir: session.real_dir().map(str::to_string),
            session_file: session.pi_session_file().map(str::to_string),
            mid_run: session.mid_run(),
            drive: session.drive_marks(),
            at_ms: 0,
            need: session.need(now),
            finished: session.finished().clone(),
            push: session.push_policy(),
        };
        if self.last.as_ref() != Some(&report) {
            self.last = Some(report.clone());
            report.at_ms = now.wall_ms;
            let _ = self.server.send(
                ServerEvent::Report {
                    number: self.number,
                    report,
                }
                .into(),
            );
        }
        Vec::new()
    }

    fn next_deadline(&self) -> Option<u64> {
        self.tree.next_deadline()
    }
}

/// Whether an input tells of something that may have changed the session's files: a tool ended,
/// a run ended or settled, pi started or ended. The watch then looks once more after it, so a
/// Changes view sees the last change of a run even when the session goes quiet.
fn changes_files(input: &Input) -> bool {
    use pokeshell_core::bridge::{BridgeEvent, PiEvent};
    match input {
        Input::Bridge(BridgeEvent::Event { event, .. }) => matches!(
            event,
            PiEvent::ToolExecutionEnd(_) | PiEvent::AgentEnd(_) | PiEvent::AgentSettled(_)
        ),
        Input::ChildStarted { .. } | Input::ChildExited { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
