//! Processes pi leaves behind. pi starts its tool commands in their own process groups, so when pi
//! itself is killed (SIGKILL, a crash) nothing ends them: they would run on, orphaned, after pokeshell
//! exits. pokeshell therefore makes itself the "child subreaper" of everything it starts (Linux):
//! orphans of pi's tree are re-parented to pokeshell instead of init, and after pi died by a signal
//! pokeshell ends them. Orphans that exit while pi lives (a backgrounded command whose shell ended)
//! are reaped every few seconds so they do not linger as zombies.
//!
//! On other systems these functions do nothing.

use std::time::Duration;

/// How often adopted zombies are reaped.
const REAP_EVERY: Duration = Duration::from_secs(5);

/// Makes pokeshell the subreaper of its descendants and starts reaping adopted zombies. Call before
/// the child is spawned. `main_child` tells the reaper which child the waiter thread owns.
pub fn adopt_orphans(main_children: fn() -> Vec<i32>) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes a plain integer and touches no memory.
        let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
        if ok {
            let _ = std::thread::Builder::new().name("reaper".into()).spawn(move || {
                loop {
                    std::thread::sleep(REAP_EVERY);
                    reap_adopted_zombies(&main_children());
                }
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = main_children;
}

/// Ends every process re-parented to pokeshell (SIGTERM to it and its group, SIGKILL after `grace`).
/// For after the child died by a signal: what it started is left without anyone to stop it.
pub fn end_orphans(grace: Duration) {
    #[cfg(target_os = "linux")]
    {
        // pi itself is never an orphan: after a relaunch, the new pi is a child like the orphans.
        let live = crate::term::pty::live_children();
        let orphans: Vec<i32> = children()
            .into_iter()
            .map(|c| c.pid)
            .filter(|pid| !live.contains(pid))
            .collect();
        if orphans.is_empty() {
            return;
        }
        for pid in &orphans {
            signal_tree(*pid, libc::SIGTERM);
        }
        let deadline = std::time::Instant::now() + grace;
        loop {
            reap(&orphans);
            let left: Vec<i32> = orphans.iter().copied().filter(|p| exists(*p)).collect();
            if left.is_empty() {
                return;
            }
            if std::time::Instant::now() >= deadline {
                for pid in left {
                    signal_tree(pid, libc::SIGKILL);
                }
                reap(&orphans);
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = grace;
}

#[cfg(target_os = "linux")]
struct Child {
    pid: i32,
    session: i32,
    zombie: bool,
}

/// pokeshell's children as /proc lists them.
#[cfg(target_os = "linux")]
fn children() -> Vec<Child> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // Fields after the command name: state, ppid, pgrp, session.
            let mut fields = after_name(&stat)?.split_whitespace();
            let state = fields.next()?;
            let ppid: u32 = fields.next()?.parse().ok()?;
            let _pgrp = fields.next()?;
            let session: i32 = fields.next()?.parse().ok()?;
            (ppid == me).then_some(Child {
                pid,
                session,
                zombie: state == "Z",
            })
        })
        .collect()
}

/// Reaps zombies that were re-parented to pokeshell. Children pokeshell spawned itself are left to
/// whoever waits for them: the PTY children (`main_children`) and helpers in pokeshell's own session.
#[cfg(target_os = "linux")]
fn reap_adopted_zombies(main_children: &[i32]) {
    // SAFETY: getsid(0) has no preconditions.
    let own_session = unsafe { libc::getsid(0) };
    let adopted: Vec<i32> = children()
        .into_iter()
        .filter(|c| c.zombie && c.session != own_session && !main_children.contains(&c.pid))
        .map(|c| c.pid)
        .collect();
    reap(&adopted);
}

#[cfg(target_os = "linux")]
fn reap(pids: &[i32]) {
    for pid in pids {
        let mut status = 0;
        // SAFETY: waitpid on a child pid with WNOHANG writes only into `status`.
        unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) };
    }
}

#[cfg(target_os = "linux")]
fn signal_tree(pid: i32, signal: i32) {
    // SAFETY: kill(2) with our own orphan's pid (and its group, which tools lead) only sends signals.
    unsafe {
        libc::kill(-pid, signal);
        libc::kill(pid, signal);
    }
}

#[cfg(target_os = "linux")]
fn exists(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| after_name(&s).map(|rest| rest.starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

/// The fields of a `/proc/PID/stat` line after the command name, which may hold spaces and `)`.
/// `None` for a line cut short (the process went away while it was read).
#[cfg(target_os = "linux")]
fn after_name(stat: &str) -> Option<&str> {
    stat.get(stat.rfind(')')? + 2..)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn children_lists_a_spawned_helper_in_our_own_session() {
        let mut helper = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let pid = helper.id() as i32;
        let found = children().into_iter().find(|c| c.pid == pid);
        // SAFETY: getsid(0) has no preconditions.
        let own = unsafe { libc::getsid(0) };
        assert!(found.as_ref().is_some_and(|c| c.session == own && !c.zombie));
        // Zombies of our own session are not the reaper's: the spawner waits for them.
        let _ = helper.kill();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !children().iter().any(|c| c.pid == pid && c.zombie) {
            assert!(
                std::time::Instant::now() < deadline,
                "the killed helper never became a zombie"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        reap_adopted_zombies(&[]);
        assert!(children().iter().any(|c| c.pid == pid), "left for its spawner");
        assert!(helper.wait().is_ok(), "and its spawner can still wait for it");
    }

    #[test]
    fn a_stat_line_cut_short_has_no_fields_instead_of_a_panic() {
        assert_eq!(after_name("12 (a b) c) S 1 12 12"), Some("S 1 12 12"));
        assert_eq!(after_name("12 (sleep)"), None);
        assert_eq!(after_name("12 (sleep"), None);
        assert_eq!(after_name(""), None);
    }
}
