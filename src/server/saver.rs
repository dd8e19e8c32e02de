//! The saved list's writer, off the server's key path: a thread of its own takes the newest list
//! asked for (lists asked for while it was writing are skipped: only the last one matters), writes
//! it in one durable step ([`crate::server_store::save`]) and tells the server's state which save
//! is on disk.

use std::path::PathBuf;
use std::sync::mpsc;

use tokio::sync::mpsc::UnboundedSender;

use super::state::ServerEvent;
use crate::server_store::{self, SavedSession};

pub struct Saver {
    tx: mpsc::Sender<(u64, Vec<SavedSession>)>,
}

impl Saver {
    /// `path`: `None` keeps nothing (no state directory); every save is then done at once.
    pub fn spawn(path: Option<PathBuf>, done: UnboundedSender<ServerEvent>) -> std::io::Result<Self> {
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
                        && let Err(e) = server_store::save(path, &list)
                    {
                        eprintln!("pokeshell server: cannot save the sessions: {e}");
                    }
                    if done.send(ServerEvent::Saved { seq }).is_err() {
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
