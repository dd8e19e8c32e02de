//! A history: what the user and the world do to a night of sessions, each step at its moment of
//! simulated time. Steps name sessions and terminals by small indices that are taken modulo what
//! exists when the step comes, so any part of a history is a history too (which shrinking needs).
//! pi's answers to what pokeshell does are not in the history: the model of pi (`pi.rs`) makes them.

use super::rng::Rng;

/// How a task's run ends, as the model writes its last reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// "Done." A healthy end.
    Done,
    /// "Now I'll run the tests:" and no tool call (PROM-P1 pokes it).
    Promise,
    /// A reply with nothing in it (SAR-S8 asks to continue).
    Empty,
}

/// A compaction pi starts on its own at the next turn's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compaction {
    /// Between two turns; the run goes on.
    Threshold,
    /// The provider said the context is full: pi compacts and retries the request.
    Overflow,
    /// The request after the compaction fails: the run ends in an error (the stall POKE-W4 is for).
    KillsTurn,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Act {
    /// A terminal runs `pokeshell` in directory `dir`, with a first prompt on its command line or not.
    OpenNew { dir: u8, prompt: Option<Task> },
    /// A terminal runs `pokeshell attach N` (the `session`-th living one).
    Attach { session: u8 },
    /// prefix+d in a terminal.
    Detach { client: u8 },
    /// The terminal closes (its connection ends).
    Close { client: u8 },
    /// The user types a prompt and Enter (when pi shows its editor: idle, up, not frozen).
    Prompt { client: u8, task: Task },
    /// The user types Esc.
    Esc { client: u8 },
    /// prefix+p.
    Poke { client: u8 },
    /// `pokeshell kill N`.
    Kill { session: u8 },
    /// The model's next stream stalls: keep-alives, no tokens.
    Stall { session: u8 },
    /// The provider answers `status` for `lasts_s`, naming a reset time in its error or not.
    Provider {
        session: u8,
        status: u16,
        reset_s: Option<u64>,
        lasts_s: u64,
    },
    /// pi compacts at its next turn's end.
    Compact { session: u8, how: Compaction },
    /// The model asks for a wakeup in its next turn.
    Wakeup { session: u8, delay_s: u64 },
    /// SIGKILL to pi.
    KillPi { session: u8 },
    /// SIGSTOP to pi, SIGCONT `for_s` later (if it still lives).
    Freeze { session: u8, for_s: u64 },
    /// SIGUSR1 to the server: every bridge connection drops (each connects again).
    DropBridges,
    /// The server is killed (SIGKILL; its pis lose their terminal and die); `pokeshell attach` brings
    /// it back from the saved list `back_s` later.
    CrashServer { back_s: u64 },
    /// SIGTERM to the server (it ends every pi and keeps the list); `pokeshell attach` `back_s` later.
    StopServer { back_s: u64 },
}

/// A prompt: `turns` tool-calling turns, then its ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    pub turns: u8,
    pub ending: Ending,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub at_ms: u64,
    pub act: Act,
}

/// Shape of the histories a run generates.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Simulated time the steps spread over (a quiet drain follows).
    pub minutes: u64,
    /// At most this many sessions are opened.
    pub max_sessions: u8,
}

fn task(rng: &mut Rng) -> Task {
    let ending = match rng.weighted(&[8, 1, 1]) {
        0 => Ending::Done,
        1 => Ending::Promise,
        _ => Ending::Empty,
    };
    Task {
        turns: rng.range(0, 6) as u8,
        ending,
    }
}

fn act(rng: &mut Rng, opened: &mut u8, shape: Shape) -> Act {
    let s = rng.range(0, 8) as u8;
    let c = rng.range(0, 8) as u8;
    // Weights: users act often, faults now and then, the server's end rarely.
    let weights = [4, 3, 2, 2, 16, 3, 2, 1, 3, 3, 3, 2, 2, 2, 2, 1, 1];
    match rng.weighted(&weights) {
        0 if *opened < shape.max_sessions => {
            *opened += 1;
            let prompt = rng.chance(30).then(|| task(rng));
            Act::OpenNew {
                dir: rng.range(0, 3) as u8,
                prompt,
            }
        }
        0 | 1 => Act::Attach { session: s },
        2 => Act::Detach { client: c },
        3 => Act::Close { client: c },
        4 => Act::Prompt {
            client: c,
            task: task(rng),
        },
        5 => Act::Esc { client: c },
        6 => Act::Poke { client: c },
        7 if rng.chance(30) => Act::Kill { session: s },
        7 | 8 => Act::Stall { session: s },
        9 => {
            let status = [429, 529, 503][rng.range(0, 3) as usize];
            let reset_s = rng.chance(50).then(|| rng.range(5, 400));
            Act::Provider {
                session: s,
                status,
                reset_s,
                lasts_s: rng.range(1, 600),
            }
        }
        10 => {
            let how = [Compaction::Threshold, Compaction::Overflow, Compaction::KillsTurn]
                [rng.range(0, 3) as usize];
            Act::Compact { session: s, how }
        }
        11 => Act::Wakeup {
            session: s,
            delay_s: rng.range(30, 1800),
        },
        12 => Act::KillPi { session: s },
        13 => Act::Freeze {
            session: s,
            for_s: rng.range(1, 200),
        },
        14 => Act::DropBridges,
        15 => Act::CrashServer {
            back_s: rng.range(1, 120),
        },
        _ => Act::StopServer {
            back_s: rng.range(1, 120),
        },
    }
}

/// The history seed `seed` names.
pub fn generate(seed: u64, shape: Shape) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let end = shape.minutes * 60_000;
    let mut at = 0;
    let mut opened = 0;
    let mut steps = vec![Step {
        at_ms: 0,
        act: Act::OpenNew {
            dir: 0,
            prompt: Some(task(&mut rng)),
        },
    }];
    opened += 1;
    loop {
        // Bursts and lulls: most gaps are seconds, some are many minutes.
        at += match rng.weighted(&[6, 3, 1]) {
            0 => rng.range(100, 5_000),
            1 => rng.range(5_000, 90_000),
            _ => rng.range(90_000, 1_200_000),
        };
        if at >= end {
            return steps;
        }
        steps.push(Step {
            at_ms: at,
            act: act(&mut rng, &mut opened, shape),
        });
    }
}
