//! Real pi, idle, under pokeshell: one session with a client attached, and ten detached sessions under
//! one server. pi gets a model provider that nobody serves (it sends nothing while idle) and runs
//! offline. The window starts once `pokeshell ls` shows every session idle.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use super::private::Private;
use super::pty_run::{self, COLS, ROWS};

/// How long pi gets to start and settle, on a loaded machine.
const READY_LIMIT: Duration = Duration::from_secs(180);

/// pi's agent directory and a working directory, in a temp dir.
pub struct PiSetup {
    pub pi: PathBuf,
    dir: tempfile::TempDir,
}

impl PiSetup {
    pub fn new(root: &Path) -> Option<PiSetup> {
        let pi = root.join(".cache/pi/bin/pi");
        if !pi.exists() {
            eprintln!("idle: skipped, run scripts/setup-pi.sh first");
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(&agent).ok()?;
        std::fs::create_dir_all(dir.path().join("work")).ok()?;
        std::fs::write(
            agent.join("models.json"),
            r#"{"providers":{"mock":{"baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions","apiKey":"x","models":[{"id":"mock-model"}]}}}"#,
        )
        .ok()?;
        std::fs::write(
            agent.join("settings.json"),
            r#"{"defaultProvider":"mock","defaultModel":"mock-model"}"#,
        )
        .ok()?;
        Some(PiSetup { pi, dir })
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn env(&self) -> Vec<(String, String)> {
        let agent = self.dir.path().join("agent").to_string_lossy().into_owned();
        [
            ("TERM", "xterm-256color".to_string()),
            ("PI_CODING_AGENT_DIR", agent),
            ("PI_OFFLINE", "1".to_string()),
            ("PI_SKIP_VERSION_CHECK", "1".to_string()),
            ("PI_TELEMETRY", "0".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn pi_str(&self) -> &str {
        self.pi.to_str().expect("utf-8 path")
    }
}

/// A pokeshell command (`ls`, `kill`, `new`) of the run, with pi's environment.
fn command(bin: &Path, private: &Private, setup: &PiSetup, args: &[&str]) -> std::process::Command {
    let mut cmd = private.command(bin);
    cmd.args(args)
        .envs(setup.env())
        .current_dir(setup.work())
        .stdin(Stdio::null());
    cmd
}

/// The sessions `pokeshell ls` lists: (name, state).
fn listing(bin: &Path, private: &Private, setup: &PiSetup) -> Vec<(String, String)> {
    let Ok(out) = command(bin, private, setup, &["ls"])
        .stderr(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip_while(|l| !l.starts_with("SESSION"))
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect()
}

/// Waits until `pokeshell ls` shows `count` sessions, all idle, and the server runs nothing but
/// their pi (the `pi --version` checks a session starts with have ended).
fn wait_idle(bin: &Path, private: &mut Private, setup: &PiSetup, count: usize) -> bool {
    let deadline = Instant::now() + READY_LIMIT;
    loop {
        let list = listing(bin, private, setup);
        let others = private.pid().map(pty_run::descendants).map(|d| d.len());
        if list.len() == count && list.iter().all(|(_, state)| state == "idle") && others == Some(count) {
            return true;
        }
        if Instant::now() > deadline {
            eprintln!(
                "idle: the sessions did not all become idle: {list:?}; processes under the server: {others:?}"
            );
            return false;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Ends every session of the run with `pokeshell kill`.
fn kill_all(bin: &Path, private: &Private, setup: &PiSetup) {
    for (label, _) in listing(bin, private, setup) {
        // `ls` names a session "3:api": its number, then its name.
        let name = label.split_once(':').map_or(label.as_str(), |(n, _)| n);
        let status = command(bin, private, setup, &["kill", name])
            .stdout(Stdio::null())
            .status();
        assert!(status.is_ok_and(|s| s.success()), "pokeshell kill {name} failed");
    }
}

/// CPU ticks of every descendant of `pid`, by pid.
fn tree_ticks(pid: u32) -> Vec<(u32, u64)> {
    pty_run::descendants(pid)
        .into_iter()
        .filter_map(|p| Some((p, pty_run::cpu_ticks(p)?)))
        .collect()
}

/// How quiet the ten pi processes must be, together, before the server's share is measured: pi
/// starting (its runtime warming up, its first screens) keeps the server busy with what it draws,
/// and that is pi's start, not an idle session.
const SETTLED_PI_SHARE: f64 = 10.0;
/// The window pi's share is judged over.
const SETTLE_WINDOW_SECS: u64 = 2;

/// Waits until the processes under `server` use less than [`SETTLED_PI_SHARE`] of a core together,
/// or the deadline; `false`: they had not settled by then (the window is measured anyway).
fn wait_settled(server: u32, deadline: Instant) -> bool {
    loop {
        let before = tree_ticks(server);
        std::thread::sleep(Duration::from_secs(SETTLE_WINDOW_SECS));
        let used = tree_delta(&before, &tree_ticks(server));
        let pi_share = share(used, SETTLE_WINDOW_SECS);
        if pi_share < SETTLED_PI_SHARE {
            return true;
        }
        if Instant::now() > deadline {
            eprintln!("idle: pi still used {pi_share:.1}% of a core when the window began");
            return false;
        }
    }
}

/// The CPU ticks the processes of `after` used since `before` (a process new since counts whole).
fn tree_delta(before: &[(u32, u64)], after: &[(u32, u64)]) -> u64 {
    after
        .iter()
        .map(|(pid, t)| {
            let was = before.iter().find(|(p, _)| p == pid).map_or(0, |(_, t)| *t);
            t.saturating_sub(was)
        })
        .sum()
}

/// Share of one core (%) that `ticks` are over `secs`.
fn share(ticks: u64, secs: u64) -> f64 {
    ticks as f64 / pty_run::ticks_per_sec() / secs as f64 * 100.0
}

/// One pi with a client attached, idle for `secs`: the CPU share of one core and the peak RSS of
/// pokeshell's client and server together.
pub fn one(bin: &Path, setup: &PiSetup, secs: u64) -> Option<(f64, u64)> {
    let mut private = Private::new();
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .ok()?;
    let mut cmd = CommandBuilder::new(bin);
    cmd.args(["--pi", setup.pi_str(), "--", "--no-session"]);
    cmd.cwd(setup.work());
    for (k, v) in setup
        .env()
        .into_iter()
        .chain(private.env().into_iter().map(|(k, v)| (k.into(), v.into())))
    {
        cmd.env(k, v);
    }
    let mut child = pair.slave.spawn_command(cmd).ok()?;
    drop(pair.slave);
    let client = child.process_id()?;
    let mut reader = pair.master.try_clone_reader().ok()?;
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
    });
    let ready = wait_idle(bin, &mut private, setup, 1);
    let measured = private.pid().filter(|_| ready).and_then(|server| {
        let ticks = || Some(pty_run::cpu_ticks(client)? + pty_run::cpu_ticks(server)?);
        let t0 = ticks()?;
        std::thread::sleep(Duration::from_secs(secs));
        let t1 = ticks()?;
        let rss = pty_run::status_kb(client, "VmHWM:")? + pty_run::status_kb(server, "VmHWM:")?;
        Some((share(t1 - t0, secs), rss))
    });
    kill_all(bin, &private, setup);
    // The client ends with its session.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !matches!(child.try_wait(), Ok(Some(_))) {
        assert!(
            Instant::now() < deadline,
            "the attached client did not end with its session"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    private.end();
    measured
}

pub struct Ten {
    /// The server's CPU share of one core.
    pub server_cpu: f64,
    /// The server's RSS at the end of the window, and its peak, kB.
    pub server_rss_kb: u64,
    pub server_hwm_kb: u64,
    /// The ten pi processes' (and their children's) CPU share of one core, together.
    pub pi_cpu: f64,
}

/// Ten detached pi sessions under one server, idle for `secs`.
pub fn ten(bin: &Path, setup: &PiSetup, secs: u64) -> Option<Ten> {
    const COUNT: usize = 10;
    let mut private = Private::new();
    for n in 1..=COUNT {
        let name = format!("s{n}");
        let status = command(
            bin,
            &private,
            setup,
            &[
                "new",
                "-d",
                "--name",
                &name,
                "--pi",
                setup.pi_str(),
                "--",
                "--no-session",
            ],
        )
        .stdout(Stdio::null())
        .status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "pokeshell new -d --name {name} failed"
        );
    }
    let ready = wait_idle(bin, &mut private, setup, COUNT);
    let measured = private.pid().filter(|_| ready).and_then(|server| {
        wait_settled(server, Instant::now() + READY_LIMIT);
        let (s0, p0) = (pty_run::cpu_ticks(server)?, tree_ticks(server));
        std::thread::sleep(Duration::from_secs(secs));
        let (s1, p1) = (pty_run::cpu_ticks(server)?, tree_ticks(server));
        let pi_ticks = tree_delta(&p0, &p1);
        Some(Ten {
            server_cpu: share(s1 - s0, secs),
            server_rss_kb: pty_run::status_kb(server, "VmRSS:")?,
            server_hwm_kb: pty_run::status_kb(server, "VmHWM:")?,
            pi_cpu: share(pi_ticks, secs),
        })
    });
    kill_all(bin, &private, setup);
    private.end();
    measured
}
