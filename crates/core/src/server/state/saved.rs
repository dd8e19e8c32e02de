//! The saved list as the server's state keeps it: what should be on disk, which save holds it,
//! answers that wait for it, and the sessions a previous server left.

use crate::server::restore_plan::{self, Found};

use super::{DETACHED_SIZE, Down, Now, SavedSession, ServerEffect, ServerState, SessionSpec, SessionStart};

/// How many sessions left out of a restore are named in its message.
const NAMED: usize = 8;

impl ServerState {
    /// The list as it should be on disk now.
    pub(super) fn saved_list(&self) -> Vec<SavedSession> {
        self.table
            .entries()
            .map(|e| SavedSession {
                spec: e.spec.clone(),
                session_file: e.session_file.clone(),
                mid_run: e.mid_run,
            })
            .chain(self.left_over.iter().cloned())
            .collect()
    }

    /// Asks for the list to be saved if it changed; returns the save that holds it. While shutting
    /// down, the list saved at the signal stands: a run pi gives up as it is ended is still the run
    /// the next server must resume.
    pub(super) fn save(&mut self, fx: &mut Vec<ServerEffect>) -> u64 {
        if self.shutting_down || !self.restored {
            return self.save_seq;
        }
        let list = self.saved_list();
        if self.saved.as_ref() != Some(&list) {
            self.save_seq += 1;
            self.saved = Some(list.clone());
            fx.push(ServerEffect::SaveList {
                seq: self.save_seq,
                list,
            });
        }
        self.save_seq
    }

    /// Tells client `id` once save `seq` is on disk.
    pub(super) fn tell_after_save(&mut self, seq: u64, id: u64, down: Down, fx: &mut Vec<ServerEffect>) {
        if seq <= self.saved_seq {
            fx.push(ServerEffect::Tell { id, down });
        } else {
            self.after_save.push((seq, id, down));
        }
    }

    /// Brings back the sessions a previous server left, [`restore_plan::RESTORE_PARALLEL`] at a
    /// time, at most [`restore_plan::MAX_SESSIONS`] of them.
    pub(super) fn restore(
        &mut self,
        saved: Vec<(SavedSession, Found)>,
        env: Vec<(String, String)>,
        now: Now,
        fx: &mut Vec<ServerEffect>,
    ) {
        self.env = env;
        for (s, found) in saved {
            // A session that cannot come back as it was is said, never moved elsewhere or resumed
            // into an empty conversation.
            let (resume, note) = match restore_plan::plan(&s, &found) {
                restore_plan::Plan::Start { resume, note } => (resume, note),
                restore_plan::Plan::Skip { note } => {
                    self.say(note, fx);
                    continue;
                }
            };
            if self.table.len() >= restore_plan::MAX_SESSIONS {
                self.left_over.push(s);
                continue;
            }
            let argv = relaunch_argv(&s.spec.argv, s.session_file.as_deref());
            let number = self.table.restore(
                s.spec.number,
                &s.spec.name,
                &s.spec.dir,
                argv.clone(),
                now.wall_ms,
            );
            let name = self
                .table
                .get(number)
                .map(|e| e.spec.name.clone())
                .unwrap_or_default();
            if let Some(e) = self.table.get_mut(number) {
                // Until the relaunched pi says otherwise: a server that ends before then must not
                // forget the run.
                e.session_file = s.session_file.clone();
                e.mid_run = resume;
                e.spec.base = s.spec.base.clone().filter(|b| crate::diff::is_commit_id(b));
                e.spec.real_dir = s.spec.real_dir.clone();
                // Started by an agent: it still counts against the agents' bound.
                e.spec.parent = s.spec.parent.clone();
            }
            let note = match (note, renamed(&s.spec, &name)) {
                (Some(note), Some(renamed)) => Some(format!("{note}; {renamed}")),
                (note, renamed) => note.or(renamed),
            };
            if let Some(note) = note {
                self.say(note.clone(), fx);
                // In the session's footer too, for whoever looks at it first.
                self.footer_notes.insert(number, note);
            }
            let start = SessionStart {
                spec: SessionSpec {
                    number,
                    name,
                    dir: s.spec.dir.clone(),
                    argv,
                    base: s.spec.base.clone().filter(|b| crate::diff::is_commit_id(b)),
                    real_dir: s.spec.real_dir.clone(),
                    env: self.env.clone(),
                    resume,
                    parent: s.spec.parent.clone(),
                    prompted: false,
                },
                cols: DETACHED_SIZE.0,
                rows: DETACHED_SIZE.1,
                caps_now: Some(Vec::new()),
            };
            self.queue_restore(start, fx);
        }
        if !self.left_over.is_empty() {
            // Named up to a few: a list of a thousand is not read.
            let mut names: Vec<String> = self
                .left_over
                .iter()
                .take(NAMED)
                .map(|s| format!("{}:{} in {}", s.spec.number, s.spec.name, s.spec.dir))
                .collect();
            if self.left_over.len() > NAMED {
                names.push(format!("and {} more", self.left_over.len() - NAMED));
            }
            self.say(
                format!(
                    "{} saved sessions were not brought back, as a server runs at most {} sessions: \
                     {}. They stay saved and come back with a later server once fewer run",
                    self.left_over.len(),
                    restore_plan::MAX_SESSIONS,
                    names.join(", ")
                ),
                fx,
            );
        }
        self.restored = true;
        fx.push(ServerEffect::Restoring(self.restoring.len() as u32));
        self.save(fx);
    }
}

