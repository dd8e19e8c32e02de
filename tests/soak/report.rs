//! What the soak measures and prints: faults by kind, how many were recovered from and how long it
//! took (until the session's next task result reached the model), the server's memory over the
//! run, the ledger's consistency, and the processes left behind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::faults::{Injected, Kind};
use super::tasks::Verdict;

pub fn rss_kb(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[derive(Default)]
pub struct Ledger {
    pub records: usize,
    pub by_kind: BTreeMap<String, usize>,
    pub problems: Vec<String>,
}

/// Every line a whole JSON record of a known kind; per session of each server run, no outcome
/// without its resume, and at most one resume still waiting for its outcome when the soak ends.
pub fn ledger(path: &Path) -> Ledger {
    let mut l = Ledger::default();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut owed: BTreeMap<(String, String), i64> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let Ok(r) = serde_json::from_str::<Value>(line) else {
            l.problems.push(format!("line {} is not JSON: {line}", i + 1));
            continue;
        };
        l.records += 1;
        let kind = r["kind"].as_str().unwrap_or_default().to_string();
        if !matches!(kind.as_str(), "action" | "declined" | "outcome") || r["rule"].as_str().is_none() {
            l.problems.push(format!("line {} is not a record: {line}", i + 1));
        }
        *l.by_kind.entry(kind.clone()).or_default() += 1;
        let rule = r["rule"].as_str().unwrap_or_default();
        let key = (
            r["run"].as_str().unwrap_or_default().to_string(),
            r["session_id"].as_str().unwrap_or_default().to_string(),
        );
        let resume = kind == "action" && !r["sent"].is_null() && !matches!(rule, "WAK-T3" | "POKE-P1");
        let refused = kind == "declined"
            && r["reason"]
                .as_str()
                .is_some_and(|s| s.starts_with("pi refused the message"));
        let entry = owed.entry(key.clone()).or_default();
        if resume {
            *entry += 1;
        } else if kind == "outcome" || refused {
            *entry -= 1;
            if *entry < 0 {
                l.problems.push(format!(
                    "line {}: an outcome with no resume before it in {key:?}",
                    i + 1
                ));
                *entry = 0;
            }
        }
    }
    for (key, n) in owed {
        if n > 1 {
            l.problems
                .push(format!("{n} resumes without an outcome in {key:?}"));
        }
    }
    l
}

/// Processes whose working directory or environment names the soak's directory.
pub fn orphans(root: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if pid.parse::<u32>().is_err() || pid == me {
            continue;
        }
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_default();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if cwd.starts_with(root) || String::from_utf8_lossy(&environ).contains(root) {
            let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            out.push(format!("{pid} {}", cmd.replace('\0', " ")));
        }
    }
    out
}

pub struct Figures<'a> {
    pub seed: u64,
    pub minutes: u64,
    pub wall: Duration,
    pub started: Instant,
    pub sessions: usize,
    pub tasks: u32,
    pub injected: &'a [Injected],
    pub progress: &'a BTreeMap<String, Vec<Instant>>,
    pub verdict: &'a Verdict,
    pub rss: &'a [(u64, u64)],
    pub ledger: &'a Ledger,
    pub orphans: &'a [String],
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

