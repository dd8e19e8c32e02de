//! The circuit breaker across sessions on real pi 1.6.0 [GUARD-K1, GUARD-K3]: three sessions of one
//! server meet the same provider failure (an overload that says to come back in 4 s). After pi's own
//! retry, each would wait and retry on its own; instead one session probes and the other two are
//! held on its countdown. While the provider stays down, only that session's requests reach it; once
//! a probe gets through, the two held sessions resume one after the other, staggered.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{cli, start};
use pokeshell::demo::model::RequestKind;
use serde_json::json;
use support::pty::ServerHome;
use support::{RecordedRequest, Step, model_server};

const TASKS: [&str; 3] = ["task one", "task two", "task three"];

/// Which session sent a request: the task it was started with.
fn task(r: &RecordedRequest) -> &'static str {
    let first = r.user_texts().into_iter().next().unwrap_or_default();
    TASKS.into_iter().find(|t| first.contains(t)).unwrap_or("unknown")
}

/// Requests past each session's first two (its prompt and pi's own retry of it), in order.
fn probes(reqs: &[RecordedRequest]) -> Vec<&RecordedRequest> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    reqs.iter()
        .filter(|r| r.kind == RequestKind::Chat)
        .filter(|r| {
            let n = seen.entry(task(r)).or_default();
            *n += 1;
            *n > 2
        })
        .collect()
}

#[test]
fn guard_k1_k3_three_sessions_against_a_provider_that_is_down_probe_one_at_a_time() {
    let home = ServerHome::new();
    let server = model_server();
    server.set_default(Step::error(
        503,
        "The model is overloaded. Please try again in 4s.",
    ));
    let mut m = start(&home, server, json!({}));
    let pi = m.env.pi().to_string_lossy().into_owned();
    for (name, task) in [("two", TASKS[1]), ("three", TASKS[2])] {
        let mut args = vec!["new", "-d", "--name", name, "--pi", &pi, "--"]
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>();
        args.extend(m.env.pi_args(&[task]));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = cli(&m, &args);
        assert!(out.status.success(), "pokeshell new -d: {out:?}");
    }
    m.submit(TASKS[0]);

    // Every session met the overload (its prompt and pi's retry), and two are held behind a probe.
    let all_failed = m.server.wait_until(
        "two failed requests of each session",
        Duration::from_secs(120),
        |reqs| {
            TASKS.iter().all(|t| {
                reqs.iter()
                    .filter(|r| r.kind == RequestKind::Chat && task(r) == *t)
                    .count()
                    >= 2
            })
        },
    );
    if let Err(e) = all_failed {
        m.pty.fail(&e.to_string());
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while m
        .records("GUARD-K1", "declined")
        .iter()
        .filter(|r| {
            r["reason"]
                .as_str()
                .is_some_and(|t| t.contains("waits for its probe"))
        })
        .count()
        < 2
    {
        assert!(
            std::time::Instant::now() < deadline,
            "two sessions should be held; the ledger: {:?}",
            m.ledger()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Let one probe meet the overload again, then bring the provider back.
    let probed = m
        .server
        .wait_until("a probe that fails", Duration::from_secs(60), |reqs| {
            probes(reqs).len() >= 2
        });
    if let Err(e) = probed {
        m.pty.fail(&e.to_string());
    }
    let down_until = m.server.requests().len();
    m.server.set_default(Step::text("Back online."));
    let recovered = m
        .server
        .wait_until("the probe and the two resumes", Duration::from_secs(60), |reqs| {
            probes(reqs).len() >= 5
        });
    let reqs = match recovered {
        Ok(reqs) => reqs,
        Err(e) => m.pty.fail(&e.to_string()),
    };
    let probes = probes(&reqs);
    let prober = task(probes[0]);
    let while_down: Vec<&str> = probes
        .iter()
        .filter(|r| r.seq <= down_until)
        .map(|r| task(r))
        .collect();
    assert!(
        while_down.iter().all(|t| *t == prober),
        "while the provider was down only one session probed: {while_down:?}"
    );
    let back: Vec<(&str, Duration)> = probes
        .iter()
        .filter(|r| r.seq > down_until)
        .map(|r| (task(r), r.at))
        .collect();
    assert_eq!(back.len(), 3, "{back:?}");
    assert_eq!(
        back[0].0, prober,
        "the probe that got through comes first: {back:?}"
    );
    let others: Vec<&str> = back[1..].iter().map(|(t, _)| *t).collect();
    assert!(
        !others.contains(&prober) && others[0] != others[1],
        "then each held session once: {back:?}"
    );
    let gaps = [back[1].1 - back[0].1, back[2].1 - back[1].1];
    eprintln!(
        "GUARD-K1: while down, {} probe request(s), all from {prober}; after it got through, the held sessions resumed {:?} and {:?} later",
        while_down.len(),
        gaps[0],
        gaps[1]
    );
    for gap in gaps {
        assert!(gap >= Duration::from_millis(1500), "staggered: {gaps:?}");
    }
    m.wait_record("GUARD-K3", "action", "got past the overload");
}
