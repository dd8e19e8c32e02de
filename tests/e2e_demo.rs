//! End to end: `pokeshell demo` with real pi 1.6.0.

mod support;

use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use support::pi::pi_path;
use support::pty::Pty;
use support::shell::{footer, side};
use tempfile::TempDir;

const EXE: &str = env!("CARGO_BIN_EXE_pokeshell");

/// A chapter of the built-in tour takes about 15 s; each wait gets a generous bound.
const CHAPTER: Duration = Duration::from_secs(40);

/// A private HOME, state, cache and temp dir, so the demo touches nothing of this machine and its
/// leftovers can be checked.
struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("pokeshell-demo-test-")
            .tempdir()
            .expect("temp dir");
        for sub in ["home", "state", "cache", "tmp"] {
            std::fs::create_dir(dir.path().join(sub)).expect("sandbox dir");
        }
        Sandbox { dir }
    }

    fn path(&self, sub: &str) -> std::path::PathBuf {
        self.dir.path().join(sub)
    }

    fn vars(&self, path_var: &str) -> Vec<(String, String)> {
        let p = |s: &str| self.path(s).to_string_lossy().into_owned();
        vec![
            ("PATH".into(), path_var.into()),
            ("HOME".into(), p("home")),
            ("XDG_STATE_HOME".into(), p("state")),
            ("XDG_CACHE_HOME".into(), p("cache")),
            ("TMPDIR".into(), p("tmp")),
            ("TERM".into(), "xterm-256color".into()),
            ("LANG".into(), "C.UTF-8".into()),
            ("POKESHELL_PROBE_TIMEOUT_MS".into(), "50".into()),
        ]
    }

    /// `pokeshell demo ARGS` in a 45×140 terminal, hosting the test pi.
    fn spawn(&self, args: &[&str]) -> Pty {
        let mut cmd = CommandBuilder::new(EXE);
        cmd.arg("demo");
        cmd.arg("--pi");
        cmd.arg(pi_path());
        cmd.args(args);
        cmd.env_clear();
        let path = std::env::var("PATH").unwrap_or_default();
        for (k, v) in self.vars(&path) {
            cmd.env(k, v);
        }
        cmd.cwd(self.dir.path());
        Pty::spawn(cmd, 45, 140)
    }

    /// The demo's server sockets: those in the demo's own directories, and whether the user's
    /// own server directory (the usual runtime dir: TMPDIR here, without XDG_RUNTIME_DIR) has one.
    fn server_sockets(&self) -> (Vec<std::path::PathBuf>, bool) {
        let own: Vec<_> = self
            .demo_leftovers()
            .into_iter()
            .map(|d| self.path("tmp").join(d).join("server").join("socket"))
            .filter(|p| p.exists())
            .collect();
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        let users = self
            .path("tmp")
            .join(format!("pokeshell-{uid}"))
            .join("server")
            .join("socket")
            .exists();
        (own, users)
    }

    /// The demo's own temporary directories still present.
    fn demo_leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.path("tmp"))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("pokeshell-demo-"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Presses Enter until `done` holds (pi ignores Enter while it starts up).
fn submit_until(pty: &mut Pty, what: &str, done: impl Fn(&vt100::Screen) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        pty.send("\r");
        if pty.try_wait_until(Duration::from_millis(700), &done) {
            return;
        }
        if Instant::now() >= deadline {
            pty.fail(&format!("timed out waiting for {what}"));
        }
    }
}

#[test]
fn demo_plays_the_first_chapters_narrates_them_and_shows_the_recoveries() {
    let sandbox = Sandbox::new();
    let mut pty = sandbox.spawn(&["--chapters", "1-2"]);

    pty.wait_until("the narration of chapter 1", CHAPTER, |s| {
        side(s).contains("demo · chapter 1/11") && side(s).contains("A slow tool call")
    });
    assert!(
        pty.with_screen(|s| side(s).contains("leave: /quit")),
        "the side pane says how to leave\n{}",
        pty.dump()
    );
    // The demo runs as a session of a server, one of its own: its socket is in the demo's
    // directory, and the user's own server was neither started nor used.
    let (own, users) = sandbox.server_sockets();
    assert_eq!(own.len(), 1, "one server socket in the demo's directory: {own:?}");
    assert!(!users, "no server in the user's own runtime dir");
    pty.wait_for_text("Run the test suite and tell me how it went.", CHAPTER);
    pty.wait_until("the overdue tool in the footer", CHAPTER, |s| {
        footer(s).contains("⚠️ bash")
    });
    pty.wait_until("chapter 1's recovery narrated", CHAPTER, |s| {
        side(s).contains("✔ pokeshell marked the tool overdue")
    });
    pty.wait_for_text("All 42 tests passed.", CHAPTER);

    pty.wait_until("the narration of chapter 2", CHAPTER, |s| {
        side(s).contains("demo · chapter 2/11") && side(s).contains("Auto-abort")
    });
    pty.wait_until("the auto-abort", CHAPTER, |s| {
        footer(s).contains("aborted 'bash'") || side(s).contains("aborted the agent")
    });
    pty.wait_until("chapter 2's recovery narrated", CHAPTER, |s| {
        side(s).contains("✔ pokeshell aborted the stuck call")
    });
    pty.wait_for_text("Command aborted", CHAPTER);

    pty.wait_until("the end of the range", CHAPTER, |s| {
        side(s).contains("Tour over: 2 of 2 stalls handled")
    });

    // Free typing: nothing is queued any more, so the model answers plainly.
    pty.send("hello there");
    pty.wait_for_text("hello there", CHAPTER);
    submit_until(&mut pty, "the scripted model's plain answer", |s| {
        s.contents().contains("scripted demo model, not a real one")
    });

    pty.send("/quit");
    pty.wait_for_text("/quit", CHAPTER);
    pty.send("\r");
    let code = pty.wait_exit(CHAPTER);
    assert_eq!(code, 0, "pi's own exit code\n{}", pty.dump());
    assert_eq!(
        sandbox.demo_leftovers(),
        Vec::<String>::new(),
        "the demo removes its temporary directory"
    );
    assert!(
        !sandbox.path("state").join("pokeshell").exists(),
        "the demo's ledger stays in the demo's own directory"
    );
}

