//! Sessions and who follows them: starting a session for a client, a client following a session
//! (and leaving it).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use tokio::sync::mpsc::unbounded_channel;

use super::conn::ConnCmd;
use super::serve::{DETACHED_SIZE, Running, Server, wall_ms};
use super::session_thread::{self, SessionStart};
use super::wire::Down;
use crate::event_loop::{ClientEvent, ClientLink, WorldEvent};

impl Server {
    /// Starts a session for client `id` (its size, environment and terminal) in `dir`.
    pub(super) async fn create(
        &mut self,
        id: u64,
        name: Option<&str>,
        dir: &str,
        argv: Vec<String>,
    ) -> Result<u32, String> {
        if self.table.entries().count() >= super::restore_plan::MAX_SESSIONS {
            return Err(format!(
                "this server already runs {} sessions, the most it runs; end one (`pokeshell kill`) first",
                super::restore_plan::MAX_SESSIONS
            ));
        }
        let meta = std::fs::metadata(dir).map_err(|e| format!("{dir}: {e}"))?;
        if !meta.is_dir() {
            return Err(format!("{dir} is not a directory"));
        }
        let (cols, rows, env, waiting) = self
            .clients
            .get(&id)
            .map(|c| {
                (
                    c.cols,
                    c.rows,
                    c.env.clone(),
                    c.caps_pending || !c.caps.is_empty(),
                )
            })
            .unwrap_or((DETACHED_SIZE.0, DETACHED_SIZE.1, Vec::new(), false));
        // A client without a terminal (`new -d`) brings no answers: pi's queries are answered at
        // once from the last terminal seen, rather than held until someone attaches.
        let caps_now = (!waiting).then(|| self.last_caps.clone());
        let env = if env.is_empty() {
            std::env::vars().collect()
        } else {
            env
        };
        let number = self.table.add(name, dir, argv.clone(), wall_ms())?;
        let name = self.table.get(number).map(|e| e.name.clone()).unwrap_or_default();
        let start = SessionStart {
            number,
            name,
            dir: dir.to_string(),
            argv,
            env,
            cols,
            rows,
            caps_now,
            resume: false,
        };
        match self.start(start).await {
            Ok(()) => {
                self.save();
                Ok(number)
            }
            Err(e) => {
                self.table.remove(number);
                Err(e)
            }
        }
    }

    /// Starts a session's thread and keeps it among the running ones.
    pub(super) async fn start(&mut self, start: SessionStart) -> Result<(), String> {
        let number = start.number;
        let (tx, input_queued) = session_thread::spawn(start, self.me.clone()).await?;
        self.sessions.insert(
            number,
            Running {
                tx,
                input_queued,
                clients: BTreeSet::new(),
            },
        );
        Ok(())
    }

    /// Client `id` follows session `n` from now on (and leaves the one it followed).
    pub(super) fn attach(&mut self, id: u64, n: u32) {
        if !self.sessions.contains_key(&n) {
            if super::restoring::pending() > 0 && self.table.get(n).is_some() {
                // Still being brought back: attached as soon as it is up (the client has a deadline).
                self.awaiting.push((id, n));
                return;
            }
            self.tell(
                id,
                Down::Error {
                    message: format!("session {} is not running", self.label(n)),
                },
            );
            return;
        }
        self.leave(id);
        let Some(c) = self.clients.get_mut(&id) else {
            return;
        };
        c.session = Some(n);
        let (out_tx, out_rx) = unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let input_queued = self
            .sessions
            .get(&n)
            .map(|run| run.input_queued.clone())
            .unwrap_or_default();
        let _ = c.ctl.send(ConnCmd::Follow {
            out: out_rx,
            queued: queued.clone(),
            input_queued,
        });
        let link = ClientLink {
            tx: out_tx,
            cols: c.cols,
            rows: c.rows,
            queued,
        };
        let caps = if c.caps_pending {
            None
        } else if c.caps.is_empty() {
            Some(self.last_caps.clone())
        } else {
            Some(c.caps.clone())
        };
        self.table.touch(n);
        if let Some(run) = self.sessions.get_mut(&n) {
            run.clients.insert(id);
            let _ = run
                .tx
                .send(WorldEvent::Client(ClientEvent::Attach { id, link, caps }));
        }
        self.share_briefs();
        let label = self.label(n);
        self.tell(id, Down::Attached { name: label });
    }

    /// Client `id` stops following its session, if it follows one.
    pub(super) fn leave(&mut self, id: u64) {
        let Some(c) = self.clients.get_mut(&id) else {
            return;
        };
        let Some(n) = c.session.take() else {
            return;
        };
        let _ = c.ctl.send(ConnCmd::Unfollow);
        if let Some(run) = self.sessions.get_mut(&n) {
            run.clients.remove(&id);
            let _ = run.tx.send(WorldEvent::Client(ClientEvent::Detach { id }));
        }
        self.share_briefs();
    }
}
