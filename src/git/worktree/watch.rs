//! A session's branch and tree state for the side pane and the switcher, looked up in the background
//! so that the session's loop never waits on git: [`TreeWatch::get`] answers at once with the last
//! state known, and starts a fresh look when that one is old.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::commands::{TreeState, tree_state};

/// How often a session's checkout is looked at again.
pub const EVERY_MS: u64 = 5_000;

#[derive(Default)]
pub struct TreeWatch {
    dir: String,
    state: Arc<Mutex<Option<TreeState>>>,
    busy: Arc<AtomicBool>,
    looked_at: Option<u64>,
}

impl TreeWatch {
    /// The last state known of `dir` (None until the first look finished, or outside a checkout).
    pub fn get(&mut self, dir: &str, now_ms: u64) -> Option<TreeState> {
        if dir != self.dir {
            // Another directory: what was known is about the old one.
            *self = TreeWatch {
                dir: dir.to_string(),
                ..TreeWatch::default()
            };
        }
        let due = self
            .looked_at
            .is_none_or(|t| now_ms.saturating_sub(t) >= EVERY_MS);
        if due && !self.busy.swap(true, Ordering::AcqRel) {
            self.looked_at = Some(now_ms);
            let (state, busy, dir) = (self.state.clone(), self.busy.clone(), PathBuf::from(dir));
            std::thread::spawn(move || {
                let found = tree_state(&dir);
                if let Ok(mut s) = state.lock() {
                    *s = found;
                }
                busy.store(false, Ordering::Release);
            });
        }
        self.state.lock().ok().and_then(|s| s.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::{Duration, Instant};

    #[test]
    fn the_state_comes_in_the_background_and_is_looked_at_again_later() {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("git")
            .args(["init", "-q", "-b", "trunk"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(ok.success());
        let path = dir.path().to_string_lossy().into_owned();
        let mut watch = TreeWatch::default();
        let wait = |watch: &mut TreeWatch, now: u64, dirty: bool| {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                if let Some(s) = watch.get(&path, now).filter(|s| s.dirty == dirty) {
                    return s;
                }
                assert!(Instant::now() < deadline, "never saw dirty={dirty}");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        let clean = wait(&mut watch, 0, false);
        assert_eq!(clean.branch.as_deref(), Some("trunk"));
        std::fs::write(dir.path().join("new.txt"), "x").unwrap();
        // Not due yet: the old state stays.
        assert_eq!(watch.get(&path, 1_000).map(|s| s.dirty), Some(false));
        assert!(wait(&mut watch, EVERY_MS + 1, true).dirty);
        assert_eq!(
            watch.get("/nonexistent/dir", EVERY_MS + 2),
            None,
            "a new dir forgets the old state"
        );
    }
}
