//! Side-by-side benchmark of a raw PTY, pokeshell (`--command`, a client attached to a server) and
//! an attached tmux, each in a PTY of its own whose output this bench drains like a terminal would:
//! - throughput: `cat` of a 64 MB file with ANSI colours; wall time, and the CPU time and peak memory
//!   of what sits between the program and the terminal (pokeshell's client and server; tmux's client
//!   and server; never the hosted program);
//! - key-to-echo latency, p50 and p99, on a quiet pane and while the pane floods;
//! - a soak: 1 GB of mixed output through pokeshell, the memory of its server and client sampled along
//!   the way;
//! - pokeshell's CPU use while it hosts an idle pi (client and server), and its memory;
//! - ten idle pi sessions, started detached under one server: the server's CPU and memory (and, for
//!   information, the ten pi processes' CPU).
//!
//! Every pokeshell run has a server of its own: a private `XDG_RUNTIME_DIR` and `XDG_STATE_HOME`
//! (temp dirs), so runs share nothing and leave nothing. The bench is the subreaper of what it starts,
//! so the server, which forks away from its client, becomes the bench's child: its CPU time is read
//! to the last tick from its zombie. A server that does not exit by itself once its last session ended
//! is sent SIGTERM and fails the bench, and so does a process of the run left behind.
//!
//! Everything ends in one table, with ratios against the raw PTY.
//!
//! Run: `cargo bench --bench throughput` (needs tmux; the idle-pi parts need `scripts/setup-pi.sh`).
//! Environment: BENCH_MB (default 64), BENCH_RUNS (default 3), BENCH_KEYS (keys per latency run,
//! default 150), BENCH_SOAK_MB (default 1024, 0 skips), BENCH_SOAK_EVERY_MB (default 64),
//! BENCH_IDLE_SECS (default 10, 0 skips), BENCH_POKESHELL (the pokeshell binary to measure instead of
//! this tree's release build: an older commit's, for a before and after).

