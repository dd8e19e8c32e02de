//! Machines over a real `sshd` on 127.0.0.1 (tests/machines/sshd.rs): "another machine" is this
//! host reached through sshd, whose `command=` runs pokeshell with a state and runtime dir of its
//! own. `ls --all` lists this machine's and the other's sessions (real pi against the scripted
//! model on both), a machine that is down or hangs is listed unreachable without holding up the
//! rest, a stopped sshd leaves the other's last known sessions; `attach DEST:NAME` shows the
//! remote pi's screen through `ssh -t` and types into it; `diff DEST:NAME` shows a remote session's
//! changes here; a remote without pokeshell, of another
//! version, that fails to authenticate, prints garbage or floods, gets a clear message.

#[path = "machines/sshd.rs"]
mod sshd;
mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use serde_json::{Value, json};
use sshd::{Silent, Sshd, closed_port};
use support::pi::{PiEnv, pi_path};
use support::pty::{Pty, ServerHome};
use support::{ModelServer, START_WAIT, Step, WAIT, model_server};

const PREFIX: u8 = 0x1d;
/// Generous: a 2-core machine under load takes seconds for a handful of ssh logins at once.
const TIMEOUT_SECS: u64 = 20;
/// For the phase where machines hang: each call then takes this long.
const HANG_TIMEOUT_SECS: u64 = 6;

fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A directory holding `pokeshell` (this build) for a remote PATH.
fn bin_dir(root: &Path) -> std::path::PathBuf {
    let dir = root.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("pokeshell");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pokeshell"), &link).unwrap();
    }
    dir
}

/// The other machine's login script: its own state and runtime dirs, pi's isolated environment,
/// this build of pokeshell on its PATH.
fn other_machine(home: &ServerHome, env: &PiEnv) -> String {
    let mut lines = Vec::new();
    for (k, v) in env.env_vars() {
        let v = if k == "PATH" {
            format!("{}:{v}", bin_dir(&home.state_dir()).display())
        } else {
            v
        };
        if k != "TERM" {
            lines.push(format!("export {k}={}", sq(&v)));
        }
    }
    lines.push("export TERM=\"${TERM:-xterm-256color}\"".into());
    lines.push(format!(
        "export XDG_RUNTIME_DIR={}",
        sq(&home.runtime_dir().to_string_lossy())
    ));
    lines.push(format!(
        "export XDG_STATE_HOME={}",
        sq(&home.state_dir().to_string_lossy())
    ));
    lines.push(format!(
        "export POKESHELL_PI={}",
        sq(&pi_path().to_string_lossy())
    ));
    lines.push(format!("cd {}", sq(&env.work_dir().to_string_lossy())));
    lines.push("exec sh -c \"$SSH_ORIGINAL_COMMAND\"".into());
    lines.join("\n")
}

/// This machine: its own pi environment, state and runtime dirs, and ssh pointed at the test's sshd.
struct Here {
    env: PiEnv,
    home: ServerHome,
    ssh: String,
}

impl Here {
    fn new(model: &ModelServer, machines: &str, ssh: String) -> Here {
        let env = PiEnv::builder(&model.base_url())
            .settings(json!({"pokeshell": {"machines": machines, "machineTimeoutSeconds": TIMEOUT_SECS}}))
            .build();
        Here {
            env,
            home: ServerHome::new(),
            ssh,
        }
    }

    /// Rewrites `pokeshell.machines` and the timeout in the global settings.
    fn set_machines(&self, machines: &str, timeout: u64) {
        let path = self.env.agent_dir().join("settings.json");
        let mut settings: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        settings["pokeshell"] = json!({"machines": machines, "machineTimeoutSeconds": timeout});
        std::fs::write(&path, settings.to_string()).unwrap();
    }

    fn vars(&self) -> Vec<(String, String)> {
        let mut vars = self.env.env_vars();
        vars.push((
            "XDG_RUNTIME_DIR".into(),
            self.home.runtime_dir().to_string_lossy().into(),
        ));
        vars.push((
            "XDG_STATE_HOME".into(),
            self.home.state_dir().to_string_lossy().into(),
        ));
        vars.push(("POKESHELL_SSH".into(), self.ssh.clone()));
        vars
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_pokeshell"))
            .args(args)
            .env_clear()
            .envs(self.vars())
            .current_dir(self.env.work_dir())
            .stdin(Stdio::null())
            .output()
            .expect("run pokeshell")
    }

    fn pty(&self, args: &[&str]) -> Pty {
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
        cmd.args(args);
        cmd.env_clear();
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
        cmd.cwd(self.env.work_dir());
        Pty::spawn(cmd, 30, 110)
    }

