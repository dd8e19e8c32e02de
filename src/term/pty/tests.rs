//! The PTY with real children: exit codes, signals, stops, output into the mirror.

use super::*;
use std::sync::mpsc;
use std::time::Duration;

use crate::term::screen::HostCaps;

fn run(spec: &CommandSpec) -> (ChildExit, String) {
    let (exit, text, _) = run_counting(spec);
    (exit, text)
}

fn run_counting(spec: &CommandSpec) -> (ChildExit, String, u32) {
    let mirror = Arc::new(Mutex::new(Mirror::new(10, 40, HostCaps::default())));
    let (tx, rx) = mpsc::channel();
    let child = ChildPty::spawn(
        spec,
        10,
        40,
        mirror.clone(),
        Arc::new(AtomicBool::new(false)),
        move |e| {
            let _ = tx.send(e);
        },
    )
    .expect("spawn");
    assert!(child.pid() > 0);
    let (mut code, mut closed, mut stops) = (None, false, 0);
    while code.is_none() || !closed {
        match rx
            .recv_timeout(Duration::from_secs(10))
            .expect("child should exit in time")
        {
            PtyEvent::Exited(c) => code = Some(c),
            PtyEvent::Closed => closed = true,
            PtyEvent::Output | PtyEvent::Quiet => {}
            PtyEvent::Stopped => {
                stops += 1;
                // SAFETY: continuing the process group we spawned.
                unsafe { libc::kill(-child.pid(), libc::SIGCONT) };
            }
        }
    }
    let exit = code.unwrap();
    let text = mirror.lock().unwrap().screen().contents();
    (exit, text, stops)
}

#[test]
fn a_stopped_child_is_reported_and_can_be_continued() {
    let (exit, text, stops) =
        run_counting(&CommandSpec::shell("sh -c 'kill -STOP $$; echo resumed; exit 3'"));
    assert_eq!(stops, 1);
    assert_eq!(exit.code, 3);
    assert!(text.contains("resumed"), "{text}");
}

#[test]
fn exit_code_and_output() {
    let (exit, text) = run(&CommandSpec::shell("sh -c 'echo hello; exit 7'"));
    assert_eq!(
        exit,
        ChildExit {
            code: 7,
            signal: None
        }
    );
    assert!(text.contains("hello"), "{text}");
}

#[test]
fn death_by_signal_is_128_plus_n() {
    let (exit, _) = run(&CommandSpec::shell("sh -c 'kill -TERM $$'"));
    assert_eq!(
        exit,
        ChildExit {
            code: 128 + libc::SIGTERM,
            signal: Some(libc::SIGTERM)
        }
    );
}

#[test]
fn environment_is_scrubbed_and_term_set() {
    let mut spec = CommandSpec::shell("sh -c 'echo T=$TERM K=${KITTY_WINDOW_ID:-none} P=$POKESHELL'");
    spec.env.push(("EXTRA".into(), "1".into()));
    // SAFETY: tests in this module do not read KITTY_WINDOW_ID concurrently.
    unsafe { std::env::set_var("KITTY_WINDOW_ID", "3") };
    let (_, text) = run(&spec);
    assert!(text.contains("T=xterm-256color K=none P=1"), "{text}");
}

/// Drives a child the way the session's loop does: events from the PTY threads, and reads of its
/// own while it has a quiet spell. Returns once `done` holds for the mirror, or `false` at
/// `until`; counts the loop's own reads in `own_reads`.
async fn drive_until(
    child: &mut ChildPty,
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<PtyEvent>,
    (mirror, pending): (&Mutex<Mirror>, &AtomicBool),
    (until, own_reads): (tokio::time::Instant, &mut u32),
    done: impl Fn(&vt100::Screen) -> bool,
) -> bool {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if done(mirror.lock().unwrap().screen()) {
            return true;
        }
        tokio::select! {
            ev = rx.recv() => match ev {
                Some(PtyEvent::Quiet) => child.take_quiet_spell(),
                // Taken: the next output is told again.
                Some(PtyEvent::Output) => pending.store(false, Ordering::Release),
                Some(_) => {}
                None => return false,
            },
            read = child.quiet_output(&mut buf) => {
                if child.took_quiet_output(read, &buf) {
                    *own_reads += 1;
                }
            }
            _ = tokio::time::sleep_until(until) => return false,
        }
    }
}

/// The rows of the screen but the last, whose every cell must be `fill`.
fn filled(screen: &vt100::Screen, fill: char) -> bool {
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    (0..rows - 1).all(|r| {
        (0..cols).all(|c| {
            screen
                .cell(r, c)
                .is_some_and(|cell| cell.contents() == fill.to_string())
        })
    })
}

