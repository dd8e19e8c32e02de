//! The server's sessions on disk: saved whenever the list, a pi session file or a run's state
//! changes, so that a server started after this one ended (killed, crashed, the machine rebooted)
//! relaunches each pi on its session file and resumes the runs that were under way.

use std::sync::Arc;

use super::restore_plan::{self, MAX_SESSIONS, RESTORE_PARALLEL};
use super::serve::{Running, Server, ServerMsg};
use super::session_thread::{self, SessionStart};
use crate::cli::Cli;
use crate::event_loop::WorldEvent;
use crate::server_store::{self, SavedSession};

/// The command line that brings a saved session back: the same pokeshell options, pi's own options,
/// and pi's session file in place of whatever chose the session before (messages are not sent
/// again).
pub fn relaunch_argv(argv: &[String], session_file: Option<&str>) -> Vec<String> {
    let Some(file) = session_file else {
        return argv.to_vec();
    };
    let pi_args: Vec<String> = argv.iter().skip_while(|a| *a != "--").skip(1).cloned().collect();
    let mut out = super::requests::options_only(argv);
    out.push("--".to_string());
    out.extend(crate::session::relaunch_args(&pi_args, file));
    out
}

impl Server {
    pub(super) fn save(&self) {
        let Some(path) = &self.store else {
            return;
        };
        let list: Vec<SavedSession> = self
            .table
            .entries()
            .map(|e| SavedSession {
                number: e.number,
                name: e.name.clone(),
                dir: e.dir.clone(),
                args: e.argv.clone(),
                command: Cli::try_parse_from_argv(&e.argv).ok().and_then(|c| c.command),
                session_file: e.session_file.clone(),
                mid_run: e.mid_run,
            })
            .collect();
        if let Err(e) = server_store::save(path, &list) {
            eprintln!("pokeshell server: cannot save the sessions: {e}");
        }
    }

    /// Brings back the sessions a previous server left, in the background: each is planned here,
    /// its number and name kept in the table at once (`ls` shows it starting), and started on a
    /// task of its own, a few at a time; the server answers its clients meanwhile. Each start comes
    /// back as [`ServerMsg::Restored`].
    pub(super) fn restore_saved(&mut self) {
        let Some(path) = self.store.clone() else {
            return;
        };
        let mut saved = match server_store::read(&path) {
            Ok(s) => s,
            Err(problem) => {
                let settled = server_store::settle(&path, &problem);
                if !settled.may_save {
                    self.store = None;
                }
                self.news.say(settled.message);
                return;
            }
        };
        if saved.len() > MAX_SESSIONS {
            let left: Vec<String> = saved[MAX_SESSIONS..]
                .iter()
                .map(|s| format!("{}:{} in {}", s.number, s.name, s.dir))
                .collect();
            self.news.say(format!(
                "{} saved sessions were not brought back: a server runs at most {MAX_SESSIONS} \
                 sessions (they were: {})",
                left.len(),
                left.join(", ")
            ));
            saved.truncate(MAX_SESSIONS);
        }
        let env: Vec<(String, String)> = std::env::vars().collect();
        let permits = Arc::new(tokio::sync::Semaphore::new(RESTORE_PARALLEL));
        super::restoring::begin(saved.len());
        for s in saved {
            let (resume, note) = match restore_plan::plan(&s, &restore_plan::Found::look(&s)) {
                restore_plan::Plan::Start { resume, note } => {
                    // Said now, to the first client, rather than when the start comes back.
                    if let Some(note) = &note {
                        self.news.say(note.clone());
                    }
                    (resume, note)
                }
                restore_plan::Plan::Skip { note } => {
                    self.news.say(note);
                    super::restoring::one_done();
                    continue;
                }
            };
            let argv = relaunch_argv(&s.args, s.session_file.as_deref());
            let number = self
                .table
                .restore(s.number, &s.name, &s.dir, argv.clone(), super::serve::wall_ms());
            let name = self.table.get(number).map(|e| e.name.clone()).unwrap_or_default();
            if let Some(e) = self.table.get_mut(number) {
                // Until the relaunched pi says otherwise: a server that ends before then must not
                // forget the run.
                e.session_file = s.session_file.clone();
                e.mid_run = resume;
            }
            let start = SessionStart {
                number,
                name,
                dir: s.dir.clone(),
                argv,
                env: env.clone(),
                cols: super::serve::DETACHED_SIZE.0,
                rows: super::serve::DETACHED_SIZE.1,
                caps_now: Some(Vec::new()),
                resume,
            };
            let (me, permits) = (self.me.clone(), permits.clone());
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await;
                let ready = session_thread::spawn(start, me.clone()).await;
                let _ = me.send(ServerMsg::Restored { number, ready, note });
            });
        }
    }

    /// A saved session's start came back.
    pub(super) fn on_restored(
        &mut self,
        number: u32,
        ready: Result<session_thread::Ready, String>,
        note: Option<String>,
    ) {
        super::restoring::one_done();
        match ready {
            Ok((tx, input_queued)) => {
                if self.shutting_down {
                    let _ = tx.send(WorldEvent::Signal(crate::event_loop::Signal::Term));
                }
                self.sessions.insert(
                    number,
                    Running {
                        tx,
                        input_queued,
                        clients: Default::default(),
                    },
                );
                if let Some(note) = note {
                    // In the session's footer too, for whoever looks at it first.
                    self.to_session(number, WorldEvent::Notice(note));
                }
            }
            Err(e) => {
                let label = self.label(number);
                self.news
                    .say(format!("session {label} could not be brought back: {e}"));
                self.table.remove(number);
            }
        }
        // Whoever waited for this session: attached now, or told it did not come back.
        let (now, later): (Vec<_>, Vec<_>) = self.awaiting.drain(..).partition(|(_, n)| *n == number);
        self.awaiting = later;
        for (id, _) in now {
            if self.clients.contains_key(&id) {
                self.attach(id, number);
            }
        }
        self.share_briefs();
        if !self.shutting_down {
            self.save();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_relaunch_keeps_the_options_and_resumes_the_session_file() {
        let argv = v(&["--pi", "/p/pi", "--", "--model", "m", "-c", "fix it"]);
        assert_eq!(
            relaunch_argv(&argv, Some("/s/1.jsonl")),
            v(&["--pi", "/p/pi", "--", "--model", "m", "--session", "/s/1.jsonl"])
        );
        assert_eq!(
            relaunch_argv(&argv, None),
            argv,
            "without a file: as it was started"
        );
    }
}
