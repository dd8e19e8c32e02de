//! The session among the others: the keys that detach, switch or start a session (carried out by the
//! server as a [`WorkspaceRequest`]), the switcher and the new-session prompt, and the side pane's
//! list of every session.

use crate::input::key::{KeyCode, KeyEvent};

use super::keyboards::ClientId;
use super::{Effect, Overlay, Session, SessionBrief};
use crate::supervisor::Now;
use crate::ui::commands::CommandId;
use crate::ui::prompt::{LinePrompt, PromptOutcome};
use crate::ui::side::Section;
use crate::ui::side_sessions;
use crate::ui::switcher::{Switcher, SwitcherOutcome};
use crate::ui::theme::Tone;

/// What only the server holding every session can do.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkspaceRequest {
    /// This terminal lets go; every session keeps running.
    Detach,
    /// Show the session with this number.
    SwitchTo(u32),
    /// Start pi in `dir` as a new session and show it.
    NewSession { dir: String },
}

const NEW_SESSION_TITLE: &str = "New session";
const NEW_SESSION_HINT: &str = "Directory to start pi in. Enter starts it · Esc cancels";

impl Session {
    /// The session commands after the prefix (`key` is the key that chose `id`).
    pub(super) fn workspace_command(
        &mut self,
        client: ClientId,
        id: CommandId,
        key: &KeyEvent,
        now: Now,
        fx: &mut Vec<Effect>,
    ) {
        match id {
            CommandId::Detach => fx.push(Effect::Workspace {
                client,
                req: WorkspaceRequest::Detach,
            }),
            CommandId::SwitchTo => {
                let number = match key.code {
                    KeyCode::Char(c) => c.to_digit(10).unwrap_or(0),
                    _ => 0,
                };
                if self.briefs_now(now).iter().any(|b| b.number == number) {
                    fx.push(Effect::Workspace {
                        client,
                        req: WorkspaceRequest::SwitchTo(number),
                    });
                } else {
                    self.flash.show(format!("no session {number}"), Tone::Warn, now);
                }
            }
            CommandId::Switcher => {
                let switcher = Switcher::new(self.briefs_now(now), self.opts.spec.number);
                self.keys
                    .set_overlay(client, Some(Overlay::Switcher(Box::new(switcher))));
            }
            CommandId::NewSession => {
                let prompt = LinePrompt::with_text(NEW_SESSION_TITLE, NEW_SESSION_HINT, &self.opts.spec.dir);
                self.keys.set_overlay(client, Some(Overlay::NewSession(prompt)));
            }
            _ => {}
        }
    }

    /// A key for the switcher or the new-session prompt.
    pub(super) fn workspace_overlay_key(
        &mut self,
        client: ClientId,
        key: KeyEvent,
        now: Now,
        fx: &mut Vec<Effect>,
    ) {
        match self.keys.overlay_mut(client) {
            Some(Overlay::Switcher(s)) => match s.handle_key(key) {
                SwitcherOutcome::None => {}
                SwitcherOutcome::Close => self.keys.set_overlay(client, None),
                SwitcherOutcome::Switch(number) => {
                    self.keys.set_overlay(client, None);
                    fx.push(Effect::Workspace {
                        client,
                        req: WorkspaceRequest::SwitchTo(number),
                    });
                }
            },
            Some(Overlay::NewSession(p)) => match p.handle_key(key) {
                PromptOutcome::None => {}
                PromptOutcome::Cancel => self.keys.set_overlay(client, None),
                // The prompt stays open: a session needs somewhere to run.
                PromptOutcome::Submit(dir) if dir.is_empty() => {
                    self.flash
                        .show("type the new session's directory", Tone::Warn, now);
                }
                PromptOutcome::Submit(dir) => {
                    self.keys.set_overlay(client, None);
                    fx.push(Effect::Workspace {
                        client,
                        req: WorkspaceRequest::NewSession { dir },
                    });
                }
            },
            _ => {}
        }
    }

    /// Every session's brief as the server last sent them, this one's replaced by its own at `now`
    /// (and added if the server has not sent any yet).
    pub(super) fn briefs_now(&self, now: Now) -> Vec<SessionBrief> {
        let mut own = self.brief(now);
        if let Some(server) = self.sessions.iter().find(|b| b.number == own.number) {
            own.attached = server.attached;
            // Filled by the server's observer, not by the session.
            (own.branch, own.dirty) = (server.branch.clone(), server.dirty);
        }
        let mut briefs: Vec<SessionBrief> = self
            .sessions
            .iter()
            .filter(|b| b.number != own.number)
            .cloned()
            .collect();
        briefs.push(own);
        briefs
    }

    /// The side pane's session list, when there are several sessions.
    pub(super) fn sessions_section(&self, now: Now) -> Option<Section> {
        if self.sessions.len() < 2 {
            return None;
        }
        let width = self.layout.side_width().saturating_sub(3) as usize;
        side_sessions::section(&self.briefs_now(now), self.opts.spec.number, now.wall_ms, width)
    }

    /// The list's tool timers count seconds: the next whole second while one runs (mono ms).
    pub(super) fn sessions_deadline(&self, now: Now) -> Option<u64> {
        let timers =
            self.side_visible() && self.sessions.len() >= 2 && self.sessions.iter().any(|b| b.tool.is_some());
        timers.then(|| (now.mono_ms / 1000 + 1) * 1000)
    }
}
