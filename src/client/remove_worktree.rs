//! `pokeshell kill NAME --remove-worktree`: checks first, so a worktree with changes is refused
//! before anything ends; then ends the session, waits until it is gone, and removes the worktree
//! (checked again: pi may have written in the meantime).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::client;
use crate::git::worktree;

/// How long the session gets to end before the worktree is left in place.
const GONE_WITHIN: Duration = Duration::from_secs(15);
const POLL: Duration = Duration::from_millis(100);

fn matches(label: &str, name: &str) -> bool {
    label == name
        || label
            .split_once(':')
            .is_some_and(|(n, rest)| n == name || rest == name)
}

fn session_dir(name: &str) -> Result<PathBuf, String> {
    let list = client::listing()?.ok_or_else(|| "no pokeshell server runs".to_string())?;
    list.iter()
        .find(|l| matches(&l.name, name))
        .map(|l| PathBuf::from(&l.dir))
        .ok_or_else(|| format!("no session named {name:?} (see `pokeshell ls`)"))
}

/// Returns the exit code.
pub fn kill_and_remove(name: &str) -> i32 {
    let dir = match session_dir(name).and_then(|d| worktree::removable(&d).map(|_| d)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("pokeshell: {e}; the session goes on");
            return 1;
        }
    };
    let code = client::kill(name);
    if code != 0 {
        return code;
    }
    let deadline = Instant::now() + GONE_WITHIN;
    while session_dir(name).is_ok() {
        if Instant::now() >= deadline {
            eprintln!(
                "pokeshell: the session did not end within {} s; the worktree {} is kept",
                GONE_WITHIN.as_secs(),
                dir.display()
            );
            return 1;
        }
        std::thread::sleep(POLL);
    }
    match worktree::remove(&dir) {
        Ok(message) => {
            println!("{message}");
            0
        }
        Err(e) => {
            eprintln!("pokeshell: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::matches;
    #[test]
    fn a_session_is_found_by_label_number_or_name() {
        assert!(matches("2:feat/x", "feat/x"));
        assert!(matches("2:feat/x", "2"));
        assert!(matches("2:feat/x", "2:feat/x"));
        assert!(!matches("2:feat/x", "feat"));
        assert!(!matches("12:a", "2"));
    }
}