#[path = "throughput/echo.rs"]
mod echo;
#[path = "throughput/idle.rs"]
mod idle;
#[path = "throughput/private.rs"]
mod private;
#[path = "throughput/pty_run.rs"]
mod pty_run;
#[path = "throughput/soak.rs"]
mod soak;
#[path = "throughput/table.rs"]
mod table;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pty_run::Usage;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
/// A file of coloured log-like lines, deterministic, of about `mb` megabytes.
fn make_input(mb: u64) -> PathBuf {
    let path = std::env::temp_dir().join(format!("pokeshell-bench-{mb}mb.txt"));
    if path.metadata().map(|m| m.len()).unwrap_or(0) >= mb * 1024 * 1024 {
        return path;
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create bench input"));
    let mut written = 0u64;
    let mut i = 0u64;
    while written < mb * 1024 * 1024 {
        let line = format!(
            "\x1b[38;5;{}m{:>8}\x1b[0m \x1b[1;32mINFO\x1b[0m \x1b[2mworker-{}\x1b[0m processed item {} in {} ms \x1b[38;2;{};{};200mstatus=ok\x1b[0m\n",
            i % 256,
            i,
            i % 17,
            i * 7919 % 100_000,
            i % 997,
            i % 256,
            (i * 3) % 256
        );
        out.write_all(line.as_bytes()).expect("write bench input");
        written += line.len() as u64;
        i += 1;
    }
    out.flush().expect("flush bench input");
    path
}

struct Outcome {
    wall: Duration,
    usage: Usage,
    bytes_out: u64,
}

/// Runs pokeshell `args` with a server of its own, until the client exits and then the server.
fn run_pokeshell(bin: &str, args: &[&str]) -> Outcome {
    let start = Instant::now();
    let (running, server) = private::spawn(bin, args, |_| {});
    let (wall, usage, bytes_out) = private::finish(running, server, start, Duration::from_secs(600));
    Outcome {
        wall,
        usage,
        bytes_out,
    }
}

/// Runs `program` until it exits; `tmux_socket` names the tmux server whose usage counts too.
fn run_once(program: &str, args: &[&str], tmux_socket: Option<&str>) -> Outcome {
    let start = Instant::now();
    let running = pty_run::spawn(program, args, &[], |_| {});
    let client = running.pid;
    let mut server = None;
    let mut last_look = Instant::now() - Duration::from_secs(1);
    let (wall, usage, bytes_out) = running.finish(start, Duration::from_secs(600), |u| {
        let Some(socket) = tmux_socket else { return };
        if server.is_none() && last_look.elapsed() > Duration::from_millis(50) {
            last_look = Instant::now();
            server = pty_run::tmux_server_pid(socket, client);
        }
        if let Some(pid) = server {
            u.sample(pid);
        }
    });
    Outcome {
        wall,
        usage,
        bytes_out,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn release_binary() -> PathBuf {
    // Another build of pokeshell side by side with this one's figures (an older commit's, say).
    if let Some(other) = std::env::var_os("BENCH_POKESHELL") {
        return PathBuf::from(other);
    }
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--bin", "pokeshell"])
        .current_dir(root())
        .status()
        .expect("cargo build --release");
    assert!(status.success(), "release build failed");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    target.join("release/pokeshell")
}

fn poke_row(what: String, unit: &'static str, v: Option<f64>) -> table::Row {
    table::Row {
        what,
        unit,
        raw: None,
        poke: v,
        tmux: None,
    }
}

/// The soak's memory: the server's and the client's resident memory added up.
fn soak_rows(s: &soak::Soak) -> Vec<table::Row> {
    let mb = |x: &(u64, u64, u64)| (x.1 + x.2) as f64 / 1024.0;
    let first = s.samples.first().map(mb);
    let last = s.samples.last().map(mb);
    let peak = s.samples.iter().map(mb).max_by(f64::total_cmp);
    let mut rows: Vec<table::Row> = [("first", first), ("last", last), ("peak", peak)]
        .into_iter()
        .map(|(what, v)| poke_row(format!("soak {} MB mixed: RSS {what} sample", s.mb), "MB", v))
        .collect();
    rows.push(poke_row(
        format!("soak {} MB mixed: peak RSS (VmHWM)", s.mb),
        "MB",
        Some(s.peak_rss_kb as f64 / 1024.0),
    ));
    rows.push(poke_row(
        format!("soak {} MB mixed: wall time", s.mb),
        "s",
        Some(s.wall.as_secs_f64()),
    ));
    rows
}

fn idle_rows(bin: &Path, setup: &idle::PiSetup, secs: u64) -> Vec<table::Row> {
    let mut rows = Vec::new();
    if let Some((cpu, rss)) = idle::one(bin, setup, secs) {
        rows.push(poke_row(
            format!("idle pi for {secs} s: CPU share of a core"),
            "%",
            Some(cpu),
        ));
        rows.push(poke_row(
            "idle pi: peak RSS".into(),
            "MB",
            Some(rss as f64 / 1024.0),
        ));
    }
    if let Some(ten) = idle::ten(bin, setup, secs) {
        eprintln!(
            "ten idle pi sessions: the pi processes used {:.2}% of a core together",
            ten.pi_cpu
        );
        rows.push(poke_row(
            format!("ten idle pi for {secs} s: server CPU share"),
            "%",
            Some(ten.server_cpu),
        ));
        rows.push(poke_row(
            "ten idle pi: server RSS (end of window)".into(),
            "MB",
            Some(ten.server_rss_kb as f64 / 1024.0),
        ));
        rows.push(poke_row(
            "ten idle pi: server peak RSS (VmHWM)".into(),
            "MB",
            Some(ten.server_hwm_kb as f64 / 1024.0),
        ));
        rows.push(poke_row(
            "ten idle pi: the pi processes' CPU (info)".into(),
            "%",
            Some(ten.pi_cpu),
        ));
    }
    rows
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // The bench binary is also the echo program and the soak's generator, run inside the PTYs.
    if args.get(1).map(String::as_str) == Some(echo::ECHO_FLAG) {
        echo::echo_program(args.get(2).map(String::as_str) == Some("flood"));
        return;
    }
    if args.get(1).map(String::as_str) == Some(soak::SOAK_FLAG) {
        let num = |i: usize| args.get(i).and_then(|v| v.parse().ok()).unwrap_or(0);
        let out = PathBuf::from(args.get(4).map_or("/dev/null", String::as_str));
        soak::generator(num(2), num(3), &out);
        return;
    }
    private::become_subreaper();
    let mb = env_num("BENCH_MB", 64);
    let runs = env_num("BENCH_RUNS", 3).max(1);
    let keys = env_num("BENCH_KEYS", 150) as usize;
    let soak_mb = env_num("BENCH_SOAK_MB", 1024);
    let soak_every = env_num("BENCH_SOAK_EVERY_MB", 64);
    let idle_secs = env_num("BENCH_IDLE_SECS", 10);
    let input = make_input(mb);
    let input_s = input.to_str().expect("utf-8 temp path").to_string();
    let bin = release_binary();
    let bin_s = bin.to_str().expect("utf-8 path").to_string();
    let me = std::env::current_exe().expect("the bench's own path");
    let me_s = me.to_str().expect("utf-8 path").to_string();
    let tmux_socket = format!("pokeshell-bench-{}", std::process::id());
    let tmux_args = |line: &str| -> Vec<String> {
        [
            "-L",
            &tmux_socket,
            "-f",
            "/dev/null",
            "new-session",
            "-x",
            "120",
            "-y",
            "40",
            line,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let kill_tmux = || {
        let _ = Command::new("tmux")
            .args(["-L", &tmux_socket, "kill-server"])
            .stderr(std::process::Stdio::null())
            .status();
        private::reap_strays();
    };

    // Throughput.
    let cat_line = format!("cat {input_s}");
    let tmux_cat = tmux_args(&cat_line);
    let tmux_cat: Vec<&str> = tmux_cat.iter().map(String::as_str).collect();
    let (mut raw, mut poke, mut tmux) = (Vec::new(), Vec::new(), Vec::new());
    let (mut raw_use, mut poke_use, mut tmux_use) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        let r = run_once("cat", &[&input_s], None);
        let p = run_pokeshell(&bin_s, &["--command", &cat_line]);
        let t = run_once("tmux", &tmux_cat, Some(&tmux_socket));
        kill_tmux();
        eprintln!(
            "run {}: raw {:.3}s  pokeshell {:.3}s  tmux {:.3}s  (bytes to the outer terminal: raw {} / pokeshell {} / tmux {})",
            run + 1,
            r.wall.as_secs_f64(),
            p.wall.as_secs_f64(),
            t.wall.as_secs_f64(),
            r.bytes_out,
            p.bytes_out,
            t.bytes_out
        );
        raw.push(r.wall);
        poke.push(p.wall);
        tmux.push(t.wall);
        raw_use.push(r.usage);
        poke_use.push(p.usage);
        tmux_use.push(t.usage);
    }
    let med_wall = |v: Vec<Duration>| median(v).as_secs_f64();
    let cpu_ms_per_mb =
        |v: &[Usage]| median(v.iter().map(Usage::cpu).collect()).as_secs_f64() * 1000.0 / mb as f64;
    let peak_mb = |v: &[Usage]| v.iter().map(|u| u.peak_rss_kb).max().unwrap_or(0) as f64 / 1024.0;
    let mut rows = vec![
        table::Row {
            what: format!("cat {mb} MB coloured text, median of {runs}"),
            unit: "s",
            raw: Some(med_wall(raw)),
            poke: Some(med_wall(poke)),
            tmux: Some(med_wall(tmux)),
        },
        table::Row {
            what: "CPU of the program in the PTY per MB".into(),
            unit: "ms",
            raw: Some(cpu_ms_per_mb(&raw_use)),
            poke: Some(cpu_ms_per_mb(&poke_use)),
            tmux: Some(cpu_ms_per_mb(&tmux_use)),
        },
        table::Row {
            what: "peak RSS of the program in the PTY".into(),
            unit: "MB",
            raw: Some(peak_mb(&raw_use)),
            poke: Some(peak_mb(&poke_use)),
            tmux: Some(peak_mb(&tmux_use)),
        },
    ];

    // Key-to-echo latency.
    for flood in [false, true] {
        let mode = if flood { "flood" } else { "quiet" };
        let echo_line = format!("'{me_s}' {} {mode}", echo::ECHO_FLAG);
        let (r, r_miss) = echo::measure(&me_s, &[echo::ECHO_FLAG, mode], keys, false);
        let (p, p_miss) = echo::measure(&bin_s, &["--command", &echo_line], keys, true);
        let t_args = tmux_args(&echo_line);
        let t_args: Vec<&str> = t_args.iter().map(String::as_str).collect();
        let (t, t_miss) = echo::measure("tmux", &t_args, keys, false);
        kill_tmux();
        eprintln!(
            "echo {mode}: {} keys each; no echo within 2 s: raw {r_miss}, pokeshell {p_miss}, tmux {t_miss}",
            keys
        );
        for (name, v) in [("raw", &r), ("pokeshell", &p), ("tmux", &t)] {
            eprintln!("  {name} slowest (ms): {:?}", echo::slowest_ms(v, 5));
        }
        for p_ in [50.0, 99.0] {
            rows.push(table::Row {
                what: format!("key-to-echo p{p_:.0}, {mode} pane"),
                unit: "ms",
                raw: Some(echo::percentile_ms(&r, p_)),
                poke: Some(echo::percentile_ms(&p, p_)),
                tmux: Some(echo::percentile_ms(&t, p_)),
            });
        }
    }

    // Soak.
    if soak_mb > 0 {
        let s = soak::run(&bin_s, &me_s, soak_mb, soak_every);
        eprintln!(
            "soak: {} MB in {:.1} s; pokeshell RSS (MB written, server kB, client kB): {:?}",
            s.mb,
            s.wall.as_secs_f64(),
            s.samples
        );
        rows.extend(soak_rows(&s));
    }

    // Idle pi.
    if idle_secs > 0
        && let Some(setup) = idle::PiSetup::new(&root())
    {
        rows.extend(idle_rows(&bin, &setup, idle_secs));
    }
    table::print(&rows);
}
