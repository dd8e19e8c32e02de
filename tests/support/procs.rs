//! Processes as /proc shows them: whether one lives, and the children of one.

pub fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The pids of every process whose parent is `parent`.
pub fn children_of(parent: u32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        if rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(parent) {
            out.push(pid);
        }
    }
    out
}
