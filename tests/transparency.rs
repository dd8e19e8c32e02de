//! End to end: pi inside pokeshell's pane looks exactly as pi alone. The same scripted conversation
//! (markdown, a code block, a tool whose output is coloured, wide characters, a line that wraps, a
//! resize) runs twice against the scripted model in one isolated environment (same agent dir,
//! session dir, work dir, TERM and variables): (a) real pi 1.6.0 alone in a reference terminal of
//! the pane's size, the reference; (b) pokeshell hosting the same pi in the same kind of terminal.
//! At every checkpoint the pane's region of (b) must equal (a) cell by cell: text, wide cells,
//! colours, bold, faint, italic, underline, inverse, and the cursor (position and visibility). The
//! reference terminals: a PTY whose bytes vt100 0.18 parses, answering colour queries at once, or
//! only after a while, and tmux (`capture-pane -e`) answering none.

mod support;
mod transparency {
    pub mod answers;
    pub mod grid;
    pub mod subject;
    pub mod tmux;
}

use std::time::Duration;

use portable_pty::CommandBuilder;

use support::pi::PiEnv;
use support::pty::Pty;
use support::{ModelServer, Step, model_server};
use transparency::answers::Answerer;
use transparency::grid::Grid;
use transparency::subject::{Subject, Term};
use transparency::tmux::Tmux;

/// pokeshell's terminal before and after the resize; the pane is 120 − 32 (side pane) by 40 − 1
/// (footer), then the whole width of 90 (the side pane hides itself below 100 columns) by 30 − 1.
const HOST: (u16, u16) = (40, 120);
const PANE: (u16, u16) = (39, 88);
const HOST_AFTER: (u16, u16) = (30, 90);
const PANE_AFTER: (u16, u16) = (29, 90);

/// How long pokeshell's pane may take to show what pi alone showed at a checkpoint.
const CATCH_UP: Duration = Duration::from_secs(8);

const MARKDOWN: &str = "# Transparency check

Some **bold**, some *italic*, some `inline code`, and ~~struck~~ text.

- first item
- second item with 漢字かな and emoji 🎉👍

> a quoted line

```rust
fn main() {
    println!(\"hello, 世界\");
}
```

This line is long on purpose so that pi has to wrap it over more than one row of the pane, \
which is narrower than the text: alpha beta gamma delta epsilon zeta eta theta iota kappa lambda \
mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega.";

const COLOUR_COMMAND: &str =
    r"printf '\e[31mred\e[0m \e[1mbold\e[0m \e[2mdim\e[0m \e[4;32munder\e[0m 宽字\n'";

/// What happens, in order; each ends at a checkpoint where the two screens are compared.
enum Act {
    Start,
    Prompt { text: &'static str, shows: &'static str },
    Resize { host: (u16, u16), pane: (u16, u16) },
}

const SCRIPT: [(&str, Act); 4] = [
    ("start-up", Act::Start),
    (
        "markdown answer",
        Act::Prompt {
            text: "show me some markdown",
            shows: "omega.",
        },
    ),
    (
        "coloured tool output",
        Act::Prompt {
            text: "run the colour test",
            shows: "The colours came through.",
        },
    ),
    (
        "after the resize",
        Act::Resize {
            host: HOST_AFTER,
            pane: PANE_AFTER,
        },
    ),
];

/// The scripted model's answers, queued afresh for each run.
fn load(server: &ModelServer) {
    server.push_all([
        Step::text(MARKDOWN)
            .with_prompt_tokens(1200)
            .with_completion_tokens(300),
        Step::bash(COLOUR_COMMAND)
            .with_prompt_tokens(1600)
            .with_completion_tokens(40),
        Step::text("The colours came through.")
            .with_prompt_tokens(1700)
            .with_completion_tokens(20),
    ]);
}

/// What may differ between two runs, masked in both: how long the tool took (`Took 0.1s`).
fn mask(grid: &mut Grid) {
    for r in 0..grid.rows.len() {
        let line = grid.line(r);
        let text = line.trim();
        let Some(secs) = text.strip_prefix("Took ").and_then(|t| t.strip_suffix('s')) else {
            continue;
        };
        if secs.parse::<f64>().is_ok()
            && let Some((from, _)) = grid.find(r, "Took ")
        {
            let start = from + "Took ".len();
            grid.mask(r, (start, start + secs.len()));
        }
    }
}

/// Runs the script; `check` is called at each checkpoint with its name.
fn run(subject: &mut Subject, server: &ModelServer, mut check: impl FnMut(&str, &Subject)) {
    for (name, act) in &SCRIPT {
        match act {
            Act::Start => subject.wait_for_pi(),
            Act::Prompt { text, shows } => {
                subject.submit(server, text);
                subject.wait(&format!("{shows:?} on screen"), |t| t.contains(shows));
            }
            Act::Resize { host, pane } => {
                subject.rows = pane.0;
                subject.cols = pane.1;
                let size = if subject.is_pokeshell { *host } else { *pane };
                subject.term.resize(size.0, size.1);
                let width = usize::from(pane.1);
                subject.wait("pi's relayout", |t| {
                    t.lines()
                        .any(|l| l.chars().filter(|c| *c == '─').count() == width)
                });
            }
        }
        check(name, subject);
    }
}

