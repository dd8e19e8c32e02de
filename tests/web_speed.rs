//! Measures the web view (not a check: `scripts/web-bench.sh` runs it and prints the figures), on
//! loopback in headless Chromium, through the release of the server the test builds:
//! * key to screen: a key sent by the page until its echo shows in the page's terminal (a session
//!   hosting `cat`, whose terminal echoes), p50 and p99;
//! * a flooding session shown in the page: the page's event-loop lag and the server's memory;
//! * twenty pages' sockets watching idle sessions: the server's CPU.

mod support;

use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use serde_json::{Value, json};
use support::browser::Browser;
use support::pty::{Pty, ServerHome};

fn session(home: &ServerHome, command: &str) -> Pty {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["--command", command]);
    home.apply(&mut cmd);
    Pty::spawn(cmd, 50, 150)
}

fn cpu_ticks(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

fn rss_kib(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(f64::NAN)
}

async fn open(b: &Browser, number: u32) {
    b.eval(&format!(
        "document.querySelector(\"li.session[data-name^='{number}:'] button.open\").click(); return true"
    ))
    .await;
    b.wait_for(
        "the pane's size",
        "return PS.app.pane ? PS.app.current : null",
        |v| v.as_str().is_some_and(|s| s.starts_with(&format!("{number}:"))),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by scripts/web-bench.sh"]
async fn web_view_speed() {
    let keys: usize = std::env::var("WEB_BENCH_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let home = ServerHome::new();
    let echo = session(&home, "cat");
    echo.wait_for_text("cat", support::WAIT);
    let pid = home.server_pid().expect("the server");
    let out = home.pokeshell(&["web", "--listen", "127.0.0.1:0"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let link = text
        .split_whitespace()
        .find(|w| w.contains("/login#token="))
        .expect("a login link")
        .to_string();
    let b = Browser::start(1280, 900).await;
    b.client.goto(&link).await.expect("log in");
    b.wait_for(
        "the list",
        "return document.querySelectorAll('li.session').length",
        |v| v == &json!(1),
    )
    .await;
    open(&b, 1).await;

    // Key to screen.
    let lat = b
        .client
        .execute_async(
            r#"const [n, done] = arguments;
            const term = PS.app.screen.term;
            const count = () => (PS.screenText().match(/q/g) || []).length;
            const lat = [];
            function one() {
              if (lat.length >= n) { PS.app.ws.send(JSON.stringify({type: "input", data: "\u0015"})); done(lat); return; }
              const before = count();
              const t0 = performance.now();
              const d = term.onWriteParsed(() => {
                if (count() > before) { d.dispose(); lat.push(performance.now() - t0); setTimeout(one, 10); }
              });
              PS.app.ws.send(JSON.stringify({type: "input", data: (lat.length % 100 === 99) ? "q\r" : "q"}));
            }
            one();"#,
            vec![json!(keys)],
        )
        .await
        .expect("the key latency script");
    let mut lat: Vec<f64> = serde_json::from_value(lat).expect("latencies");
    let (p50, p99, max) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99), pct(&mut lat, 1.0));

    // Twenty sockets watching idle sessions.
    let idle: Vec<Pty> = (0..2).map(|_| session(&home, "sleep 600")).collect();
    b.wait_for(
        "three sessions",
        "return document.querySelectorAll('li.session').length",
        |v| v == &json!(3),
    )
    .await;
    b.eval(
        r#"window.extra = [];
        for (let i = 0; i < 20; i++) {
          const ws = new WebSocket("ws://" + location.host + "/ws", PS.protocols());
          ws.onopen = () => ws.send(JSON.stringify({type: "open", session: String(2 + i % 2), cols: 80, rows: 24, watch: true}));
          window.extra.push(ws);
        }
        return true"#,
    )
    .await;
    b.eval("document.getElementById('back').click(); return true")
        .await;
    let attached = b
        .wait_for(
            "twenty open sockets",
            "return window.extra.filter(w => w.readyState === 1).length",
            |v| v == &json!(20),
        )
        .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let secs = 20.0;
    let (t0, c0) = (Instant::now(), cpu_ticks(pid));
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    let ticks = cpu_ticks(pid) - c0;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let idle_cpu = ticks as f64 / hz / t0.elapsed().as_secs_f64() * 100.0;
    b.eval("window.extra.forEach(w => w.close()); return true").await;
    drop(idle);

    // A flooding session shown in the page.
    let rss_before = rss_kib(pid);
    let flood = session(
        &home,
        "yes 'a flood of output, line after line after line, all of it colourless'",
    );
    b.wait_for(
        "the flooding session",
        "return document.querySelectorAll('li.session').length",
        |v| v.as_u64().is_some_and(|n| n >= 2),
    )
    .await;
    let number = b
        .eval("return [...document.querySelectorAll('li.session')].map(l => l.dataset.name).find(n => /^\\d+:/.test(n) && !n.startsWith('1:'))")
        .await;
    let number: u32 = number
        .as_str()
        .and_then(|n| n.split(':').next())
        .and_then(|n| n.parse().ok())
        .expect("the flood's number");
    open(&b, number).await;
    let sampler = tokio::spawn(async move {
        let mut max = 0;
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            max = max.max(rss_kib(pid));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        max
    });
    let lag: Value = b
        .client
        .execute_async(
            r#"const done = arguments[0];
            const lags = [];
            let last = performance.now();
            const end = last + 8000;
            function tick() {
              const now = performance.now();
              lags.push(now - last - 50);
              last = now;
              if (now < end) setTimeout(tick, 50); else done(lags);
            }
            setTimeout(tick, 50);"#,
            vec![],
        )
        .await
        .expect("the lag script");
    let mut lags: Vec<f64> = serde_json::from_value(lag).expect("lags");
    let rss_max = sampler.await.unwrap_or(0);
    let (lag_p50, lag_max) = (pct(&mut lags, 0.5), pct(&mut lags, 1.0));
    drop(flood);

    println!("web view, loopback, headless Chromium ({} keys)", lat.len());
    println!("  key to screen        p50 {p50:.1} ms   p99 {p99:.1} ms   max {max:.1} ms");
    println!(
        "  20 sockets on idle   {attached} attached, server CPU {idle_cpu:.2} % of a core over {secs} s"
    );
    println!(
        "  flooding session     page timer lag p50 {lag_p50:.1} ms, max {lag_max:.1} ms; server RSS {} MiB before, {} MiB max",
        rss_before / 1024,
        rss_max / 1024
    );
    drop(echo);
    b.close().await;
}
