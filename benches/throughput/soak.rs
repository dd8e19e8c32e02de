//! The soak: a long stream of mixed output (coloured logs, full-screen frames on the alternate
//! screen, wide characters, long wrapping lines, titles, links, scroll regions, kitty flag pushes)
//! through pokeshell, with the resident memory of pokeshell's server and client sampled every few
//! megabytes. The bench binary is the generator (`--pokeshell-bench-soak MB EVERY_MB OUT`): it runs as
//! the server's child, so it reads its parent's memory itself, at exact points of the stream, and the
//! client's, whose pid the bench leaves in `OUT.client`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{private, pty_run};

pub const SOAK_FLAG: &str = "--pokeshell-bench-soak";

fn fragment(i: u64, out: &mut Vec<u8>) {
    match i % 8 {
        0..=2 => {
            for j in 0..40 {
                let n = i * 40 + j;
                let _ = write!(
                    out,
                    "\x1b[38;5;{}m{n:>10}\x1b[0m \x1b[1;32mINFO\x1b[0m worker-{} handled request {} \x1b[38;2;{};90;200mok\x1b[0m\r\n",
                    n % 256,
                    n % 13,
                    n * 31 % 9973,
                    n % 256
                );
            }
        }
        3 => {
            // A full-screen program's frame, drawn under synchronized output.
            let _ = write!(out, "\x1b[?1049h\x1b[?2026h\x1b[H\x1b[2J");
            for row in 1..=30 {
                let _ = write!(
                    out,
                    "\x1b[{row};1H\x1b[48;5;{}m row {row} of frame {i} \x1b[0m\x1b[K",
                    row % 8
                );
            }
            let _ = write!(out, "\x1b[?2026l\x1b[?1049l");
        }
        4 => {
            let _ = write!(out, "漢字かな 表示 ✓ 🙂 wide text {i}\r\n");
            let _ = write!(out, "{}\r\n", "long line that wraps ".repeat(25));
        }
        5 => {
            let _ = write!(
                out,
                "\x1b]0;soak {i}\x07\x1b]8;;https://example.invalid/{i}\x07link\x1b]8;;\x07\r\n"
            );
        }
        6 => {
            let _ = write!(out, "\x1b[5;20r\x1b[20;1H");
            for k in 0..30 {
                let _ = write!(out, "in region {k}\r\n");
            }
            let _ = write!(out, "\x1b[r\x1b[40;1H");
        }
        _ => {
            let _ = write!(
                out,
                "\x1b[>1u\x1b[?2004h\x1b[3 q partial \x1b[<u\x1b[?2004l\x1b[0 q\r\n"
            );
        }
    }
}

/// The resident memory (kB) of the server (the parent) and of the client, as one line of samples.
fn rss_line(written: u64, client_file: &Path) -> String {
    // SAFETY: getppid has no failure mode.
    let server = unsafe { libc::getppid() } as u32;
    let client = std::fs::read_to_string(client_file)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    let kb = |pid: Option<u32>| pid.and_then(|p| pty_run::status_kb(p, "VmRSS:")).unwrap_or(0);
    format!("{} {} {}\n", written >> 20, kb(Some(server)), kb(client))
}

fn client_file(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".client");
    PathBuf::from(name)
}

/// The generator: writes `mb` megabytes of mixed output, and every `every_mb` the server's and the
/// client's RSS (kB) as one line of `out`.
pub fn generator(mb: u64, every_mb: u64, out: &Path) {
    let client = client_file(out);
    let mut stdout = std::io::stdout().lock();
    let mut samples = String::new();
    let (total, every) = (mb << 20, every_mb.max(1) << 20);
    let (mut written, mut next_sample, mut i) = (0u64, 0u64, 0u64);
    let mut buf = Vec::with_capacity(64 * 1024);
    while written < total {
        buf.clear();
        while buf.len() < 60 * 1024 {
            fragment(i, &mut buf);
            i += 1;
        }
        if stdout.write_all(&buf).is_err() {
            break;
        }
        written += buf.len() as u64;
        if written >= next_sample {
            let _ = stdout.flush();
            samples.push_str(&rss_line(written, &client));
            next_sample += every;
        }
    }
    let _ = stdout.flush();
    samples.push_str(&rss_line(written, &client));
    let _ = std::fs::write(out, samples);
}

pub struct Soak {
    pub mb: u64,
    /// (MB written so far, the server's RSS, the client's RSS), in kB.
    pub samples: Vec<(u64, u64, u64)>,
    pub wall: Duration,
    /// The server's peak RSS plus the client's.
    pub peak_rss_kb: u64,
}

/// Runs the generator inside pokeshell, with a server of its own.
pub fn run(pokeshell: &str, me: &str, mb: u64, every_mb: u64) -> Soak {
    let out = std::env::temp_dir().join(format!("pokeshell-soak-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let line = format!(
        "'{me}' {SOAK_FLAG} {mb} {every_mb} '{}'",
        out.to_str().expect("utf-8 temp path")
    );
    let client = client_file(&out);
    let start = Instant::now();
    let (running, server) = private::spawn(pokeshell, &["--command", &line], |_| {});
    std::fs::write(&client, running.pid.to_string()).expect("write the client's pid");
    let (wall, usage, _) = private::finish(running, server, start, Duration::from_secs(1800));
    let samples = std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<u64>().ok());
            Some((f.next()??, f.next()??, f.next()??))
        })
        .collect();
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&client);
    Soak {
        mb,
        samples,
        wall,
        peak_rss_kb: usage.peak_rss_kb,
    }
}
