//! What every page hears besides its own session: the session list and every session's
//! notification. One connection of the web view subscribes to the server ([`Up::Subscribe`]): the
//! server tells it the list whenever it changes and each note as it comes, and every page hears
//! them from here, so twenty open pages cost the server one client and nothing while idle.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, watch};

use super::upstream::Upstream;
use pokeshell_core::wire::{Down, Listing, Up};

/// How long to wait before subscribing again after the connection ended.
const AGAIN: Duration = Duration::from_secs(1);
/// Notes a slow page may fall behind by before it misses some (it is told how many).
const NOTES_KEPT: usize = 64;

/// A session wants the user: its name as the user sees it ("3:api") and what happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub session: String,
    pub text: String,
}

/// What a page subscribes to.
#[derive(Clone)]
pub struct Feed {
    pub sessions: watch::Receiver<Arc<Vec<Listing>>>,
    notes: broadcast::Sender<Note>,
}

impl Feed {
    pub fn notes(&self) -> broadcast::Receiver<Note> {
        self.notes.subscribe()
    }
}

/// Subscribes, and again whenever the connection ends; the pages subscribe to the feed.
pub fn start() -> Feed {
    let (tx, rx) = watch::channel(Arc::new(Vec::new()));
    let (notes, _) = broadcast::channel(NOTES_KEPT);
    let feed = Feed {
        sessions: rx,
        notes: notes.clone(),
    };
    tokio::spawn(async move {
        loop {
            if let Err(e) = follow(&tx, &notes).await {
                eprintln!("pokeshell web: the session list: {e}");
            }
            if tx.is_closed() {
                return;
            }
            tokio::time::sleep(AGAIN).await;
        }
    });
    feed
}

async fn follow(
    tx: &watch::Sender<Arc<Vec<Listing>>>,
    notes: &broadcast::Sender<Note>,
) -> Result<(), String> {
    let mut up = Upstream::connect().await?;
    up.send(&Up::Subscribe).await?;
    loop {
        match up.next().await? {
            Some(Down::Listing { sessions: list }) => {
                tx.send_if_modified(|old| {
                    let changed = **old != list;
                    if changed {
                        *old = Arc::new(list);
                    }
                    changed
                });
            }
            Some(Down::Note { session, text }) => {
                // No page open: nobody to tell, and that is no error.
                let _ = notes.send(Note { session, text });
            }
            Some(_) => {}
            None => return Err("the server closed the connection".to_string()),
        }
    }
}
