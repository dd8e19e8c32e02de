//! The session list every page shows: one connection of the web view asks the server for it every
//! second and every page hears it when it changed, so twenty open pages cost one question a second.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::upstream::Upstream;
use crate::ipc::wire::{Down, Listing, Up};

const EVERY: Duration = Duration::from_secs(1);

pub type Sessions = watch::Receiver<Arc<Vec<Listing>>>;

/// Starts asking; the pages subscribe to the receiver.
pub fn start() -> Sessions {
    let (tx, rx) = watch::channel(Arc::new(Vec::new()));
    tokio::spawn(async move {
        loop {
            if let Err(e) = follow(&tx).await {
                eprintln!("pokeshell web: the session list: {e}");
            }
            if tx.is_closed() {
                return;
            }
            tokio::time::sleep(EVERY).await;
        }
    });
    rx
}

async fn follow(tx: &watch::Sender<Arc<Vec<Listing>>>) -> Result<(), String> {
    let mut up = Upstream::connect().await?;
    loop {
        up.send(&Up::List).await?;
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
                    break;
                }
                Some(_) => {}
                None => return Err("the server closed the connection".to_string()),
            }
        }
        tokio::time::sleep(EVERY).await;
    }
}
