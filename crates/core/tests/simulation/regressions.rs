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

/// The user's Esc stops a run in session 1, whose agent had scheduled a wakeup; then the server is
/// killed and `pokeshell attach` brings it back. The new server's session re-armed the wakeup from
/// pi's session and fired it into the conversation the user had stopped: the stop lived only in the
/// old server's memory. It is kept in pi's session now, as the wakeup is.
#[test]
fn seed_1272_the_users_esc_still_holds_after_the_server_is_brought_back() {
    use crate::history::Ending;
    let task = |turns, ending| Task { turns, ending };
    let steps = vec![
        at(
            0.0,
            Act::OpenNew {
                dir: 0,
                prompt: Some(task(4, Ending::Empty)),
            },
        ),
        at(
            135.5,
            Act::OpenNew {
                dir: 2,
                prompt: Some(task(4, Ending::Done)),
            },
        ),
        at(650.1, Act::OpenNew { dir: 2, prompt: None }),
        at(1206.2, Act::Close { client: 5 }),
        at(1212.4, Act::Attach { session: 3 }),
        at(
            1216.0,
            Act::Wakeup {
                session: 0,
                delay_s: 1360,
            },
        ),
        at(1551.5, Act::Attach { session: 2 }),
        at(1558.3, Act::Attach { session: 3 }),
        at(
            1558.7,
            Act::Prompt {
                client: 7,
                task: task(4, Ending::Empty),
            },
        ),
        at(1561.3, Act::Attach { session: 5 }),
        at(1571.0, Act::Attach { session: 5 }),
        at(1619.1, Act::Esc { client: 7 }),
        at(1622.9, Act::CrashServer { back_s: 44 }),
    ];
    let trace = replay(1272, steps);
    assert!(
        told(&trace, "stopped the run before this session was brought back"),
        "the new server's session knows of the stop:\n{}",
        trace.join("\n")
    );
}

/// pi is killed mid-run just as a wakeup comes due. The supervisor kept the old session's wakeup
/// timer over the relaunch: it fired into the new pi before its session started, the session's start
/// forgot it had, and the restart's resume (RST-R1) went out too: two messages of pokeshell's own at
/// once, and the wakeup, re-armed from pi's session, would fire again. A relaunch now drops the old
/// session's timers; the new session's start re-arms them.
#[test]
fn seed_1348_a_wakeup_due_at_a_relaunch_fires_once_after_the_restart_resume() {
    use crate::history::Ending;
    let task = |turns, ending| Task { turns, ending };
    let steps = vec![
        at(
            0.0,
            Act::OpenNew {
                dir: 0,
                prompt: Some(task(2, Ending::Done)),
            },
        ),
        at(62.5, Act::Stall { session: 4 }),
        at(67.3, Act::DropBridges),
        at(104.4, Act::DropBridges),
        at(121.1, Act::Stall { session: 5 }),
        at(
            132.7,
            Act::Provider {
                session: 6,
                status: 529,
                reset_s: Some(95),
                lasts_s: 436,
            },
        ),
        at(
            191.8,
            Act::Wakeup {
                session: 7,
                delay_s: 791,
            },
        ),
        at(
            1396.0,
            Act::Prompt {
                client: 7,
                task: task(5, Ending::Done),
            },
        ),
        at(1397.0, Act::KillPi { session: 4 }),
    ];
    let trace = replay(1348, steps);
    let fired = trace
        .iter()
        .filter(|l| l.contains("WAK-T3 Action: wakeup wake-1 fired"))
        .count();
    assert_eq!(
        fired,
        1,
        "the wakeup fires once, after the resume's settle:\n{}",
        trace.join("\n")
    );
}

/// A session is opened with its first prompt on the command line; its pi reads it, and the server is
/// killed before the list naming pi's conversation is on disk. The restored session's pi was started
/// with that command line again, so the prompt reached the model a second time, in a new
/// conversation. A session brought back without a known conversation now starts without its first
/// prompt, and says so.
#[test]
fn seed_4232_a_prompt_on_the_command_line_is_not_sent_again_after_a_server_crash() {
    use crate::history::Ending;
    let task = |turns| Task {
        turns,
        ending: Ending::Done,
    };
    let steps = vec![
        at(
            0.0,
            Act::OpenNew {
                dir: 0,
                prompt: Some(task(1)),
            },
        ),
        at(
            2.4,
            Act::OpenNew {
                dir: 1,
                prompt: Some(task(2)),
            },
        ),
        at(4.9, Act::CrashServer { back_s: 58 }),
    ];
    let trace = replay(4232, steps);
    assert!(
        told(&trace, "without the prompt it was first given"),
        "the restored session says its prompt is not sent again:\n{}",
        trace.join("\n")
    );
}

/// A run ends on an overload with a reset time pokeshell waits out; pi is killed during the wait.
/// The session ended with pi, and the planned resume and the rest of the work with it (the chaos
/// soak met it first, seed 20261203: whole task lists were never done). RST-D1 now brings pi back
/// when a planned step was under way, and the wait comes back from pi's session.
#[test]
fn seed_42_a_pi_killed_while_a_limit_is_waited_out_comes_back_with_the_wait() {
    let steps = vec![
        at(87.8, Act::OpenNew { dir: 1, prompt: None }),
        at(
            159.9,
            Act::Provider {
                session: 0,
                status: 503,
                reset_s: Some(209),
                lasts_s: 231,
            },
        ),
        at(
            163.3,
            Act::Prompt {
                client: 6,
                task: Task {
                    turns: 2,
                    ending: crate::history::Ending::Empty,
                },
            },
        ),
        at(262.4, Act::KillPi { session: 5 }),
    ];
    let trace = replay(42, steps);
    assert!(
        told(&trace, "RST-D1 Action: restarted pi on its session"),
        "pi is brought back:\n{}",
        trace.join("\n")
    );
    assert!(
        told(&trace, "LIMIT-R1 Action: re-armed the planned resume"),
        "the wait comes back with it:\n{}",
        trace.join("\n")
    );
}
