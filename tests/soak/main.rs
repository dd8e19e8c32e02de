//! A chaos soak with real processes: several sessions of real pi against the scripted model, each
//! working through a list of tasks (`tasks.rs`), while a seeded injector (`faults.rs`) stalls
//! streams, answers 429 and 529 with and without reset times, freezes and kills pi, kills the server
//! (a `pokeshell attach` brings it back from the saved list), attaches and detaches terminals and
//! drops the bridges' sockets. At the end every task must have been done exactly once (the scripted
//! model's log is the history), no process of the soak may be left, and the ledger must hold
//! together; the server's memory and the time each fault took to recover from are printed.
//!
//! Ignored by `cargo test`: `scripts/soak.sh --minutes M --seed S` runs it (SOAK_MINUTES,
//! SOAK_SEED, SOAK_SESSIONS). docs/simulation.md has the figures of a twenty-minute run.

#[path = "../support/mod.rs"]
mod support;

mod faults;
mod report;
mod tasks;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use serde_json::json;

use support::ModelServer;
use support::pi::PiEnv;
use support::pty::{Pty, ServerHome};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const EXE: &str = env!("CARGO_BIN_EXE_pokeshell");

fn pokeshell(env: &PiEnv, args: &[String]) -> std::process::Output {
    Command::new(EXE)
        .arg("--pi")
        .arg(env.pi())
        .args(args)
        .env_clear()
        .envs(env.env_vars())
        .current_dir(env.work_dir())
        .stdin(Stdio::null())
        .output()
        .expect("run pokeshell")
}