    /// `ls --all --json`, and how long it took.
    fn ls_all(&self) -> (Value, Duration) {
        let started = Instant::now();
        let out = self.run(&["ls", "--all", "--json"]);
        let took = started.elapsed();
        assert!(out.status.success(), "ls --all --json: {out:?}");
        (
            serde_json::from_slice(&out.stdout).expect("ls --all --json is JSON"),
            took,
        )
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn machine<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["machines"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["machine"] == name))
        .unwrap_or_else(|| panic!("no machine {name} in {doc}"))
}

fn session<'a>(doc: &'a Value, machine: &str, name: &str) -> Option<&'a Value> {
    doc["sessions"]
        .as_array()?
        .iter()
        .find(|s| s["machine"] == machine && s["name"] == name)
}

/// Starts the session `far` on the other machine with `new --on`.
fn start_far(here: &Here, remote: &PiEnv) {
    let sessions = remote.session_dir().to_string_lossy().into_owned();
    let out = here.run(&[
        "new",
        "--on",
        "other",
        "-d",
        "--name",
        "far",
        "--",
        "--session-dir",
        &sessions,
    ]);
    assert!(out.status.success(), "new --on other: {}", text(&out));
    assert!(text(&out).contains("started session 1:far"), "{}", text(&out));
}

#[test]
fn ls_all_lists_both_machines_and_the_unreachable_ones_without_waiting_for_each() {
    let model = model_server();
    let mut sshd = Sshd::start();
    let remote_home = ServerHome::new();
    let remote = PiEnv::new(&model.base_url());
    sshd.machine("other", &other_machine(&remote_home, &remote));
    sshd.elsewhere("down", closed_port());
    let (hang, hang2) = (Silent::start(), Silent::start());
    sshd.elsewhere("hang", hang.port);
    sshd.elsewhere("hang2", hang2.port);
    let here = Here::new(&model, "other", sshd.ssh_command());

    let pi = pi_path().to_string_lossy().into_owned();
    let sessions = here.env.session_dir().to_string_lossy().into_owned();
    let out = here.run(&[
        "new",
        "-d",
        "--name",
        "near",
        "--pi",
        &pi,
        "--",
        "--session-dir",
        &sessions,
    ]);
    assert!(out.status.success(), "new -d here: {}", text(&out));
    start_far(&here, &remote);

    let deadline = Instant::now() + WAIT;
    let (_, took) = loop {
        let (doc, took) = here.ls_all();
        let ready = |m, n| session(&doc, m, n).is_some_and(|s| s["attention"] == "idle");
        if ready("local", "near") && ready("other", "far") {
            break (doc, took);
        }
        assert!(
            Instant::now() < deadline,
            "both sessions never came up idle: {doc:#}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(took < Duration::from_secs(TIMEOUT_SECS));
    eprintln!("ls --all with one machine up took {took:?}");
    here.set_machines("other, down", HANG_TIMEOUT_SECS);
    let (doc, took) = here.ls_all();
    eprintln!("ls --all with one machine up and one down took {took:?}");
    assert_eq!(machine(&doc, "down")["reachable"], false);
    here.set_machines("other, down, hang, hang2", HANG_TIMEOUT_SECS);
    let (doc, took) = here.ls_all();
    eprintln!("ls --all with one machine down and two hanging took {took:?}");
    assert_eq!(machine(&doc, "other")["reachable"], true);
    let far = session(&doc, "other", "far").unwrap();
    assert_eq!(far["dir"], remote.work_dir().to_string_lossy().as_ref());
    assert_eq!(far["stale"], false);
    let down = machine(&doc, "down");
    assert_eq!(down["reachable"], false);
    assert!(
        down["error"].as_str().unwrap().contains("Connection refused"),
        "{down}"
    );
    for m in ["hang", "hang2"] {
        let m = machine(&doc, m);
        assert_eq!(
            m["error"],
            format!("no answer within {HANG_TIMEOUT_SECS} s"),
            "{m}"
        );
    }
    // Asked one after the other, the two hanging machines alone would take twice the timeout.
    assert!(
        took < Duration::from_secs(HANG_TIMEOUT_SECS * 2) - Duration::from_millis(500),
        "the machines were not asked in parallel: {took:?}"
    );

    let out = here.run(&["ls", "--all"]);
    let listing = text(&out);
    assert!(out.status.success(), "{listing}");
    assert!(listing.starts_with("MACHINE"), "{listing}");
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("other") && l.contains("1:far") && l.contains("idle")),
        "{listing}"
    );
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("local") && l.contains("1:near")),
        "{listing}"
    );
    assert!(
        listing.contains(&format!(
            "hang: unreachable: no answer within {HANG_TIMEOUT_SECS} s; it never answered"
        )),
        "{listing}"
    );

    // The other machine goes away: its last answer is still listed, marked, with its age.
    sshd.stop();
    here.set_machines("other", TIMEOUT_SECS);
    let (doc, _) = here.ls_all();
    let other = machine(&doc, "other");
    assert_eq!(other["reachable"], false, "{doc:#}");
    assert!(
        other["error"].as_str().unwrap().contains("Connection refused"),
        "{other}"
    );
    assert!(other["as_of_ms"].as_u64().is_some(), "{other}");
    let far = session(&doc, "other", "far").expect("the last known session");
    assert_eq!(far["stale"], true);
    let out = here.run(&["ls", "--all"]);
    let listing = text(&out);
    assert!(listing.contains("(last known) idle"), "{listing}");
    assert!(listing.contains("other: unreachable: ssh failed:"), "{listing}");
    assert!(
        listing.contains("sessions shown as it reported them"),
        "{listing}"
    );
}

