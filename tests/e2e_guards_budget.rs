//! The budget and its pause on real pi 1.6.0 with a priced scripted model [GUARD-B1, GUARD-A1]: the
//! run is stopped within one call of `pokeshell.budgetUsd`, the screen and `ls --json` say it is
//! paused by its budget, nothing more goes to the model, and prefix+a allows the stated amount more
//! and resumes the run. Healthy twin: a session under its budget finishes untouched. Bad settings (a
//! negative or absurd budget) are warned about and the safe default holds.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::matrix::{Matrix, side_flat, trailing_user_text};
use support::shell::footer;
use support::{Step, WAIT, model_server};

const PREFIX: u8 = 0x1d;

/// A run of varied tool calls, each reply 10 000 tokens in ($0.03 at $3 a million) and 2 000 out
/// ($0.03 at $15): $0.06 a model call.
fn priced_run(server: &support::ModelServer, calls: usize, end: &str) {
    for i in 0..calls {
        server.push(
            Step::bash(format!("echo step {i}"))
                .with_prompt_tokens(10_000)
                .with_completion_tokens(2_000),
        );
    }
    server.push(
        Step::text(end)
            .with_prompt_tokens(10_000)
            .with_completion_tokens(2_000),
    );
}

fn ls_json(m: &Matrix) -> Value {
    let home = m.pty.home().expect("the harness gave pokeshell a home");
    let out = home.pokeshell(&["ls", "--json"]);
    assert!(out.status.success(), "pokeshell ls --json: {out:?}");
    serde_json::from_slice(&out.stdout).expect("ls --json is JSON")
}

#[test]
fn guard_b1_the_budget_stops_the_run_within_one_call_and_allowing_more_resumes_it() {
    let server = model_server();
    priced_run(&server, 12, "All twelve steps are done.");
    let mut m = Matrix::builder()
        .prices(3.0, 15.0, 0.3)
        .settings(json!({"pokeshell": {"budgetUsd": 0.2}}))
        .start(server);
    m.submit("run the twelve steps");
    m.wait_footer("⛔ budget");
    m.wait_side("paused by its budget: $0.2400 of $0.2000");
    m.wait_side("prefix+a allow $0.2000 more");
    // The stop comes at the reply's end; pi may already have run the step and sent the next call,
    // which the abort cuts short (unpriced). Once pi is idle, nothing more reaches the model.
    m.wait_side("● idle");
    m.assert_model_quiet(Duration::from_secs(3));
    let calls = m.chat().len();
    // $0.06 a call: the fourth reaches $0.24 >= $0.20; the third ($0.18) did not.
    assert!(
        calls == 4 || calls == 5,
        "stopped at the call that reached the budget (and the one in flight): {calls}"
    );
    m.wait_side("session 40.0k/8.0k · $0.2400");
    let record = m.wait_record("GUARD-B1", "action", "stopped the run");
    eprintln!(
        "GUARD-B1 let {calls} calls and $0.24 pass against a $0.20 budget (one call of $0.06 past it at most): {}",
        record["reason"]
    );
    // The bell and a desktop notification asked the person, with both answers.
    let raw = String::from_utf8_lossy(&m.pty.raw_output()).into_owned();
    assert!(
        raw.contains("\x1b]9;")
            && raw.contains("prefix+a to allow $0.2000 more, prefix+x to leave it stopped"),
        "a desktop notification asks the person"
    );
    let listing = ls_json(&m);
    let session = &listing["sessions"][0];
    assert_eq!(session["attention"], "paused", "{listing}");
    assert_eq!(session["offer"], "allow $0.2000 more", "{listing}");
    assert!(
        session["state"]
            .as_str()
            .unwrap_or_default()
            .contains("paused by its budget"),
        "{listing}"
    );

    // Allow the stated amount more: the stopped run resumes, and is stopped again at $0.40.
    m.pty.send([PREFIX, b'a']);
    m.wait_trailing("it reached its budget, and the user allowed more (allow $0.2000 more)");
    m.wait_record("GUARD-A1", "action", "resumed the stopped run");
    m.wait_side("paused by its budget: $0.4200 of $0.4000");
    m.wait_side("● idle");
    m.assert_model_quiet(Duration::from_secs(3));
    let after = m.chat().len();
    assert!(
        (7..=8).contains(&after),
        "three more priced calls, the third reaching $0.42 (and the one in flight): {after}"
    );
    // Leave it stopped: the question goes, the budget still holds.
    m.pty.send([PREFIX, b'x']);
    m.wait_record("GUARD-A2", "action", "left it stopped");
    m.pty
        .wait_until("the footer's pause gone", WAIT, |s| !footer(s).contains("⛔"));
    m.assert_model_quiet(Duration::from_secs(2));
}

#[test]
fn guard_b1_healthy_twin_a_session_under_its_budget_is_never_touched() {
    let server = model_server();
    priced_run(&server, 6, "All six steps are done.");
    let mut m = Matrix::builder()
        .prices(3.0, 15.0, 0.3)
        .settings(json!({"pokeshell": {"budgetUsd": 1.0}}))
        .start(server);
    m.submit("run the six steps");
    m.wait_text("All six steps are done.");
    m.wait_side("session 70.0k/14.0k · $0.4200");
    m.assert_model_quiet(Duration::from_secs(2));
    m.pty.with_screen(|s| {
        assert!(!footer(s).contains("⛔"), "{}", footer(s));
        assert!(!side_flat(s).contains("paused"), "{}", side_flat(s));
    });
    let guard: Vec<Value> = m
        .ledger()
        .into_iter()
        .filter(|r| r["rule"].as_str().is_some_and(|r| r.starts_with("GUARD-")))
        .collect();
    assert!(guard.is_empty(), "no rail acted: {guard:?}");
    assert_eq!(ls_json(&m)["sessions"][0]["attention"], "idle");
}

#[test]
fn guard_b1_a_negative_or_absurd_budget_is_warned_about_and_the_default_holds() {
    for bad in [json!(-5), json!(1e12)] {
        let server = model_server();
        server.push(Step::text("Fine."));
        let mut m = Matrix::builder()
            .settings(json!({"pokeshell": {"budgetUsd": bad}}))
            .start(server);
        m.pty.send([PREFIX, b'i']);
        m.pty.wait_until("the warning in the status overlay", WAIT, |s| {
            let text: String = s.contents().split_whitespace().collect::<Vec<_>>().join(" ");
            text.contains("Warnings (1)")
                && text.contains("pokeshell.budgetUsd")
                && text.contains("(expected a number from")
        });
        m.pty.wait_until("the safe default in force", WAIT, |s| {
            s.contents().contains("$25.00 a session")
        });
        m.pty.send("q");
        m.pty.wait_until("the overlay closed", WAIT, |s| {
            !s.contents().contains("pokeshell status")
        });
        m.submit("hello");
        m.wait_text("Fine.");
        let last = m.chat().last().and_then(trailing_user_text).unwrap_or_default();
        assert_eq!(
            last, "hello",
            "the session works under the default budget ({bad})"
        );
    }
}
