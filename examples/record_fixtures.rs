//! Records real pi 1.6.0's terminal output into `tests/fixtures/pi/` for the replay tests
//! (`tests/fixtures_replay.rs`). Run it through `scripts/record-fixtures.sh`.
//!
//! pi runs in the test PTY harness against the scripted model. The recorder plays the host terminal
//! the way pokeshell does: every byte pi writes goes through `pokeshell::term::screen::Mirror` (a host that
//! answered nothing to pokeshell's start-up probe), whose answers go back to pi. One session is
//! recorded and cut into consecutive slices (start-up, a prompt and its answer, a tool call, two
//! resizes), each ending when pi has been quiet for a while.
//!
//! The fixtures are the bytes read from the PTY, not pi's `PI_TUI_WRITE_LOG`: that log holds only
//! what pi passes to `Terminal.write()`, while the kitty push and query, the first DA1,
//! modifyOtherKeys, bracketed paste and the window title go to stdout directly and never reach it.
//! The log is still taken and must be contained in the PTY stream: a check that the capture missed
//! nothing pi rendered.

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pokeshell::term::screen::{HostCaps, Mirror};
use support::fixtures::{self, Fixture};
use support::pi::{PiEnv, submit_prompt};
use support::pty::Pty;
use support::{ModelServer, Step, WAIT};

/// pi counts as done with a step once it has written nothing for this long.
const QUIET: Duration = Duration::from_millis(500);
/// How long a step may take to fall quiet.
const SETTLE_MAX: Duration = Duration::from_secs(20);

struct Recorder {
    pty: Pty,
    mirror: Mirror,
    /// Bytes of the PTY output already fed to the mirror.
    fed: usize,
}

impl Recorder {
    /// Waits up to `timeout` for output; feeds what came to the mirror and sends pi the answers.
    fn pump(&mut self, timeout: Duration) -> bool {
        if !self.pty.wait_for_output(self.fed, timeout) {
            return false;
        }
        let raw = self.pty.raw_output();
        self.mirror.process(&raw[self.fed..]);
        self.fed = raw.len();
        let replies = self.mirror.take_replies();
        if !replies.is_empty() {
            self.pty.send(replies);
        }
        true
    }

    /// Answers pi until `done` holds for the screen.
    fn wait(&mut self, what: &str, done: impl Fn(&vt100::Screen) -> bool) {
        let deadline = Instant::now() + WAIT;
        while !self.pty.with_screen(&done) {
            if Instant::now() >= deadline {
                self.pty
                    .fail(&format!("timed out after {WAIT:?} waiting for {what}"));
            }
            self.pump(Duration::from_millis(50));
        }
    }

    /// Answers pi until it has been quiet for `QUIET`; returns the end of the output so far.
    fn settle(&mut self) -> usize {
        let deadline = Instant::now() + SETTLE_MAX;
        while self.pump(QUIET) {
            if Instant::now() >= deadline {
                self.pty.fail(&format!("pi kept writing for {SETTLE_MAX:?}"));
            }
        }
        self.fed
    }

    fn resize(&mut self, fixture: Fixture) {
        self.mirror.resize(fixture.rows, fixture.cols);
        self.pty.resize(fixture.rows, fixture.cols);
    }
}