#[test]
fn attach_through_ssh_shows_the_remote_pi_and_types_into_it() {
    let model = model_server();
    let mut sshd = Sshd::start();
    let remote_home = ServerHome::new();
    let remote = PiEnv::new(&model.base_url());
    sshd.machine("other", &other_machine(&remote_home, &remote));
    let here = Here::new(&model, "other", sshd.ssh_command());
    start_far(&here, &remote);

    let out = here.run(&["attach", "other:nosuch"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("other has no session named \"nosuch\" (it has: 1:far)"),
        "{}",
        text(&out)
    );

    let mut pty = here.pty(&["attach", "other:far"]);
    pty.wait_until("the remote pi with pokeshell's side pane", START_WAIT, |s| {
        let t = s.contents();
        t.contains("mock/mock-model") && t.contains("connected")
    });
    model.push(Step::text("Answered from the other machine."));
    pty.send("which machine is this?");
    pty.send("\r");
    pty.wait_for_text("Answered from the other machine.", WAIT);
    assert_eq!(model.last_user_text().as_deref(), Some("which machine is this?"));
    pty.send([PREFIX, b'd']);
    assert_eq!(pty.wait_exit(WAIT), 0, "detaching ends ssh well");
    // The remote session goes on.
    let (doc, _) = here.ls_all();
    assert!(session(&doc, "other", "far").is_some(), "{doc:#}");
}

#[test]
fn diff_through_ssh_shows_the_remote_session_s_changes_here() {
    let model = model_server();
    let mut sshd = Sshd::start();
    let remote_home = ServerHome::new();
    let remote = PiEnv::new(&model.base_url());
    let dir = remote.work_dir();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=T", "-c", "user.email=t@example.invalid"])
            .args(args)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("far.txt"), "one\n").unwrap();
    git(&["add", "far.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    sshd.machine("other", &other_machine(&remote_home, &remote));
    let here = Here::new(&model, "other", sshd.ssh_command());
    start_far(&here, &remote);
    std::fs::write(dir.join("far.txt"), "one\ntwo\n").unwrap();

    let deadline = Instant::now() + WAIT;
    let out = loop {
        let out = here.run(&["diff", "other:far"]);
        // The session records its base as it starts: until then the diff says none was recorded.
        if out.status.success() && !text(&out).contains("no base was recorded") {
            break out;
        }
        assert!(Instant::now() < deadline, "diff other:far: {}", text(&out));
        std::thread::sleep(Duration::from_millis(200));
    };
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(diff.contains("Changes of 1:far since "), "{diff}");
    assert!(
        diff.contains("modified far.txt (+1 -0)\n@@ -1 +1,2 @@\n one\n+two\n"),
        "{diff}"
    );
    assert!(
        !diff.contains('\x1b'),
        "plain here, as this side's output is a pipe"
    );
    let out = here.run(&["diff", "other:nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("no session named \"nosuch\""),
        "the remote's own words: {}",
        text(&out)
    );
}

#[test]
fn broken_machines_get_a_clear_message_and_hold_up_nothing() {
    let mut sshd = Sshd::start();
    sshd.machine("garbage", "echo 'Welcome to the machine'; echo 'not a listing'");
    sshd.machine("flood", "head -c 20000000 /dev/zero | tr '\\0' x");
    sshd.machine(
        "bare",
        "export PATH=/usr/bin:/bin\nexec sh -c \"$SSH_ORIGINAL_COMMAND\"",
    );
    sshd.machine(
        "older",
        "echo \"error: unexpected argument '--json' found\" >&2; exit 2",
    );
    sshd.machine(
        "newer",
        "echo '{\"schema\":2,\"version\":\"9.9.9\",\"sessions\":[]}'",
    );
    // Issue 34, low 4: another machine's words reached this terminal raw (a clipboard write here).
    sshd.machine(
        "hostile",
        "printf '%s\\n' '{\"schema\":2,\"version\":\"9.9.9\\u001b]52;c;eA==\\u0007\",\"sessions\":[]}'",
    );
    sshd.stranger("stranger");
    let model = model_server();
    let here = Here::new(
        &model,
        "garbage flood bare older newer hostile stranger nosuch.invalid",
        sshd.ssh_command(),
    );
    let (doc, took) = here.ls_all();
    eprintln!("ls --all over seven broken machines took {took:?}");
    let error = |m| machine(&doc, m)["error"].as_str().unwrap_or_default().to_string();
    assert!(error("garbage").contains("answered something else"), "{doc:#}");
    assert!(error("garbage").contains("Welcome to the machine"), "{doc:#}");
    assert!(error("flood").contains("more than 4 MiB"), "{doc:#}");
    assert!(
        error("bare").contains("pokeshell is not installed there"),
        "{doc:#}"
    );
    assert!(error("older").contains("older version"), "{doc:#}");
    assert!(
        error("newer").contains("9.9.9") && error("newer").contains("schema 2"),
        "{doc:#}"
    );
    assert!(error("stranger").contains("Permission denied"), "{doc:#}");
    assert!(error("nosuch.invalid").contains("ssh failed"), "{doc:#}");
    assert!(doc["sessions"].as_array().unwrap().is_empty());

    for (args, says) in [
        (
            vec!["attach", "garbage:x"],
            "garbage: its `pokeshell ls --json` answered something else",
        ),
        (vec!["attach", "stranger:x"], "Permission denied"),
        (
            vec!["new", "--on", "bare", "-d"],
            "bare: pokeshell is not installed there",
        ),
        (
            vec!["new", "--on", "newer", "-d"],
            "install the same version on both",
        ),
    ] {
        let out = here.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
    }
    for args in [vec!["attach", "hostile:x"], vec!["new", "--on", "hostile", "-d"]] {
        let out = here.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains("9.9.9\\x1b]52;c;eA=="),
            "{args:?}: {}",
            text(&out)
        );
        assert!(
            !out.stderr.contains(&0x1b) && !out.stdout.contains(&0x1b),
            "{args:?}: raw escapes reached the terminal: {}",
            text(&out)
        );
    }
    assert!(
        sshd.log().is_empty() || !sshd.log().contains("fatal"),
        "{}",
        sshd.log()
    );
}

#[test]
fn the_switcher_lists_the_other_machines_sessions_and_choosing_one_goes_there() {
    let model = model_server();
    model.set_default(Step::text("Either machine gets this answer."));
    let mut sshd = Sshd::start();
    let remote_home = ServerHome::new();
    let remote = PiEnv::new(&model.base_url());
    sshd.machine("other", &other_machine(&remote_home, &remote));
    let here = Here::new(&model, "other", sshd.ssh_command());
    let sessions = remote.session_dir().to_string_lossy().into_owned();
    let out = here.run(&[
        "new",
        "--on",
        "other",
        "-d",
        "--name",
        "far",
        "--",
        "--session-dir",
        &sessions,
        "hello far away",
    ]);
    assert!(out.status.success(), "new --on other: {}", text(&out));

    let pi = pi_path().to_string_lossy().into_owned();
    let local_sessions = here.env.session_dir().to_string_lossy().into_owned();
    let mut pty = here.pty(&["--pi", &pi, "--", "--session-dir", &local_sessions]);
    pty.wait_until("the other machine's session in the side pane", START_WAIT, |s| {
        support::shell::side(s).contains("other:far")
    });
    pty.send([PREFIX, b'w']);
    pty.wait_for_text("Enter show", WAIT);
    // The label with its machine: "far" alone also matches a temp dir such as /tmp/…FUCRAq/work.
    pty.send("other:far");
    pty.wait_until("only the other machine's session", WAIT, |s| {
        let t = s.contents();
        t.contains("other:far") && !t.contains("1* ")
    });
    pty.send("\r");
    pty.wait_until("the other machine's pi, through ssh", WAIT, |s| {
        let t = s.contents();
        t.contains("hello far away") && t.contains("Either machine gets this answer.")
    });
    pty.send([PREFIX, b'd']);
    assert_eq!(
        pty.wait_exit(WAIT),
        0,
        "detaching there ends ssh and this client well"
    );
    let out = here.run(&["ls"]);
    assert!(
        text(&out).contains("1:work"),
        "this machine's session goes on: {}",
        text(&out)
    );
}
