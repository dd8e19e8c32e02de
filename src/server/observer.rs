//! The server's eye on one session's loop: a [`Layer`] that reports what `pokeshell ls`, the other
//! sessions' side panes and the saved session list need, when it changed (and at most a few times a
//! second), and keeps the notification command in step with the session's settings.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::UnboundedSender;

use super::remote_screen::NotifyTarget;
use super::serve::ServerMsg;
use crate::event_loop::Layer;
use crate::session::Session;
use crate::supervisor::Now;

/// Reports are compared this often at most.
const EVERY_MS: u64 = 250;

/// What a session tells the server about itself.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    pub brief: Option<crate::session::SessionBrief>,
    pub session_file: Option<String>,
    pub mid_run: bool,
}

pub struct Observer {
    pub number: u32,
    pub server: UnboundedSender<ServerMsg>,
    pub notify: Arc<Mutex<NotifyTarget>>,
    last: Option<Report>,
    checked_at: Option<u64>,
    /// The session's branch and changes, looked up off the loop.
    tree: crate::worktree::watch::TreeWatch,
}

impl Observer {
    pub fn new(number: u32, server: UnboundedSender<ServerMsg>, notify: Arc<Mutex<NotifyTarget>>) -> Self {
        Self {
            number,
            server,
            notify,
            last: None,
            checked_at: None,
            tree: Default::default(),
        }
    }
}

impl Layer for Observer {
    fn act(&mut self, now: Now, session: &Session) -> Vec<crate::session::Input> {
        if self
            .checked_at
            .is_some_and(|t| now.mono_ms.saturating_sub(t) < EVERY_MS)
        {
            return Vec::new();
        }
        self.checked_at = Some(now.mono_ms);
        let mut brief = session.brief(now);
        if let Some(tree) = self.tree.get(&brief.dir, now.mono_ms) {
            (brief.branch, brief.dirty) = (tree.branch, Some(tree.dirty));
        }
        let report = Report {
            brief: Some(brief),
            session_file: session.pi_session_file().map(str::to_string),
            mid_run: session.mid_run(),
        };
        if self.last.as_ref() != Some(&report) {
            self.last = Some(report.clone());
            let _ = self.server.send(ServerMsg::Report {
                number: self.number,
                report,
            });
        }
        if let Ok(mut t) = self.notify.lock() {
            t.command = session.notify_command();
        }
        Vec::new()
    }

    fn next_deadline(&self) -> Option<u64> {
        // Timers and tools move on by themselves: look again at least every second.
        self.checked_at.map(|t| t + 1_000)
    }
}
