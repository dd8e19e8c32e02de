//! Each defect the simulation found, as the shortest history that showed it, named after its seed.
//! Each test failed before its fix (the commit that added it says how it was seen to fail).

use crate::history::{Act, Shape, Step, Task};
use crate::runner;

fn at(seconds: f64, act: Act) -> Step {
    Step {
        at_ms: (seconds * 1000.0) as u64,
        act,
    }
}

const SHAPE: Shape = Shape {
    minutes: 30,
    max_sessions: 5,
};

/// Runs the history under its seed; returns the run's story, or the failure with it.
fn replay(seed: u64, steps: Vec<Step>) -> Vec<String> {
    let outcome = runner::run(seed, steps.clone(), SHAPE);
    if let Some(failure) = outcome.failure {
        panic!(
            "{}",
            runner::report(seed, SHAPE, &steps, &failure, &outcome.trace)
        );
    }
    outcome.trace
}

fn told(trace: &[String], what: &str) -> bool {
    trace.iter().any(|line| line.contains(what))
}

/// A run resumed after pi's restart stalls (keep-alives, no tokens), and the bridge's socket is
/// dropped and comes back meanwhile: the stall watch lost track of the run at the reconnect and
/// never found it again, so the agent sat in a stalled stream for good and the resume's outcome
/// was never recorded. The snapshot after the welcome now says pi is still busy.
#[test]
fn seed_1026_a_stream_that_stalls_across_a_bridge_reconnect_is_still_aborted() {
    let steps = vec![
        at(84.7, Act::OpenNew { dir: 0, prompt: None }),
        at(
            706.9,
            Act::Prompt {
                client: 2,
                task: Task {
                    turns: 1,
                    ending: crate::history::Ending::Done,
                },
            },
        ),
        at(712.0, Act::KillPi { session: 0 }),
        at(713.7, Act::Stall { session: 6 }),
        at(813.8, Act::DropBridges),
    ];
    let trace = replay(1026, steps);
    assert!(
        told(&trace, "STALL-S1 Action: aborted the agent"),
        "the stalled stream is aborted after the reconnect:\n{}",
        trace.join("\n")
    );
}

/// A run stalls three times in one episode: pokeshell resumes twice, then gives up and leaves the
/// third stall alone, as documented (STALL-S1). That run never settles, so the second resume's
/// outcome was never recorded; it is judged at the give-up now.
#[test]
fn seed_1112_a_resume_whose_run_is_given_up_on_still_gets_its_outcome() {
    let task = Task {
        turns: 5,
        ending: crate::history::Ending::Done,
    };
    let steps = vec![
        at(31.3, Act::OpenNew { dir: 0, prompt: None }),
        at(147.9, Act::Stall { session: 6 }),
        at(149.5, Act::Prompt { client: 6, task }),
        at(153.5, Act::Stall { session: 4 }),
        at(381.8, Act::Stall { session: 4 }),
    ];
    let trace = replay(1112, steps);
    assert!(
        told(&trace, "STALL-S1 Outcome: no progress: the resumed run stalled"),
        "the give-up judges the last resume:\n{}",
        trace.join("\n")
    );
}