pub fn text(f: Figures) -> String {
    let mut out = format!(
        "\nsoak: seed {}, {} minutes of faults ({:.0} s in all), {} sessions of {} tasks\n",
        f.seed,
        f.minutes,
        f.wall.as_secs_f64(),
        f.sessions,
        f.tasks
    );
    let mut by_kind: BTreeMap<Kind, (usize, usize, usize)> = BTreeMap::new();
    let mut times = Vec::new();
    for fault in f.injected {
        let entry = by_kind.entry(fault.kind).or_default();
        entry.0 += 1;
        let after = f
            .progress
            .get(&fault.tag)
            .and_then(|p| p.iter().find(|t| **t > fault.at));
        match after {
            Some(t) => {
                entry.1 += 1;
                times.push((*t - fault.at).as_secs_f64());
            }
            // The session had no task left: nothing to recover.
            None => entry.2 += 1,
        }
    }
    let mut slowest: Vec<(f64, &Injected)> = f
        .injected
        .iter()
        .filter_map(|fault| {
            let t = f.progress.get(&fault.tag)?.iter().find(|t| **t > fault.at)?;
            Some(((*t - fault.at).as_secs_f64(), fault))
        })
        .collect();
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    times.sort_by(f64::total_cmp);
    out.push_str("faults injected (kind: injected, recovered, hit a session with no work left):\n");
    for (kind, (n, recovered, idle)) in &by_kind {
        out.push_str(&format!("  {kind:?}: {n}, {recovered}, {idle}\n"));
    }
    out.push_str(&format!(
        "time to recover (to the session's next task done): p50 {:.1} s, p99 {:.1} s, max {:.1} s over {} faults\n",
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.last().copied().unwrap_or(0.0),
        times.len()
    ));
    out.push_str("the slowest recoveries (seconds, fault, session, injected at):\n");
    for (secs, fault) in slowest.iter().take(6) {
        out.push_str(&format!(
            "  {secs:.1} s {:?} on {} at {:.0} s\n",
            fault.kind,
            fault.tag,
            (fault.at - f.started).as_secs_f64()
        ));
    }
    let v = f.verdict;
    out.push_str(&format!(
        "tasks done exactly once: {}; lost: {:?}; doubled: {:?}; prompts that reached the model twice: {:?}\n",
        v.done, v.lost, v.doubled, v.prompts_doubled
    ));
    let kb: Vec<u64> = f.rss.iter().map(|(_, kb)| *kb).collect();
    let settled: BTreeSet<u64> = f
        .rss
        .iter()
        .filter(|(s, _)| *s >= 60)
        .map(|(_, kb)| *kb)
        .collect();
    out.push_str(&format!(
        "server memory (VmRSS, every 10 s of the current server): first {} kB, from the first minute on min {} / max {} kB, last {} kB ({} samples)\n",
        kb.first().copied().unwrap_or(0),
        settled.first().copied().unwrap_or(0),
        settled.last().copied().unwrap_or(0),
        kb.last().copied().unwrap_or(0),
        kb.len()
    ));
    out.push_str(&format!(
        "ledger: {} records {:?}, problems: {:?}\nprocesses left behind: {:?}\n",
        f.ledger.records, f.ledger.by_kind, f.ledger.problems, f.orphans
    ));
    out
}

/// What is kept of a run whose sessions did not all finish.
pub struct PostMortem<'a> {
    pub dir: &'a Path,
    pub ledger: &'a Path,
    pub log: &'a Path,
    pub ls: &'a str,
    pub screens: &'a [String],
}

/// Copies the ledger and the server's log into `dir` beside `ls --json` and the unfinished
/// sessions' screens; returns the tail of the ledger and where the rest is, to print.
pub fn keep(p: PostMortem) -> String {
    let _ = std::fs::remove_dir_all(p.dir);
    if let Err(e) = std::fs::create_dir_all(p.dir) {
        return format!("could not keep the post-mortem in {}: {e}", p.dir.display());
    }
    let _ = std::fs::copy(p.ledger, p.dir.join("interventions.jsonl"));
    let _ = std::fs::copy(p.log, p.dir.join("server.log"));
    let _ = std::fs::write(p.dir.join("ls.json"), p.ls);
    let _ = std::fs::write(p.dir.join("screens.txt"), p.screens.join("\n"));
    let ledger = std::fs::read_to_string(p.ledger).unwrap_or_default();
    let lines: Vec<&str> = ledger.lines().collect();
    let tail: Vec<String> = lines[lines.len().saturating_sub(30)..]
        .iter()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(r) => format!(
                "  {} {} {} {}: {}",
                r["wall_ms"],
                r["session_id"].as_str().unwrap_or("-"),
                r["kind"].as_str().unwrap_or("?"),
                r["rule"].as_str().unwrap_or("?"),
                r["reason"].as_str().unwrap_or_default()
            ),
            Err(_) => format!("  {l}"),
        })
        .collect();
    format!(
        "kept in {}: the ledger, the server's log, `ls --json`, the screens\nls --json: {}\nthe ledger's last records:\n{}\n{}",
        p.dir.display(),
        p.ls.trim(),
        tail.join("\n"),
        p.screens.join("\n")
    )
}