/// What is said of a saved session that comes back under another name than it was saved with: a
/// name from an older pokeshell that no session may have now (a `:` in it, issue 34), or one taken.
fn renamed(saved: &SessionSpec, name: &str) -> Option<String> {
    if saved.name == name {
        return None;
    }
    let why = if saved.name.contains(crate::safe_text::NOT_IN_NAMES) {
        "a name may not hold `:` (`attach DEST:NAME` reads what comes before it as another machine)"
    } else {
        "its name could not be used as it was"
    };
    Some(format!(
        "session {}:{} came back named {name}: {why}",
        saved.number, saved.name
    ))
}

/// A pokeshell command line without pi's arguments (those after `--`).
pub(crate) fn options_only(argv: &[String]) -> Vec<String> {
    argv.iter().take_while(|a| *a != "--").cloned().collect()
}

/// The command line that brings a saved session back: the same pokeshell options, pi's own options,
/// and pi's session file in place of whatever chose the session before (messages are not sent
/// again).
pub fn relaunch_argv(argv: &[String], session_file: Option<&str>) -> Vec<String> {
    if !argv.iter().any(|a| a == "--") {
        return argv.to_vec();
    }
    let pi_args: Vec<String> = argv.iter().skip_while(|a| *a != "--").skip(1).cloned().collect();
    let Some(file) = session_file else {
        // A saved session's pi was always started: it may have sent its messages already, though
        // it had not said where its conversation is (simulation seed 4232: a server killed in that
        // moment brought the session back with its first prompt, which reached the model twice).
        let mut out = options_only(argv);
        out.push("--".to_string());
        out.extend(without_messages(&pi_args));
        return out;
    };
    let mut out = options_only(argv);
    out.push("--".to_string());
    out.extend(crate::session::relaunch_args(&pi_args, file));
    out
}

/// pi's arguments without the messages and `@file` arguments of its first command line (options
/// and their values stay, those that choose a session included).
fn without_messages(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if crate::pi_args::TAKES_NEXT.contains(&arg.as_str()) && i + 1 < args.len() {
            out.extend([arg.clone(), args[i + 1].clone()]);
            i += 2;
            continue;
        }
        if arg.starts_with('-') {
            out.push(arg.clone());
        }
        i += 1;
    }
    out
}
