//! The changes a client's overlay asked for (prefix+r), read by git off the loop's thread: a large
//! tree may take a while, and the loop must go on drawing and passing keys meanwhile.

use tokio::sync::mpsc::UnboundedSender;

use super::WorldEvent;
use crate::git::changes::{Bounds, of_session};

/// Reads the changes of `dir` against `base` on the blocking pool; they come back as
/// [`WorldEvent::Changes`] for `client`.
pub(super) fn read(events: &UnboundedSender<WorldEvent>, client: u64, dir: String, base: Option<String>) {
    let tx = events.clone();
    tokio::task::spawn_blocking(move || {
        let result = of_session(&dir, base.as_deref(), Bounds::VIEW);
        let _ = tx.send(WorldEvent::Changes { client, result });
    });
}
