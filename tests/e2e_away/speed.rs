//! The speed figures of docs/away.md ("Speed"), measured on real pi against the scripted model with
//! the recording ntfy and a Web Push service of the test's own, everything on loopback: how long
//! from the model's last word of a question to ntfy's receipt of its push, and to the push
//! service's receipt of the Web Push (encrypted and signed), and from a one-tap answer's POST to
//! the model's receipt of the person's message (which pi sends on, so pi's own work is counted too). Each round a person types
//! a prompt and leaves; the question comes while they are away. Not part of the suite (it takes a
//! minute or two and a loaded machine's figures say little): `scripts/away-speed.sh` runs it and
//! prints the figures; AWAY_SPEED_ROUNDS sets the rounds (20).

use std::time::{Duration, Instant};

use super::common::{client, detach, wait_ready};
use super::push_service::{PushService, TestSubscription};
use super::recorder::{Recorder, http};
use super::support::matrix::trailing_user_text;
use super::support::pty::ServerHome;
use super::support::{Step, WAIT};
use super::{QUESTION, asking, body, button};

/// The question comes this long after its prompt reached the model: the person has left by then.
const DELAY_MS: u64 = 1500;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn summary(what: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (p50, p99) = (percentile(&samples, 0.5), percentile(&samples, 0.99));
    println!(
        "away-speed: {what}: {} rounds, median {:.1} ms, p99 {:.1} ms, slowest {:.1} ms",
        samples.len(),
        ms(p50),
        ms(p99),
        ms(samples[samples.len() - 1])
    );
    p99
}

#[test]
#[ignore = "a measurement: scripts/away-speed.sh runs it"]
fn speed_a_push_reaches_ntfy_and_a_tap_reaches_the_model_in_time() {
    let rounds: usize = std::env::var("AWAY_SPEED_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
        .max(1);
    let home = ServerHome::new();
    let ntfy = Recorder::start(&[]);
    let mut m = asking(&home, &ntfy, DELAY_MS, &[]);
    let web = PushService::start();
    subscribe(
        &m.ledger_path().with_file_name("push"),
        &web.endpoint("/ok/speed"),
    );
    let started = m.server.started();
    let (mut pushed, mut web_pushed, mut tapped) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let prompt = format!("do step {round}");
        if round == 0 {
            m.submit(&prompt);
            detach(&mut m.pty);
        } else {
            let asked = format!("Step {round} is done.\n\n{QUESTION}");
            m.server.push(Step::text(&asked).with_delay_ms(DELAY_MS));
            let mut person = client(&m, &["attach"], 30, 120);
            wait_ready(&person);
            super::support::shell::submit(&mut person, &m.server, &prompt);
            person.signal(libc::SIGHUP);
            person.wait_exit(WAIT);
        }
        let got = ntfy.wait(round + 1, WAIT);
        let chat = m.chat();
        let Some(asked) = chat
            .iter()
            .rev()
            .find(|r| trailing_user_text(r).as_deref() == Some(prompt.as_str()))
        else {
            panic!("the model never got {prompt:?}");
        };
        let answered_at = started + asked.at + Duration::from_millis(DELAY_MS);
        pushed.push(got[round].at.saturating_duration_since(answered_at));
        let arrived = web
            .pushed
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("round {round}: no Web Push"));
        assert_eq!(arrived.path, "/ok/speed");
        web_pushed.push(arrived.at.saturating_duration_since(answered_at));

        let yes = button(&body(&got[round]), "Yes");
        let tapped_at = Instant::now();
        let (status, page) = http("POST", &yes);
        assert_eq!(status, 200, "{page}");
        let reached = m
            .server
            .wait_until("the person's Yes.", WAIT, |reqs| {
                reqs.iter()
                    .filter(|r| trailing_user_text(r).as_deref() == Some("Yes."))
                    .count()
                    > round
            })
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        let Some(yes_req) = reached
            .iter()
            .filter(|r| trailing_user_text(r).as_deref() == Some("Yes."))
            .nth(round)
        else {
            panic!("round {round}: no Yes. request");
        };
        tapped.push((started + yes_req.at).saturating_duration_since(tapped_at));
    }
    assert_eq!(ntfy.requests().len(), rounds, "one push a round");
    let push_p99 = summary("question answered by the model -> push received by ntfy", pushed);
    let web_p99 = summary(
        "question answered by the model -> Web Push received by the push service",
        web_pushed,
    );
    let tap_p99 = summary(
        "one-tap POST -> the person's message received by the model",
        tapped,
    );
    assert!(push_p99 < Duration::from_secs(2), "a push within 2 s (p99)");
    assert!(web_p99 < Duration::from_secs(2), "a Web Push within 2 s (p99)");
    assert!(
        tap_p99 < Duration::from_secs(1),
        "a tap's message within 1 s (p99)"
    );
}

/// A browser's subscription in the server's push directory (as a page's **Notify me** leaves it),
/// pointed at `endpoint`: the server reads the file at each push.
fn subscribe(dir: &std::path::Path, endpoint: &str) {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .expect("the push directory");
    let keys = TestSubscription::new().keys();
    let file = serde_json::json!({"subscriptions": [{
        "endpoint": endpoint,
        "p256dh": keys["p256dh"],
        "auth": keys["auth"],
        "origin": "http://127.0.0.1",
    }]});
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join("subscriptions.json"))
        .expect("the subscriptions' file");
    std::io::Write::write_all(&mut f, file.to_string().as_bytes()).expect("write it");
}