/// The longest run of `─` on one row: pi's editor border, as wide as pi's terminal.
fn rule_width(s: &vt100::Screen) -> usize {
    s.contents()
        .lines()
        .map(|l| {
            l.split(|c| c != '─')
                .map(|run| run.chars().count())
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

fn screen_has(text: &str) -> impl Fn(&vt100::Screen) -> bool + '_ {
    move |s| s.contents().contains(text)
}

/// Replaces every occurrence of `from` by `to`.
fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Splits terminal output into escape sequences (CSI, OSC, two-byte) and single other bytes.
fn tokens(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let len = match (bytes[i], bytes.get(i + 1)) {
            (0x1b, Some(b'[')) => bytes[i + 2..]
                .iter()
                .position(|b| (0x40..=0x7e).contains(b))
                .map_or(bytes.len() - i, |p| p + 3),
            (0x1b, Some(b']')) => {
                let body = &bytes[i + 2..];
                let bel = body.iter().position(|&b| b == 0x07).map(|p| p + 3);
                let st = body.windows(2).position(|w| w == b"\x1b\\").map(|p| p + 4);
                bel.into_iter().chain(st).min().unwrap_or(bytes.len() - i)
            }
            (0x1b, Some(_)) => 2,
            _ => 1,
        };
        out.push(&bytes[i..i + len]);
        i += len;
    }
    out
}

/// The runs of `big` left over when `small` is matched into it greedily, sequence by sequence;
/// `None` when `small` is not `big` with some sequences left out.
fn left_over(small: &[u8], big: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut runs: Vec<Vec<u8>> = Vec::new();
    let mut in_run = false;
    let small = tokens(small);
    let mut want = small.iter().peekable();
    for tok in tokens(big) {
        if want.peek() == Some(&&tok) {
            want.next();
            in_run = false;
        } else {
            if !in_run {
                runs.push(Vec::new());
                in_run = true;
            }
            if let Some(run) = runs.last_mut() {
                run.extend_from_slice(tok);
            }
        }
    }
    want.peek().is_none().then_some(runs)
}

fn record(out_dir: &Path) -> Vec<(Fixture, Vec<u8>)> {
    let server = ModelServer::start().expect("start the scripted model");
    let log_dir = tempfile::tempdir().expect("temp dir for pi's write log");
    let log = log_dir.path().join("tui.log");
    let env = PiEnv::builder(&server.base_url())
        .env("PI_TUI_WRITE_LOG", &log.to_string_lossy())
        .build();
    let version = env.run(&["--version"], WAIT);
    assert_eq!(
        version.stdout.trim(),
        fixtures::PI_VERSION,
        "the fixtures are pi {}'s output; this pi says:\n{version}",
        fixtures::PI_VERSION
    );
    let root = env
        .work_dir()
        .parent()
        .expect("the work dir is inside the temp root")
        .to_string_lossy()
        .into_owned();
    let first = fixtures::STARTUP;
    let pty = Pty::spawn(env.pty_command(&[]), first.rows, first.cols);
    let mut rec = Recorder {
        pty,
        mirror: Mirror::new(first.rows, first.cols, HostCaps::default()),
        fed: 0,
    };
    let mut marks = vec![0];

    // The same condition as the harness's `wait_for_tui`, while answering pi's queries.
    rec.wait("pi's footer with the mock model", |s| {
        s.contents()
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.contains("mock-model"))
    });
    marks.push(rec.settle());

    server.push(Step::text(fixtures::ANSWER_TEXT));
    submit_prompt(&mut rec.pty, &server, fixtures::PROMPT_TEXT, WAIT);
    rec.wait("the answer", screen_has(fixtures::ANSWER_TEXT));
    marks.push(rec.settle());

    server.push_all([
        Step::bash(fixtures::TOOL_COMMAND),
        Step::text(fixtures::TOOL_DONE_TEXT),
    ]);
    submit_prompt(&mut rec.pty, &server, fixtures::TOOL_PROMPT_TEXT, WAIT);
    rec.wait("the answer after the tool", screen_has(fixtures::TOOL_DONE_TEXT));
    marks.push(rec.settle());

    for fixture in [fixtures::RESIZE, fixtures::RESIZE_NARROW] {
        rec.resize(fixture);
        let width = usize::from(fixture.cols);
        rec.wait(&format!("pi's editor border {width} wide"), |s| {
            rule_width(s) == width
        });
        marks.push(rec.settle());
    }

    // pi is quiet: its write log and the PTY stream are both complete here.
    let raw = rec.pty.raw_output();
    check_write_log(&log, &raw);
    // Stops pi; its exit output comes after the last mark and is not kept.
    drop(rec);

    let placeholder = fixtures::ROOT_PLACEHOLDER;
    if root.len() != placeholder.len() {
        eprintln!(
            "warning: the temp root {root} is not {} bytes long like {placeholder}; \
             the paths are replaced anyway, but pi's padding around them changes",
            placeholder.len()
        );
    }
    let slices: Vec<(Fixture, Vec<u8>)> = fixtures::ALL
        .into_iter()
        .zip(marks.windows(2))
        .map(|(fixture, w)| {
            let bytes = normalise(&raw[w[0]..w[1]], &root, placeholder);
            (fixture, bytes)
        })
        .collect();
    std::fs::create_dir_all(out_dir).expect("create the fixture dir");
    for (fixture, bytes) in &slices {
        let path = out_dir.join(fixture.file);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
    slices
}

/// Makes a slice independent of the run: the temp root (pi's footer shows the work dir inside it)
/// becomes the placeholder.
fn normalise(bytes: &[u8], root: &str, placeholder: &str) -> Vec<u8> {
    replace_all(bytes, root.as_bytes(), placeholder.as_bytes())
}

/// The write log must be contained in what the PTY carried; says what only the PTY had.
fn check_write_log(log: &Path, pty_bytes: &[u8]) {
    let logged = std::fs::read(log).unwrap_or_else(|e| panic!("read pi's write log {}: {e}", log.display()));
    let Some(runs) = left_over(&logged, pty_bytes) else {
        panic!("pi's write log holds bytes the PTY never carried: the PTY capture is incomplete");
    };
    eprintln!(
        "PI_TUI_WRITE_LOG: {} bytes; the PTY carried {} bytes, these only through the PTY:",
        logged.len(),
        pty_bytes.len()
    );
    for run in runs {
        eprintln!("  {}", run.escape_ascii());
    }
}

fn main() {
    let out_dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(fixtures::dir);
    let slices = record(&out_dir);
    for (fixture, bytes) in slices {
        println!(
            "{:>8} bytes  {}  ({}x{})",
            bytes.len(),
            out_dir.join(fixture.file).display(),
            fixture.cols,
            fixture.rows
        );
    }
}