#[test]
fn demo_later_chapters_each_get_their_recovery() {
    let sandbox = Sandbox::new();
    let pty = sandbox.spawn(&["--chapters", "3-7"]);
    pty.wait_until("chapter 3 under way", CHAPTER, |s| {
        side(s).contains("demo · chapter 3/11")
    });
    pty.wait_until("pi's compaction", CHAPTER, |s| {
        s.contents().contains("Compacted from")
    });
    pty.wait_for_text("Back on track after the compaction", CHAPTER);
    pty.wait_until("chapter 5 under way", 2 * CHAPTER, |s| {
        side(s).contains("demo · chapter 5/11")
    });
    pty.wait_for_text("the demo's guard refuses rm -rf", CHAPTER);
    pty.wait_for_text("rm -rf is refused in this folder every time", CHAPTER);
    pty.wait_until("the wakeup delivered", 2 * CHAPTER, |s| {
        s.contents()
            .contains("[scheduled wakeup: waiting for the nightly build]")
    });
    // Every chapter counts as handled only once the supervisor wrote the records it expects
    // (POKE-W4, SAR-S8, SAR-L4, WAK-T3, HO-T1).
    pty.wait_until("the tally of the range", 2 * CHAPTER, |s| {
        side(s).contains("Tour over: 5 of 5 stalls handled")
    });
}

/// Whitespace collapsed, so a wrapped side pane line reads as one sentence.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn demo_crash_chapter_relaunches_pi_and_the_agent_carries_on() {
    let sandbox = Sandbox::new();
    let pty = sandbox.spawn(&["--chapters", "11"]);
    pty.wait_until("the narration of chapter 11", CHAPTER, |s| {
        side(s).contains("demo · chapter 11/11") && side(s).contains("pi crashes mid-run")
    });
    pty.wait_until("pi relaunched and the work picked up", 2 * CHAPTER, |s| {
        s.contents().contains("Back after the restart") && flat(&side(s)).contains("restarted: pi was killed")
    });
    pty.wait_until("chapter 11's recovery narrated", CHAPTER, |s| {
        flat(&side(s)).contains("✔ pokeshell relaunched pi on its session")
    });
}

#[test]
fn demo_promise_chapter_quotes_the_step_and_the_agent_runs_the_tests() {
    let sandbox = Sandbox::new();
    let pty = sandbox.spawn(&["--chapters", "10"]);
    pty.wait_until("the narration of chapter 10", CHAPTER, |s| {
        side(s).contains("demo · chapter 10/11") && side(s).contains("A run that ends on a promise")
    });
    pty.wait_until("the tests ran after the poke", CHAPTER, |s| {
        s.contents().contains("All 42 tests pass")
    });
    pty.wait_until("chapter 10's recovery narrated", CHAPTER, |s| {
        flat(&side(s)).contains("✔ pokeshell quoted the announced step")
    });
}

#[test]
fn demo_stalled_stream_and_rate_limit_chapters_each_get_their_recovery() {
    let sandbox = Sandbox::new();
    let pty = sandbox.spawn(&["--chapters", "8-9"]);
    pty.wait_until("chapter 8 under way", CHAPTER, |s| {
        side(s).contains("demo · chapter 8/11") && side(s).contains("A stalled stream")
    });
    pty.wait_for_text("Let me check the config", CHAPTER);
    pty.wait_for_text("Picking up again after the stalled stream", CHAPTER);
    pty.wait_until("chapter 8's recovery narrated", CHAPTER, |s| {
        side(s).contains("✔ pokeshell stopped the stalled stream")
    });
    pty.wait_until("chapter 9 under way", CHAPTER, |s| {
        side(s).contains("demo · chapter 9/11") && side(s).contains("A rate limit")
    });
    pty.wait_until("the limit countdown in the footer", CHAPTER, |s| {
        footer(s).contains("⏸ limit 0:0")
    });
    pty.wait_for_text("The rate limit is over", CHAPTER);
    // Both count as handled only once the supervisor wrote STALL-S1 and LIMIT-W1 records.
    pty.wait_until("the tally of the range", CHAPTER, |s| {
        side(s).contains("Tour over: 2 of 2 stalls handled")
    });
}

