//! What a server does with each saved session it finds, decided from the list and what the file
//! system says now, without I/O: relaunch it, resume its run, or leave it and say why. Nothing is
//! silently changed: a session whose directory is gone is not moved to another, and a run whose
//! conversation is gone is not told to carry on.

use super::saved_session::SavedSession;

/// The most sessions one server runs (each is a pi, a Node process of its own, on top of the
/// server's threads): a new one past it is refused, saved ones past it are not brought back (they
/// stay saved), and both are said.
pub const MAX_SESSIONS: usize = 64;
/// How many saved sessions start at once: enough to bring a long list back quickly, few enough
/// that the machine stays usable while their pis load.
pub const RESTORE_PARALLEL: usize = 4;

/// What the file system says of a saved session now (the binary looks: `server::restore_look`).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// `Err(why)`: its directory cannot be used (gone, not a directory, not readable).
    pub dir: Result<(), String>,
    /// Whether pi's session file is there; `None` when none was saved.
    pub session_file: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Relaunch it (resumed through the arbiter when `resume`); `note` is said when set.
    Start { resume: bool, note: Option<String> },
    /// Leave it: the note says why and how to go on by hand.
    Skip { note: String },
}

/// The plan for one saved session.
pub fn plan(saved: &SavedSession, found: &Found) -> Plan {
    let label = format!("{}:{}", saved.spec.number, saved.spec.name);
    if let Err(why) = &found.dir {
        let by_hand = match (&saved.session_file, found.session_file) {
            (Some(file), Some(true)) => format!(
                "; its conversation is kept in {file} (`pi --session {file}` goes on with it where \
                 you choose)"
            ),
            _ => String::new(),
        };
        return Plan::Skip {
            note: format!(
                "session {label} was not brought back: its directory {} cannot be used ({why}), and \
                 it is not started anywhere else{by_hand}",
                saved.spec.dir
            ),
        };
    }
    match (&saved.session_file, found.session_file) {
        (Some(file), Some(false)) => Plan::Start {
            resume: false,
            note: Some(format!(
                "session {label}: pi's session file {file} is gone, so pi starts a fresh \
                 conversation{}",
                if saved.mid_run {
                    "; the run that was under way cannot be carried on and was not resumed"
                } else {
                    ""
                }
            )),
        },
        (Some(_), _) => Plan::Start {
            resume: saved.mid_run,
            note: None,
        },
        (None, _) => {
            let argv = &saved.spec.argv;
            let dropped = crate::server::state::relaunch_argv(argv, None).len() < argv.len();
            Plan::Start {
                resume: false,
                note: dropped.then(|| {
                    format!(
                        "session {label}: pi had not yet said where its conversation is when the last \
                         server ended, so it starts afresh, without the prompt it was first given (pi \
                         may have sent it already, and it is never sent twice)"
                    )
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SessionSpec;

    fn saved(mid_run: bool, file: Option<&str>) -> SavedSession {
        SavedSession {
            spec: SessionSpec {
                number: 2,
                name: "api".into(),
                dir: "/w/api".into(),
                argv: Vec::new(),
                ..SessionSpec::default()
            },
            session_file: file.map(str::to_string),
            mid_run,
        }
    }

    fn found(dir: bool, file: Option<bool>) -> Found {
        Found {
            dir: if dir { Ok(()) } else { Err("it is gone".into()) },
            session_file: file,
        }
    }

    #[test]
    fn a_healthy_session_is_relaunched_and_a_run_resumed() {
        let s = saved(true, Some("/s/a.jsonl"));
        assert_eq!(
            plan(&s, &found(true, Some(true))),
            Plan::Start {
                resume: true,
                note: None
            }
        );
        let idle = saved(false, Some("/s/a.jsonl"));
        assert_eq!(
            plan(&idle, &found(true, Some(true))),
            Plan::Start {
                resume: false,
                note: None
            }
        );
    }

    /// Issue 21, item 4: not moved to another directory; said, with the way to go on by hand.
    #[test]
    fn a_session_whose_directory_is_gone_is_left_and_said() {
        let s = saved(true, Some("/s/a.jsonl"));
        let Plan::Skip { note } = plan(&s, &found(false, Some(true))) else {
            panic!("started elsewhere");
        };
        assert!(
            note.contains("2:api") && note.contains("/w/api") && note.contains("gone"),
            "{note}"
        );
        assert!(note.contains("pi --session /s/a.jsonl"), "{note}");
    }

    /// Simulation seed 4232: a session saved before pi named its conversation comes back without
    /// the prompt on its first command line, and says so; one without a prompt says nothing.
    #[test]
    fn a_session_whose_conversation_was_never_named_comes_back_without_its_first_prompt() {
        let mut s = saved(true, None);
        s.spec.argv = ["--", "--model", "m", "fix the bug"].map(String::from).to_vec();
        let Plan::Start { resume, note } = plan(&s, &found(true, None)) else {
            panic!("not started");
        };
        assert!(!resume);
        let note = note.expect("said");
        assert!(
            note.contains("2:api") && note.contains("without the prompt"),
            "{note}"
        );
        assert_eq!(
            crate::server::state::relaunch_argv(&s.spec.argv, None),
            ["--", "--model", "m"].map(String::from).to_vec()
        );
        s.spec.argv = ["--", "--model", "m"].map(String::from).to_vec();
        assert_eq!(
            plan(&s, &found(true, None)),
            Plan::Start {
                resume: false,
                note: None
            }
        );
    }

    /// Issue 21, item 8: a run whose conversation is gone is not told to carry on.
    #[test]
    fn a_missing_session_file_is_said_and_nothing_resumed() {
        let s = saved(true, Some("/s/a.jsonl"));
        let Plan::Start { resume, note } = plan(&s, &found(true, Some(false))) else {
            panic!("not started");
        };
        assert!(!resume);
        let note = note.expect("said");
        assert!(
            note.contains("/s/a.jsonl") && note.contains("fresh") && note.contains("not resumed"),
            "{note}"
        );
    }
}
