//! The saved list's writer, off the server's key path: a thread of its own takes the newest list
//! asked for (lists asked for while it was writing are skipped: only the last one matters), writes
//! it in one durable step ([`crate::server::store::save`]) and tells the server's state which save
//! is on disk.

use std::path::PathBuf;
use std::sync::mpsc;

use tokio::sync::mpsc::UnboundedSender;

use pokeshell_core::server::state::ServerEvent;

use super::serve::ServerMsg;
use crate::server::store::{self, SavedSession};

pub struct Saver {
    tx: mpsc::Sender<(u64, Vec<SavedSession>)>,
}

impl Saver {
    /// `path`: `None` keeps nothing (no state directory); every save is then done at once.
    pub fn spawn(path: Option<PathBuf>, done: UnboundedSender<ServerMsg>) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<(u64, Vec<SavedSession>)>();
        std::thread::Builder::new()
            .name("save-sessions".to_string())
            .spawn(move || {
                while let Ok(mut job) = rx.recv() {
                    while let Ok(newer) = rx.try_recv() {
                        job = newer;
                    }
                    let (seq, list) = job;
                    if let Some(path) = &path
                        && let Err(e) = store::save(path, &list)
                    {
                        eprintln!("pokeshell server: cannot save the sessions: {e}");
                    }
                    if done.send(ServerEvent::Saved { seq }.into()).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Self { tx })
    }

    pub fn save(&self, seq: u64, list: Vec<SavedSession>) {
        let _ = self.tx.send((seq, list));
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc::unbounded_channel;

    use super::*;
    use pokeshell_core::spec::SessionSpec;

    fn list(n: u32) -> Vec<SavedSession> {
        vec![SavedSession {
            spec: SessionSpec {
                number: n,
                name: format!("s{n}"),
                dir: "/w".into(),
                argv: Vec::new(),
                ..SessionSpec::default()
            },
            session_file: None,
            mid_run: n % 2 == 1,
        }]
    }

    #[test]
    fn the_newest_list_is_written_and_every_save_up_to_it_is_answered() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("state").join("sessions.json");
        let (tx, mut rx) = unbounded_channel();
        let saver = Saver::spawn(Some(path.clone()), tx).expect("the thread");
        for seq in 1..=5 {
            saver.save(seq, list(seq as u32));
        }
        let mut last = 0;
        while last < 5 {
            match rx.blocking_recv() {
                Some(ServerMsg::Event(ServerEvent::Saved { seq })) => {
                    assert!(seq > last, "in order, none twice: {seq} after {last}");
                    last = seq;
                }
                other => panic!("not a save: {other:?}"),
            }
        }
        assert_eq!(
            store::read(&path).map_err(|p| p.to_string()),
            Ok(list(5)),
            "the newest list is on disk"
        );
    }
}