/// Starts a command in a reference terminal of a size (rows, columns).
type Launch = fn(&CommandBuilder, (u16, u16)) -> Box<dyn Term>;

/// Runs the script with pi alone, then with pokeshell, both in terminals that `launch` starts, and
/// fails with every checkpoint where the pane differs from pi alone.
fn compare(launch: Launch) {
    compare_in(launch, &[]);
}

/// [`compare`] with extra variables in both environments.
fn compare_in(launch: Launch, vars: &[(&str, &str)]) {
    let server = model_server();
    let env = vars
        .iter()
        .fold(PiEnv::builder(&server.base_url()), |b, (k, v)| b.env(k, v))
        .build();

    load(&server);
    let mut alone = Subject::new(launch(&env.pty_command(&[]), PANE), PANE, false);
    let mut reference: Vec<Grid> = Vec::new();
    run(&mut alone, &server, |_, s| {
        let mut grid = s.settle();
        mask(&mut grid);
        reference.push(grid);
    });
    drop(alone);
    clear_sessions(&env);

    load(&server);
    let mut hosted = Subject::new(launch(&env.pokeshell_command(&[], &[]), HOST), PANE, true);
    let mut failures = Vec::new();
    let mut want = reference.iter();
    run(&mut hosted, &server, |name, s| {
        let Some(grid) = want.next() else {
            return;
        };
        if let Err(diff) = s.wait_equal(grid, mask, CATCH_UP) {
            failures.push(format!(
                "== {name}: the pane differs from pi alone ==\n{diff}--- pi alone ---\n{}\n",
                grid.text()
            ));
        }
    });
    assert!(
        failures.is_empty(),
        "{}\n--- pokeshell ---\n{}",
        failures.join("\n"),
        hosted.term.dump()
    );
}

/// A terminal that answers colour queries and DA1, as most do.
fn answering(cmd: &CommandBuilder, (rows, cols): (u16, u16)) -> Box<dyn Term> {
    let answerer = Answerer::default();
    Box::new(Pty::spawn_answering(cmd.clone(), rows, cols, move |chunk| {
        answerer.answer(chunk)
    }))
}

/// A terminal that learns its colours 300 ms after it starts, as tmux does from a client that
/// attaches: pokeshell's start-up probe comes before that, pi's colour query after.
fn late_colours(cmd: &CommandBuilder, (rows, cols): (u16, u16)) -> Box<dyn Term> {
    let answerer = Answerer::learning_colours_after(Duration::from_millis(300));
    Box::new(Pty::spawn_answering(cmd.clone(), rows, cols, move |chunk| {
        answerer.answer(chunk)
    }))
}

/// A terminal that answers nothing: pi then draws its muted text faint (SGR 2).
fn silent(cmd: &CommandBuilder, (rows, cols): (u16, u16)) -> Box<dyn Term> {
    Box::new(Pty::spawn(cmd.clone(), rows, cols))
}

fn tmux(cmd: &CommandBuilder, (rows, cols): (u16, u16)) -> Box<dyn Term> {
    Box::new(Tmux::start(cmd, rows, cols))
}

/// NO_COLOR is set too: it asks programs not to colour their own output; pi does not read it, so
/// pokeshell may not drop pi's colours either.
#[test]
fn in_a_terminal_that_reports_its_colours_the_pane_is_pi_alone_cell_for_cell() {
    compare_in(answering, &[("NO_COLOR", "1")]);
}

/// The issue's finding: inside pokeshell pi drew its footer faint where pi alone did not, because
/// pokeshell answered pi's colour query from what the terminal said at pokeshell's start.
#[test]
fn when_the_terminal_learns_its_colours_late_the_pane_is_pi_alone_cell_for_cell() {
    compare(late_colours);
}

/// pi draws its muted text faint (SGR 2) when the terminal reports no colours. tmux is the
/// reference when it is installed: it keeps bold and faint apart where vt100 0.18 holds one intensity
/// per cell, so pi's own bytes drawn by tmux are the stricter model; otherwise a PTY that answers
/// nothing.
#[test]
fn in_a_terminal_that_answers_nothing_the_pane_is_pi_alone_cell_for_cell() {
    if transparency::tmux::available() {
        compare(tmux);
    } else {
        eprintln!("tmux is not installed: the PTY reference stands in for it");
        compare(silent);
    }
}

/// pi alone's session is not pokeshell's: the second run starts from the same empty session dir.
fn clear_sessions(env: &PiEnv) {
    for entry in std::fs::read_dir(env.session_dir())
        .expect("read the session dir")
        .flatten()
    {
        let path = entry.path();
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.expect("clear the session dir");
    }
}