#[test]
fn demo_with_a_plain_script_lets_the_user_type_and_answers_from_the_file() {
    let sandbox = Sandbox::new();
    let script = sandbox.path("stall.json");
    std::fs::write(
        &script,
        r#"{"title":"my stall","steps":[{"type":"text","text":"first scripted answer from the file"}]}"#,
    )
    .expect("write the script");
    let mut pty = sandbox.spawn(&["--script", script.to_str().expect("utf-8 path")]);
    pty.wait_until("the script's narration", CHAPTER, |s| {
        side(s).contains("demo · my stall") && side(s).contains("Type a prompt")
    });
    pty.wait_until("the bridge connected", CHAPTER, |s| {
        side(s).contains("connected") && !side(s).contains("not connected")
    });
    pty.send("reproduce it");
    pty.wait_for_text("reproduce it", CHAPTER);
    submit_until(&mut pty, "the file's answer", |s| {
        s.contents().contains("first scripted answer from the file")
    });
    pty.signal(libc::SIGTERM);
    pty.wait_exit(CHAPTER);
    assert_eq!(sandbox.demo_leftovers(), Vec::<String>::new());
}

#[test]
fn demo_detached_with_prefix_d_ends_pi_its_own_server_and_its_directory() {
    let sandbox = Sandbox::new();
    let script = sandbox.path("plain.json");
    std::fs::write(&script, r#"{"steps":[{"type":"text","text":"unused"}]}"#).expect("write the script");
    let mut pty = sandbox.spawn(&["--script", script.to_str().expect("utf-8 path")]);
    pty.wait_until("the bridge connected", CHAPTER, |s| {
        side(s).contains("connected") && !side(s).contains("not connected")
    });
    let pi: i32 = pty
        .with_screen(|s| {
            side(s)
                .lines()
                .find_map(|l| l.strip_prefix("pid").and_then(|r| r.trim().parse().ok()))
        })
        .unwrap_or_else(|| pty.fail("pi's pid in the side pane"));
    assert_eq!(sandbox.server_sockets().0.len(), 1, "the demo's own server runs");

    // The prefix (Ctrl+]) and d: in any other session a detach; the demo's server is throw-away.
    pty.send("\x1d");
    pty.send("d");
    let code = pty.wait_exit(CHAPTER);
    assert_eq!(code, 0, "a detach is no failure\n{}", pty.dump());
    assert!(
        pty.with_screen(|s| s.contents().contains("the demo ends with it")),
        "says why the demo ended\n{}",
        pty.dump()
    );
    assert!(
        !std::path::Path::new(&format!("/proc/{pi}")).exists(),
        "pi ended with the demo"
    );
    assert_eq!(sandbox.demo_leftovers(), Vec::<String>::new());
}

#[test]
fn demo_without_pi_says_what_is_missing_and_exits_127() {
    let sandbox = Sandbox::new();
    let out = std::process::Command::new(EXE)
        .arg("demo")
        .env_clear()
        .envs(sandbox.vars(""))
        .current_dir(sandbox.dir.path())
        .output()
        .expect("run pokeshell demo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(127), "{stderr}");
    assert!(stderr.contains("pokeshell demo --install-pi"), "{stderr}");
    assert!(
        stderr.contains("npm install -g @earendil-works/pi-coding-agent@1.6.0"),
        "{stderr}"
    );
    let cache = sandbox.path("cache").join("pokeshell");
    assert!(
        stderr.contains(&cache.display().to_string()),
        "names the cache dir it would install into: {stderr}"
    );
    assert!(!cache.exists(), "nothing is installed without --install-pi");
    assert_eq!(sandbox.demo_leftovers(), Vec::<String>::new());
}

#[test]
fn demo_with_a_broken_script_names_the_file_and_the_problem() {
    let sandbox = Sandbox::new();
    let script = sandbox.path("broken.json");
    std::fs::write(
        &script,
        r#"{"chapters":[{"title":"t","about":"a","prompt":"p","expect":[{"rule":"NOPE"}]}]}"#,
    )
    .expect("write the script");
    let out = std::process::Command::new(EXE)
        .args(["demo", "--script"])
        .arg(&script)
        .env_clear()
        .envs(sandbox.vars(""))
        .output()
        .expect("run pokeshell demo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("broken.json") && stderr.contains("unknown rule \"NOPE\""),
        "{stderr}"
    );
    let out = std::process::Command::new(EXE)
        .args(["demo", "--chapters", "12"])
        .env_clear()
        .envs(sandbox.vars(""))
        .output()
        .expect("run pokeshell demo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no chapter 12"), "{stderr}");
}
