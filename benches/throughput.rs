//! Side-by-side benchmark: output throughput of `cat` on a 64 MB file with ANSI colours through
//! (a) a raw PTY, (b) pokeshell --command, (c) an attached tmux pane; then pokeshell's CPU use while
//! hosting an idle pi for 10 s, and its peak memory. Each program runs in a PTY of its own whose
//! output this bench drains, like a terminal would.
//!
//! Run: `cargo bench --bench throughput` (needs tmux; the idle-pi part needs `scripts/setup-pi.sh`).
//! Environment: BENCH_MB (default 64), BENCH_RUNS (default 3), BENCH_IDLE_SECS (default 10).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const COLS: u16 = 120;
const ROWS: u16 = 40;

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
    peak_rss_kb: u64,
    bytes_out: u64,
}

fn rss_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `cmd` in a fresh PTY, drains its output like a terminal (answering DA1 so programs that
/// probe the terminal do not wait), and times it until the PTY closes.
fn run_in_pty(program: &str, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("TMUX");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let pid = child.process_id().expect("pid");
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut writer = pair.master.take_writer().expect("writer");
    let (tx, rx) = mpsc::channel::<usize>();
    let drain = std::thread::spawn(move || {
        let mut buf = vec![0u8; 256 * 1024];
        let mut total = 0u64;
        let mut answered = false;
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n as u64;
                    if !answered && buf[..n].windows(3).any(|w| w == b"\x1b[c") {
                        answered = true;
                        let _ = tx.send(n);
                    }
                }
            }
        }
        total
    });
    let mut peak = 0;
    loop {
        if rx.try_recv().is_ok() {
            let _ = writer.write_all(b"\x1b[?62;22c");
            let _ = writer.flush();
        }
        if let Some(kb) = rss_kb(pid) {
            peak = peak.max(kb);
        }
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let wall = start.elapsed();
    drop(writer);
    let bytes_out = drain.join().unwrap_or(0);
    Outcome {
        wall,
        peak_rss_kb: peak,
        bytes_out,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn release_binary() -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--bin", "pokeshell"])
        .current_dir(root())
        .status()
        .expect("cargo build --release");
    assert!(status.success(), "release build failed");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    target.join("release/pokeshell")
}

fn cpu_ticks(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// pokeshell hosting real pi, idle for `secs`: CPU share of one core and peak RSS of pokeshell alone.
fn idle_pi(bin: &Path, secs: u64) -> Option<(f64, u64)> {
    let pi = root().join(".cache/pi/bin/pi");
    if !pi.exists() {
        eprintln!("idle: skipped, run scripts/setup-pi.sh first");
        return None;
    }
    let dir = tempfile::tempdir().ok()?;
    let agent = dir.path().join("agent");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&agent).ok()?;
    std::fs::create_dir_all(&work).ok()?;
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
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .ok()?;
    let mut cmd = CommandBuilder::new(bin);
    cmd.args(["--pi", pi.to_str()?, "--", "--no-session"]);
    cmd.cwd(&work);
    cmd.env("TERM", "xterm-256color");
    cmd.env("PI_CODING_AGENT_DIR", &agent);
    cmd.env("PI_OFFLINE", "1");
    cmd.env("PI_SKIP_VERSION_CHECK", "1");
    cmd.env("PI_TELEMETRY", "0");
    let mut child = pair.slave.spawn_command(cmd).ok()?;
    drop(pair.slave);
    let pid = child.process_id()?;
    let mut reader = pair.master.try_clone_reader().ok()?;
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
    });
    // Let pi start up and settle before measuring.
    std::thread::sleep(Duration::from_secs(3));
    let t0 = cpu_ticks(pid)?;
    std::thread::sleep(Duration::from_secs(secs));
    let t1 = cpu_ticks(pid)?;
    let rss = rss_kb(pid).unwrap_or(0);
    let _ = child.kill();
    let _ = child.wait();
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(((t1 - t0) as f64 / hz / secs as f64 * 100.0, rss))
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let mb = env_num("BENCH_MB", 64);
    let runs = env_num("BENCH_RUNS", 3).max(1);
    let idle_secs = env_num("BENCH_IDLE_SECS", 10);
    let input = make_input(mb);
    let input_s = input.to_str().expect("utf-8 temp path").to_string();
    let bin = release_binary();
    let bin_s = bin.to_str().expect("utf-8 path").to_string();
    let cat_line = format!("cat {input_s}");
    let tmux_socket = format!("pokeshell-bench-{}", std::process::id());

    let mut raw = Vec::new();
    let mut poke = Vec::new();
    let mut tmux = Vec::new();
    let mut poke_rss = 0;
    for run in 0..runs {
        let r = run_in_pty("cat", &[&input_s], &[]);
        let p = run_in_pty(&bin_s, &["--command", &cat_line], &[]);
        let t = run_in_pty(
            "tmux",
            &[
                "-L",
                &tmux_socket,
                "-f",
                "/dev/null",
                "new-session",
                "-x",
                "120",
                "-y",
                "40",
                &cat_line,
            ],
            &[],
        );
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
        poke_rss = poke_rss.max(p.peak_rss_kb);
        raw.push(r.wall);
        poke.push(p.wall);
        tmux.push(t.wall);
    }
    let _ = Command::new("tmux")
        .args(["-L", &tmux_socket, "kill-server"])
        .status();
    let (raw, poke, tmux) = (median(raw), median(poke), median(tmux));
    println!("throughput: cat of {mb} MB with ANSI colours, {COLS}x{ROWS}, median of {runs} runs");
    println!("  raw PTY          {:>8.3} s", raw.as_secs_f64());
    println!("  pokeshell        {:>8.3} s", poke.as_secs_f64());
    println!("  tmux (attached)  {:>8.3} s", tmux.as_secs_f64());
    println!(
        "  pokeshell / tmux = {:.2}x (target <= 0.5)   pokeshell / raw = {:.2}x (target <= 1.5)",
        poke.as_secs_f64() / tmux.as_secs_f64(),
        poke.as_secs_f64() / raw.as_secs_f64()
    );
    println!(
        "  pokeshell peak RSS during the run: {:.1} MB",
        poke_rss as f64 / 1024.0
    );
    if let Some((cpu, rss)) = idle_pi(&bin, idle_secs) {
        println!("idle: pokeshell hosting an idle pi for {idle_secs} s");
        println!(
            "  CPU {cpu:.2}% of one core (target < 1%)   RSS {:.1} MB (target < 30 MB)",
            rss as f64 / 1024.0
        );
    }
}
