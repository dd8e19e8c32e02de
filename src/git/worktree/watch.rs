//! A session's branch and tree state for the side pane and the switcher, and a mark of its files
//! for the Changes views, looked up in the background so that the session's loop never waits on
//! git: [`TreeWatch::get`] answers at once with the last look's, and starts a fresh look when that
//! one is old. After the session did something that may change files ([`TreeWatch::stir`]), the
//! watch asks to be looked at once more ([`TreeWatch::next_deadline`]), so the last change of a
//! run is seen even when the session goes quiet after it; a quiet session costs nothing.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::commands::{TreeState, parse_status, status_text};
use super::mark::mark;

/// How often a session's checkout is looked at again.
pub const EVERY_MS: u64 = 5_000;
/// While a look runs, how often the loop comes back for its answer.
const ANSWER_EVERY_MS: u64 = 200;

/// One look: the tree's state and the mark of its files.
#[derive(Debug, Clone, PartialEq)]
pub struct Look {
    pub state: TreeState,
    pub mark: u64,
}

#[derive(Default)]
pub struct TreeWatch {
    dir: String,
    state: Arc<Mutex<Option<Look>>>,
    busy: Arc<AtomicBool>,
    looked_at: Option<u64>,
    /// Something happened since the last look began that may have changed files.
    stirred: bool,
    /// When [`TreeWatch::get`] was last called.
    now_ms: u64,
}

impl TreeWatch {
    /// The last look at `dir` (None until the first finished, or outside a checkout).
    pub fn get(&mut self, dir: &str, now_ms: u64) -> Option<Look> {
        if dir != self.dir {
            // Another directory: what was known is about the old one.
            *self = TreeWatch {
                dir: dir.to_string(),
                ..TreeWatch::default()
            };
        }
        self.now_ms = now_ms;
        let due = self
            .looked_at
            .is_none_or(|t| now_ms.saturating_sub(t) >= EVERY_MS);
        if due && !self.busy.swap(true, Ordering::AcqRel) {
            self.looked_at = Some(now_ms);
            self.stirred = false;
            let (state, busy, dir) = (self.state.clone(), self.busy.clone(), PathBuf::from(dir));
            std::thread::spawn(move || {
                let found = status_text(&dir).map(|(text, cut)| Look {
                    mark: mark(&dir, &text),
                    state: parse_status(&text, cut),
                });
                if let Ok(mut s) = state.lock() {
                    *s = found;
                }
                busy.store(false, Ordering::Release);
            });
        }
        self.state.lock().ok().and_then(|s| s.clone())
    }

    /// The session did something that may have changed its files (a tool ran, a run ended).
    pub fn stir(&mut self) {
        self.stirred = true;
    }

    /// When the watch wants [`TreeWatch::get`] called again (mono ms): soon while a look runs (its
    /// answer is picked up), at the next look's time after a stir; never when all is quiet.
    pub fn next_deadline(&self) -> Option<u64> {
        if self.busy.load(Ordering::Acquire) {
            return Some(self.now_ms + ANSWER_EVERY_MS);
        }
        self.stirred
            .then(|| self.looked_at.map_or(self.now_ms, |t| t + EVERY_MS))
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
                if let Some(s) = watch.get(&path, now).filter(|l| l.state.dirty == dirty) {
                    return s;
                }
                assert!(Instant::now() < deadline, "never saw dirty={dirty}");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        let clean = wait(&mut watch, 0, false);
        assert_eq!(clean.state.branch.as_deref(), Some("trunk"));
        assert_eq!(watch.next_deadline(), None, "nothing stirred: nothing due");
        std::fs::write(dir.path().join("new.txt"), "x").unwrap();
        watch.stir();
        assert_eq!(
            watch.next_deadline(),
            Some(EVERY_MS),
            "stirred: the next look is due"
        );
        // Not due yet: the old state stays.
        assert_eq!(watch.get(&path, 1_000).map(|l| l.state.dirty), Some(false));
        let dirty = wait(&mut watch, EVERY_MS + 1, true);
        assert!(dirty.state.dirty);
        // The same file written again: git's status is the same, the mark is not.
        std::fs::write(dir.path().join("new.txt"), "xy").unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut now = 2 * EVERY_MS + 2;
        while watch.get(&path, now).map(|l| l.mark) == Some(dirty.mark) {
            assert!(Instant::now() < deadline, "the mark never changed");
            std::thread::sleep(Duration::from_millis(20));
            now += EVERY_MS;
        }
        assert_eq!(
            watch.get("/nonexistent/dir", EVERY_MS + 2),
            None,
            "a new dir forgets the old state"
        );
    }
}
