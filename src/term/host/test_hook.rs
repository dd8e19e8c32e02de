//! The test hook `POKESHELL_TEST_BLOCK_LOOP_ON=<byte in decimal>`: that byte, read alone, blocks the
//! loop's thread for good, to prove that shutdown does not depend on the loop (tests/e2e_signals.rs).

use std::io::Write;
use std::time::Duration;

/// What the blocked loop puts in the window title, for the test to see when the loop is stuck.
const BLOCKED_TITLE: &str = "pokeshell test hook: the loop is blocked";

pub struct LoopBlocker {
    byte: u8,
    go: Option<tokio::sync::oneshot::Sender<()>>,
}

impl LoopBlocker {
    /// Armed when the variable is set. Must be called on the loop's (single-threaded) runtime: it
    /// spawns there the task that, once told, sets the title and never yields again.
    pub fn from_env() -> Option<Self> {
        let byte = std::env::var("POKESHELL_TEST_BLOCK_LOOP_ON").ok()?.parse().ok()?;
        let (go, told) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            if told.await.is_ok() {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "\x1b]2;{BLOCKED_TITLE}\x07").and_then(|()| out.flush());
                drop(out);
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
        });
        Some(Self { byte, go: Some(go) })
    }

    /// For the stdin reader: true when `bytes` is the byte alone and the loop has been told to
    /// block (the byte is then not passed on).
    pub fn intercept(&mut self, bytes: &[u8]) -> bool {
        if bytes != [self.byte] {
            return false;
        }
        self.go.take().is_some_and(|go| go.send(()).is_ok())
    }
}
