//! How many sessions agents may start (`pokeshell.maxAgentSessions`), read from the global settings
//! when the server starts and again every few seconds in a blocking task of its own (never on the
//! way of a key or a frame), so that a change applies without a restart. The core checks it
//! (docs/driving.md, "Bounds").

use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use super::serve::{ServerEvent, ServerMsg};
use pokeshell_core::config::KeyId;

/// How often the setting is read again.
const EVERY: Duration = Duration::from_secs(5);

/// The bound as the global settings have it now (the default when they cannot be read).
fn read() -> usize {
    let setting = crate::cli::Cli::try_parse_from_argv(&[])
        .ok()
        .and_then(|cli| crate::cli::launch::settings_here(&cli).ok())
        .and_then(|s| s.get(KeyId::MaxAgentSessions).as_int());
    setting
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(pokeshell_core::drive::DEFAULT_AGENT_SESSIONS)
}

/// Tells the core the bound now, and again whenever it changed.
pub fn spawn_reader(tx: UnboundedSender<ServerMsg>) {
    tokio::spawn(async move {
        let mut told = None;
        loop {
            if let Ok(bound) = tokio::task::spawn_blocking(read).await
                && told != Some(bound)
            {
                told = Some(bound);
                if tx.send(ServerEvent::DriveBound(bound).into()).is_err() {
                    return;
                }
            }
            tokio::time::sleep(EVERY).await;
        }
    });
}