#[test]
#[ignore = "a soak of minutes with real pi: scripts/soak.sh runs it"]
fn soak() {
    let minutes = env_u64("SOAK_MINUTES", 3);
    let seed = env_u64("SOAK_SEED", 1);
    let count = env_u64("SOAK_SESSIONS", 3);
    let board = tasks::Shared::default();
    let model = ModelServer::start().expect("the scripted model starts");
    let policy_board = board.clone();
    model.set_policy(Arc::new(move |body, summary| {
        tasks::answer(&policy_board, body, summary)
    }));
    let home = ServerHome::new();
    let settings = json!({
        "poke": {
            "postCompactCooldownSeconds": 1, "postCompactMaxPokes": 100, "streamStallSeconds": 15,
            "unresponsiveSeconds": 20, "maxRestartsPerHour": 100
        },
        "pokeshell": { "injectionCooldownSeconds": 1 }
    });
    let env = PiEnv::builder(&model.base_url())
        .settings(settings)
        .env("XDG_RUNTIME_DIR", &home.runtime_dir().to_string_lossy())
        .env("XDG_STATE_HOME", &home.state_dir().to_string_lossy())
        .build();
    // About one task every six seconds, so the work lasts about as long as the faults.
    let per_session = (minutes * 10).max(6) as u32;
    let mut sessions: Vec<(String, PathBuf)> = Vec::new();
    for i in 1..=count {
        let tag = format!("s{i}");
        let dir = env.work_dir().join(&tag);
        std::fs::create_dir_all(&dir).expect("a session dir");
        let mut args: Vec<String> = ["new", "-d", "--name", &tag, "--dir"].map(String::from).to_vec();
        args.push(dir.to_string_lossy().into_owned());
        args.push("--".into());
        args.extend(env.pi_args(&[&format!("SOAK {tag} tasks={per_session}")]));
        let out = pokeshell(&env, &args);
        assert!(out.status.success(), "pokeshell new: {out:?}");
        sessions.push((tag, dir));
    }
    let attach = |tag: &str| {
        let mut cmd = CommandBuilder::new(EXE);
        cmd.args(["--pi", &env.pi().to_string_lossy(), "attach", tag]);
        env.apply(&mut cmd);
        Pty::spawn(cmd, 40, 140)
    };
    let server_pid = || home.server_pid();
    let world = faults::World {
        board: &board,
        sessions: &sessions,
        server_pid: &server_pid,
        attach: &attach,
    };
    let mut rng = faults::Rng::new(seed);
    let mut terminals = Vec::new();
    let mut injected = Vec::new();
    let mut rss = Vec::new();
    let started = Instant::now();
    // The ledger's records carry wall times: this one lines them up with the fault times below.
    let epoch_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    println!("faults from unix ms {epoch_ms} on (the times below count from there)");
    let end = started + Duration::from_secs(minutes * 60);
    let mut next_fault = started + Duration::from_secs(rng.range(5, 20));
    let mut next_sample = started;
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
        faults::retire_terminals(&mut terminals, &mut rng);
        if Instant::now() >= next_sample {
            next_sample += Duration::from_secs(10);
            if let Some(kb) = server_pid().and_then(report::rss_kb) {
                rss.push((started.elapsed().as_secs(), kb));
            }
        }
        if Instant::now() < next_fault {
            continue;
        }
        next_fault = Instant::now() + Duration::from_secs(rng.range(3, 15));
        let kind = faults::KINDS[rng.range(0, faults::KINDS.len() as u64) as usize];
        if let Some(tag) = faults::inject(kind, &mut rng, &world, &mut terminals) {
            println!("{:>6.1}s {kind:?} on {tag}", started.elapsed().as_secs_f64());
            injected.push(faults::Injected {
                kind,
                tag,
                at: Instant::now(),
            });
        }
    }
    // The faults stop; the sessions finish their lists (bounded).
    board.lock().unwrap_or_else(|p| p.into_inner()).pending.clear();
    for (pty, _) in terminals.drain(..) {
        drop(pty);
    }
    if server_pid().is_none() {
        // The last fault killed the server: a terminal brings it back, as a person would.
        drop(attach(&sessions[0].0));
    }
    let finish_by = Instant::now() + Duration::from_secs((minutes * 30).max(300));
    let tags: Vec<String> = sessions.iter().map(|(t, _)| t.clone()).collect();
    while Instant::now() < finish_by {
        let done = board.lock().unwrap_or_else(|p| p.into_inner()).finished.len();
        if done == tags.len() {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let wall = started.elapsed();
    let ledger_path = home.state_dir().join("pokeshell/interventions.jsonl");
    let ledger = report::ledger(&ledger_path);
    let unfinished: Vec<String> = {
        let b = board.lock().unwrap_or_else(|p| p.into_inner());
        tags.iter()
            .filter(|t| !b.finished.contains(*t))
            .cloned()
            .collect()
    };
    // A session that never finished: keep what tells why (its screen, `ls`, the ledger, the
    // server's log) before the sessions are killed.
    // Kept whatever the result (the slowest recoveries are read from them too); the screens of the
    // sessions that never finished tell why they stopped.
    let kept = {
        let screens: Vec<String> = unfinished
            .iter()
            .map(|tag| {
                let pty = attach(tag);
                // Until the screen has been still for a second (at most ten).
                let until = Instant::now() + Duration::from_secs(10);
                let mut seen = pty.raw_output().len();
                while Instant::now() < until && pty.wait_for_output(seen, Duration::from_secs(1)) {
                    seen = pty.raw_output().len();
                }
                pty.dump()
            })
            .collect();
        let ls = home.pokeshell(&["ls", "--json"]);
        report::keep(report::PostMortem {
            dir: &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("soak-seed-{seed}")),
            ledger: &ledger_path,
            log: &home.runtime_dir().join("pokeshell/server/log"),
            ls: &String::from_utf8_lossy(&ls.stdout),
            screens: &screens,
        })
    };
    // Every session ends; the server ends with the last; nothing of the soak may be left running.
    for tag in &tags {
        let _ = home.pokeshell(&["kill", tag]);
    }
    let gone_by = Instant::now() + Duration::from_secs(30);
    while server_pid().is_some() && Instant::now() < gone_by {
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(3));
    let root = env
        .work_dir()
        .parent()
        .unwrap_or(env.work_dir())
        .to_string_lossy()
        .into_owned();
    let orphans = report::orphans(&root);
    let requests = model.requests();
    let lists: Vec<(String, u32)> = tags.iter().map(|t| (t.clone(), per_session)).collect();
    let verdict = tasks::verdict(&requests, &lists);
    let progress = board.lock().unwrap_or_else(|p| p.into_inner()).progress.clone();
    let text = report::text(report::Figures {
        seed,
        minutes,
        wall,
        started,
        sessions: tags.len(),
        tasks: per_session,
        injected: &injected,
        progress: &progress,
        verdict: &verdict,
        rss: &rss,
        ledger: &ledger,
        orphans: &orphans,
    });
    println!("{text}");
    if unfinished.is_empty() {
        println!("{}", kept.lines().next().unwrap_or_default());
    } else {
        println!("sessions that never finished: {unfinished:?}\n{kept}");
    }
    assert!(
        verdict.lost.is_empty() && verdict.doubled.is_empty() && verdict.prompts_doubled.is_empty(),
        "tasks lost or doubled (seed {seed}):\n{text}"
    );
    assert!(orphans.is_empty(), "processes left behind: {orphans:?}");
    assert!(
        ledger.problems.is_empty(),
        "the ledger does not hold together: {:?}",
        ledger.problems
    );
}