#[test]
fn output_keeps_its_order_and_loses_nothing_while_the_reading_moves_between_loop_and_reader() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (rows, cols) = (40u16, 80u16);
        let mirror = Arc::new(Mutex::new(Mirror::new(rows, cols, HostCaps::default())));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // Each line read is answered on the last row, after a flood when it asks for one: quiet
        // spells and floods by turns, as a typed key's echo and a tool's output come. A flood
        // writes every cell above the last row once, with a letter of its own (about 30 KB, many
        // reads): a read lost leaves cells of the flood before, and a read parsed out of order
        // lets the flood overwrite the answer after it.
        let script = format!(
            "stty -echo; while read l; do case $l in f*) awk -v c=\"${{l#f}}\" 'BEGIN {{ for (r = 1; r < {rows}; r++) for (k = 1; k <= {cols}; k++) printf \"\\033[%d;%dH%s\", r, k, c }}';; esac; printf \"\\033[{rows};1H\\033[2Kgot %s\" \"$l\"; done"
        );
        let spec = CommandSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script],
            ..CommandSpec::shell("sh")
        };
        let pending = Arc::new(AtomicBool::new(false));
        let mut child = ChildPty::spawn(&spec, rows, cols, mirror.clone(), pending.clone(), move |e| {
            let _ = tx.send(e);
        })
        .expect("spawn");
        child.want_quiet_spells(true);
        let mut own_reads = 0;
        let mut fill = None;
        for i in 0..60u32 {
            let line = if i % 5 == 2 {
                let letter = char::from(b'A' + (i % 26) as u8);
                fill = Some(letter);
                format!("f{letter}")
            } else {
                format!("q{i}")
            };
            child.write(format!("{line}\n").into_bytes());
            let want = format!("got {line}");
            let until = tokio::time::Instant::now() + Duration::from_secs(10);
            let last_row = |s: &vt100::Screen| s.rows(0, cols).nth(usize::from(rows) - 1).unwrap_or_default();
            let shown = drive_until(&mut child, &mut rx, (&mirror, &pending), (until, &mut own_reads), |s| {
                last_row(s).trim_end() == want && fill.is_none_or(|f| filled(s, f))
            })
            .await;
            let text = mirror.lock().unwrap().screen().contents();
            assert!(shown, "after line {i} the screen shows every cell of the last flood and then the answer:\n{text}");
            // Every other line waits out a quiet spell first, so the loop gets the reading.
            if i % 2 == 0 {
                let spell = tokio::time::Instant::now() + Duration::from_millis(8);
                drive_until(&mut child, &mut rx, (&mirror, &pending), (spell, &mut own_reads), |_| false).await;
            }
        }
        assert!(own_reads > 10, "the loop read quiet output itself ({own_reads} reads)");
        // Given back, the reader reads to the end: the output closes.
        child.want_quiet_spells(false);
        signal_group(child.pid(), libc::SIGKILL);
        let closed = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(ev) = rx.recv().await {
                if matches!(ev, PtyEvent::Closed) {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(closed, Ok(true), "the output closed after the reading went back");
    });
}

/// Issue 34, medium 2: portable-pty replaces a missing working directory with `$HOME`; a child whose
/// directory is gone is not started at all, and the error says why.
#[test]
fn a_child_whose_directory_is_gone_is_not_started_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let gone = tmp.path().join("gone");
    let mut spec = CommandSpec::shell("pwd; sleep 5");
    spec.cwd = Some(gone.clone());
    let mirror = Arc::new(Mutex::new(Mirror::new(10, 40, HostCaps::default())));
    let spawned = ChildPty::spawn(&spec, 10, 40, mirror, Arc::new(AtomicBool::new(false)), |_| {});
    let err = spawned.err().expect("not started");
    let why = err.downcast_ref::<DirUnusable>().expect("a directory refusal");
    assert!(
        why.0.contains("gone") && why.0.contains(&gone.display().to_string()),
        "{why}"
    );
    // The twin: the same child in a directory that is there starts, there.
    std::fs::create_dir(&gone).unwrap();
    let (exit, text) = run(&spec_in(&gone));
    assert_eq!(exit.code, 0);
    assert!(text.contains("gone"), "{text}");
}

/// Issue 34, low 10: a session's directory that is a link pointed at another tree since the session
/// first started is not used: its pi would run in the other tree (or stop at pi's "Session cwd does
/// not exist"). A relaunch after a crash checks it as a restore does.
#[test]
fn a_child_whose_directory_now_leads_elsewhere_is_not_started() {
    let trees = super::LinkedTrees::in_temp_dir();
    let mut spec = spec_in(&trees.link);
    spec.cwd_real = super::resolve(&trees.link).map(Into::into);
    let (exit, _) = run(&spec);
    assert_eq!(exit.code, 0, "it leads where it did: started");
    trees.repoint();
    let mirror = Arc::new(Mutex::new(Mirror::new(10, 40, HostCaps::default())));
    let spawned = ChildPty::spawn(&spec, 10, 40, mirror, Arc::new(AtomicBool::new(false)), |_| {});
    let err = spawned.err().expect("not started in the other tree");
    let why = err.downcast_ref::<DirUnusable>().expect("a directory refusal");
    let b = trees.second.canonicalize().unwrap();
    assert!(
        why.0.contains(&format!("now leads to {}", b.display()))
            && why.0.contains("where the session started"),
        "{why}"
    );
}

fn spec_in(dir: &std::path::Path) -> CommandSpec {
    let mut spec = CommandSpec::shell("pwd");
    spec.cwd = Some(dir.to_path_buf());
    spec
}
