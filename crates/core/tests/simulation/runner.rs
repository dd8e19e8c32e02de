//! One history run to its end, and a failing one shrunk: steps are taken away (halves, then
//! quarters, … then single steps, ddmin's way) as long as the same invariant still breaks, then the
//! survivors' waits are shortened. A seed's run is deterministic, so the shrunk history replays.

use std::collections::BTreeMap;

use super::history::{Shape, Step, generate};
use super::world::World;

/// The quiet spell after the last step: wakeups fire, limits are waited out, outcomes are judged.
pub const DRAIN_MS: u64 = 45 * 60_000;

pub struct Outcome {
    pub failure: Option<String>,
    pub simulated_ms: u64,
    pub stats: BTreeMap<&'static str, u64>,
    pub trace: Vec<String>,
    pub prompts: (usize, usize, usize),
}

pub fn run(seed: u64, steps: Vec<Step>, shape: Shape) -> Outcome {
    let end = shape.minutes * 60_000;
    let mut world = World::new(seed, steps);
    world.run(end);
    world.run(end + DRAIN_MS);
    world.check_end();
    Outcome {
        failure: world.check.failure.clone(),
        simulated_ms: world.now,
        stats: world.stats.clone(),
        trace: world.trace.clone(),
        prompts: world.check.prompt_counts(),
    }
}

pub fn run_seed(seed: u64, shape: Shape) -> (Vec<Step>, Outcome) {
    let steps = generate(seed, shape);
    let outcome = run(seed, steps.clone(), shape);
    (steps, outcome)
}

/// The invariant a failure broke, without its numbers (another session or prompt breaking the same
/// rule is the same failure).
fn kind(failure: &str) -> String {
    failure
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .collect::<String>()
        .split(':')
        .take(2)
        .collect::<Vec<_>>()
        .join(":")
}

/// The shortest history found that breaks the same invariant.
pub fn shrink(seed: u64, steps: Vec<Step>, shape: Shape, failure: &str) -> (Vec<Step>, String) {
    let want = kind(failure);
    let mut best = steps;
    let mut best_failure = failure.to_string();
    let mut budget = 400;
    let still_fails = |candidate: &[Step], budget: &mut i32| -> Option<String> {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        let f = run(seed, candidate.to_vec(), shape).failure?;
        (kind(&f) == want).then_some(f)
    };
    let mut chunk = best.len().div_ceil(2).max(1);
    loop {
        let mut i = 0;
        let mut progressed = false;
        while i < best.len() {
            let mut candidate = best.clone();
            candidate.drain(i..(i + chunk).min(best.len()));
            if let Some(f) = still_fails(&candidate, &mut budget) {
                best = candidate;
                best_failure = f;
                progressed = true;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 && !progressed {
            break;
        }
        if budget == 0 {
            break;
        }
        chunk = if progressed { chunk } else { (chunk / 2).max(1) };
    }
    (best, best_failure)
}

/// How a failing seed is told: the seed and how to replay it, the shortest history, the failure and
/// what led to it.
pub fn report(seed: u64, shape: Shape, steps: &[Step], failure: &str, trace: &[String]) -> String {
    let mut out = format!(
        "\nsimulation seed {seed} failed: {failure}\nreplay: SIM_SEED={seed} SIM_MINUTES={} cargo test -p pokeshell-core --test simulation\n\nshortest history ({} steps):\n",
        shape.minutes,
        steps.len()
    );
    for s in steps {
        out.push_str(&format!("  {:>9.1}s {:?}\n", s.at_ms as f64 / 1000.0, s.act));
    }
    out.push_str("\nwhat happened last (the shortest history's run):\n");
    for line in trace.iter().rev().take(60).collect::<Vec<_>>().into_iter().rev() {
        out.push_str(&format!("  {line}\n"));
    }
    out
}
