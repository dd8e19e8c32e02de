//! A night of sessions, simulated: the server's state core and every session (each with its
//! supervisor) run together on simulated time, against a model of pi that answers what they do,
//! through histories of prompts, tool calls, stalls, provider errors, compactions, pis killed,
//! frozen and relaunched, terminals coming and going, Esc, wakeups and server restarts. Invariants
//! are checked after every step (`simulation/check.rs`); docs/simulation.md says what and why.
//!
//! `SIM_SEED=S` replays one seed (and prints its story); `SIM_SEEDS=N` runs N seeds from
//! `SIM_BASE` (default 0), each `SIM_MINUTES` long (default 30) or `SIM_HOURS` long, plus a quiet
//! spell. A failure is shrunk to a short history and printed with the command that replays it.

mod check;
mod conv;
mod history;
mod pi;
mod regressions;
mod rng;
mod runner;
mod world;

use std::time::Instant;

use history::Shape;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

fn shape() -> Shape {
    let minutes = env_u64("SIM_MINUTES")
        .or_else(|| env_u64("SIM_HOURS").map(|h| h * 60))
        .unwrap_or(20);
    Shape {
        minutes,
        max_sessions: 5,
    }
}

/// Runs `seed`; a failure is shrunk and told.
fn check_seed(seed: u64, shape: Shape) -> Result<runner::Outcome, String> {
    let (steps, outcome) = runner::run_seed(seed, shape);
    let Some(failure) = outcome.failure.clone() else {
        return Ok(outcome);
    };
    let (short, short_failure) = runner::shrink(seed, steps, shape, &failure);
    let replay = runner::run(seed, short.clone(), shape);
    Err(runner::report(seed, shape, &short, &short_failure, &replay.trace))
}

#[test]
fn simulated_nights_keep_every_invariant() {
    let shape = shape();
    if let Some(seed) = env_u64("SIM_SEED") {
        let (steps, outcome) = runner::run_seed(seed, shape);
        for line in &outcome.trace {
            println!("{line}");
        }
        println!("{} steps, {:?}", steps.len(), outcome.stats);
        if let Err(report) = check_seed(seed, shape) {
            panic!("{report}");
        }
        return;
    }
    let seeds = env_u64("SIM_SEEDS").unwrap_or(2000);
    let base = env_u64("SIM_BASE").unwrap_or(0);
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4) as u64;
    let results: Vec<Result<Vec<runner::Outcome>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut outcomes = Vec::new();
                    for seed in (base + t..base + seeds).step_by(threads as usize) {
                        outcomes.push(check_seed(seed, shape)?);
                    }
                    Ok(outcomes)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a simulation thread"))
            .collect()
    });
    let mut simulated_ms = 0;
    let mut stats = std::collections::BTreeMap::new();
    let mut prompts = (0, 0, 0);
    for result in results {
        for outcome in result.unwrap_or_else(|report| panic!("{report}")) {
            simulated_ms += outcome.simulated_ms;
            for (k, v) in outcome.stats {
                *stats.entry(k).or_insert(0) += v;
            }
            prompts = (
                prompts.0 + outcome.prompts.0,
                prompts.1 + outcome.prompts.1,
                prompts.2 + outcome.prompts.2,
            );
        }
    }
    println!(
        "{seeds} seeds from {base}: {:.0} simulated hours in {:.1} s; prompts typed {}, reached the model {}, died unread with their pi {}",
        simulated_ms as f64 / 3_600_000.0,
        started.elapsed().as_secs_f64(),
        prompts.0,
        prompts.1,
        prompts.2
    );
    for (k, v) in stats {
        println!("  {k}: {v}");
    }
}
