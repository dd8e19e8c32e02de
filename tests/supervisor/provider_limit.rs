//! Provider errors after pi's own retries [LIMIT-W1, LIMIT-N1, LIMIT-R1]: the wait until the
//! provider's reset time (or a backoff step), the resume, what cancels or releases the wait, and its
//! restore after a restart.

use pokeshell_core::supervisor::{CustomEntry, Event, FooterSuffix, LedgerKind, Message, Now, StopReason};
use serde_json::Value;

use super::sim::{Settled, Sim};

const RATE_LIMIT: &str = r#"429: {"message":"Rate limit reached for mock-model on requests per minute. Please try again in 25s.","type":"requests","param":null,"code":"rate_limit_exceeded"}"#;
const OVERLOADED: &str = r#"503: {"message":"The service is overloaded, try later","type":"server_error"}"#;

/// A run that ends on `error` after pi's retries, and settles.
fn fails_with(sim: &mut Sim, error: &str) {
    sim.agent_start().turn_start();
    sim.event(Event::AgentEnd {
        stop_reason: Some(StopReason::Error),
        error_message: Some(error.to_string()),
    });
    let mut failed = Message::assistant(StopReason::Error, vec![]);
    failed.error_message = Some(error.to_string());
    sim.settle_as(Settled {
        tail: vec![Message::user("go"), failed],
        ..Settled::default()
    });
}

fn limit_pokes(sim: &Sim) -> Vec<String> {
    sim.sent()
        .into_iter()
        .filter(|sent| sent.text.contains("failed with a"))
        .map(|sent| sent.text)
        .collect()
}

#[test]
fn limit_w1_a_rate_limit_with_a_reset_hint_resumes_only_after_the_reset() {
    let mut sim = Sim::new();
    fails_with(&mut sim, RATE_LIMIT);
    assert!(sim.sent().is_empty(), "nothing goes out at the settle");
    let waits = sim.entries("pokeshell-limit-wait");
    assert_eq!(waits.len(), 1, "the wait is saved in the session");
    let wait = sim.view().limit_wait.expect("the view shows the wait");
    assert_eq!(wait.kind, "rate limit");
    assert!(wait.error_line.starts_with("429: "), "{}", wait.error_line);
    assert_eq!(
        wait.remaining_ms, 26_000,
        "25 s from the hint plus the 1 s margin"
    );
    assert_eq!(sim.footer(), "📌 p:on ⏸ limit 0:26");
    assert_eq!(sim.records("LIMIT-W1", LedgerKind::Action).len(), 1);

    sim.run_for(25);
    assert!(limit_pokes(&sim).is_empty(), "not before the reset");
    assert_eq!(sim.footer(), "📌 p:on ⏸ limit 0:01");
    sim.run_for(1);
    let pokes = limit_pokes(&sim);
    assert_eq!(pokes.len(), 1, "resumed at the reset");
    assert!(
        pokes[0].contains("rate limit") && pokes[0].contains("waited 26s"),
        "{}",
        pokes[0]
    );
    assert_eq!(sim.entries("pokeshell-limit-done").len(), 1);
    assert_eq!(sim.view().limit_wait, None);
    assert_eq!(sim.view().footer.suffix, Some(FooterSuffix::Resume));

    // The resumed run ends well: the streak is over, nothing more happens.
    sim.agent_start()
        .agent_end(StopReason::Stop)
        .settle()
        .run_for(3600);
    assert_eq!(limit_pokes(&sim).len(), 1);
}

#[test]
fn limit_w1_without_a_hint_the_ladder_waits_longer_each_time_and_a_healthy_run_resets_it() {
    let mut sim = Sim::new();
    fails_with(&mut sim, OVERLOADED);
    assert_eq!(sim.view().limit_wait.expect("waits").remaining_ms, 30_000);
    sim.run_for(30);
    assert_eq!(limit_pokes(&sim).len(), 1);
    fails_with(&mut sim, OVERLOADED);
    assert_eq!(
        sim.view().limit_wait.expect("waits").remaining_ms,
        60_000,
        "the next step"
    );
    sim.run_for(60);
    assert_eq!(limit_pokes(&sim).len(), 2);
    sim.agent_start().agent_end(StopReason::Stop).settle();
    fails_with(&mut sim, OVERLOADED);
    assert_eq!(
        sim.view().limit_wait.expect("waits").remaining_ms,
        30_000,
        "a healthy run started a new streak"
    );
}

#[test]
fn limit_n1_the_wait_budget_bounds_the_streak() {
    let mut sim = Sim::configured(|config| config.poke.provider_retry_max_minutes = 1);
    fails_with(&mut sim, OVERLOADED);
    sim.run_for(30);
    assert_eq!(limit_pokes(&sim).len(), 1);
    fails_with(&mut sim, OVERLOADED);
    assert_eq!(
        sim.view().limit_wait,
        None,
        "30 s + 60 s would pass the 1-minute budget"
    );
    let declined = sim.records("LIMIT-N1", LedgerKind::Declined);
    assert!(declined[0].reason.contains("budget"), "{declined:?}");
    let (_, text, desktop) = sim.notifications().pop().expect("told");
    assert!(desktop && text.contains("will not wait out"), "{text}");
    sim.run_for(3600);
    assert_eq!(limit_pokes(&sim).len(), 1);
}

#[test]
fn limit_n1_fatal_errors_and_usage_limits_without_reset_are_told_not_resumed() {
    for error in [
        r#"401: {"message":"Incorrect API key provided","type":"invalid_request_error"}"#,
        r#"429: {"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota"}"#,
    ] {
        let mut sim = Sim::new();
        fails_with(&mut sim, error);
        assert_eq!(sim.view().limit_wait, None, "{error}");
        assert_eq!(sim.records("LIMIT-N1", LedgerKind::Declined).len(), 1, "{error}");
        let (_, _, desktop) = sim.notifications().pop().expect("told");
        assert!(desktop, "a desktop notification too");
        sim.run_for(3600);
        assert!(sim.sent().is_empty(), "{error}");
    }
}

#[test]
fn limit_n1_an_error_pokeshell_cannot_read_is_left_to_the_other_rules() {
    let mut sim = Sim::new();
    fails_with(&mut sim, "boom");
    assert_eq!(sim.view().limit_wait, None);
    assert!(sim.notifications().is_empty(), "no guess, no alarm");
    assert_eq!(
        sim.records("LIMIT-N1", LedgerKind::Declined).len(),
        1,
        "but the ledger says why"
    );
}

#[test]
fn limit_w1_typing_cancels_the_wait() {
    let mut sim = Sim::new();
    fails_with(&mut sim, RATE_LIMIT);
    sim.run_for(10).event(Event::UserTyped);
    assert_eq!(sim.view().limit_wait, None);
    assert_eq!(
        sim.entries("pokeshell-limit-done").len(),
        1,
        "the session forgets it too"
    );
    let declined = sim.records("LIMIT-W1", LedgerKind::Declined);
    assert!(declined[0].reason.contains("you typed"), "{declined:?}");
    sim.run_for(3600);
    assert!(sim.sent().is_empty(), "nothing after the user took over");
    assert_eq!(sim.footer(), "📌 p:on");
}

#[test]
fn limit_w1_a_submitted_prompt_and_an_aborted_settle_cancel_it_too() {
    let mut sim = Sim::new();
    fails_with(&mut sim, RATE_LIMIT);
    sim.user_types();
    assert_eq!(sim.view().limit_wait, None);

    let mut esc = Sim::new();
    fails_with(&mut esc, RATE_LIMIT);
    esc.settle_aborted().run_for(3600);
    assert_eq!(esc.view().limit_wait, None);
    assert!(esc.sent().is_empty());
}

#[test]
fn limit_w1_a_manual_poke_releases_the_wait_with_one_message() {
    let mut sim = Sim::new();
    fails_with(&mut sim, RATE_LIMIT);
    sim.run_for(5).manual_poke();
    let sent = sim.sent();
    assert_eq!(sent.len(), 1, "the manual poke is the resume: {sent:?}");
    assert!(sent[0].text.contains("poked this session by hand"));
    assert_eq!(sim.view().limit_wait, None);
    let declined = sim.records("LIMIT-W1", LedgerKind::Declined);
    assert!(declined[0].reason.contains("poked by hand"), "{declined:?}");
    sim.run_for(3600);
    assert_eq!(sim.sent().len(), 1, "no second message when the reset passes");
}

#[test]
fn limit_w1_held_while_a_compaction_runs() {
    let mut sim = Sim::new();
    fails_with(&mut sim, RATE_LIMIT);
    sim.event(Event::CompactStart {
        reason: pokeshell_core::supervisor::CompactReason::Threshold,
        will_retry: false,
    });
    sim.run_for(60);
    assert!(sim.sent().is_empty(), "held while compacting");
    assert_eq!(
        sim.view().limit_wait.expect("still waiting").held,
        Some("a compaction is running")
    );
    sim.event(Event::Compact {
        reason: pokeshell_core::supervisor::CompactReason::Threshold,
        will_retry: false,
        tokens_before: None,
    })
    .tick();
    assert_eq!(limit_pokes(&sim).len(), 1, "sent once it ends");
}

#[test]
fn limit_r1_the_wait_survives_a_restart() {
    let mut first = Sim::new();
    fails_with(&mut first, RATE_LIMIT);
    let saved = first.entries("pokeshell-limit-wait");
    let entries: Vec<CustomEntry> = saved
        .into_iter()
        .map(|data| CustomEntry {
            custom_type: "pokeshell-limit-wait".into(),
            data,
        })
        .collect();

    // A new pokeshell, 10 s later, resumes the same session.
    // Its monotonic clock starts afresh; only the wall clock carries over.
    let mut second = Sim::new();
    second.now = Now::new(5_000, first.now.wall_ms + 10_000);
    second.session_with("s1", entries.clone());
    let wait = second.view().limit_wait.expect("re-armed");
    assert_eq!(wait.remaining_ms, 16_000, "what was left of the 26 s");
    assert_eq!(second.records("LIMIT-R1", LedgerKind::Action).len(), 1);
    second.run_for(15);
    assert!(limit_pokes(&second).is_empty());
    second.run_for(1);
    assert_eq!(limit_pokes(&second).len(), 1);

    // A wait that was already resumed does not come back.
    let mut done = entries;
    done.push(CustomEntry {
        custom_type: "pokeshell-limit-done".into(),
        data: Value::Null,
    });
    let mut third = Sim::new();
    third.session_with("s1", done);
    assert_eq!(third.view().limit_wait, None);
}

#[test]
fn limit_n1_a_notice_leaves_the_settle_to_the_orphaned_tool_poke() {
    let mut sim = Sim::new();
    sim.agent_start().tool_start("t1", "bash");
    let error = r#"400: {"message":"the provider gave up","type":"invalid_request_error"}"#;
    sim.event(Event::AgentEnd {
        stop_reason: Some(StopReason::Error),
        error_message: Some(error.to_string()),
    });
    sim.settle();
    assert_eq!(
        sim.records("LIMIT-N1", LedgerKind::Declined).len(),
        1,
        "the user is told"
    );
    sim.run_for(40);
    let sent = sim.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(
        sent[0].text.contains("is still running after"),
        "the orphan poke: {}",
        sent[0].text
    );
}

#[test]
fn limit_w1_a_planned_resume_loses_to_the_post_compaction_wake() {
    let mut sim = Sim::new();
    sim.agent_start().compact(true);
    fails_with_after_start(&mut sim, RATE_LIMIT);
    let lost = sim.records("LIMIT-W1", LedgerKind::Declined);
    assert!(
        lost.iter().any(|r| r.reason.contains("pre-empted by POKE-W4")),
        "{lost:?}"
    );
    assert_eq!(sim.view().limit_wait, None, "the loser changed nothing");
    assert!(sim.entries("pokeshell-limit-wait").is_empty());
}

/// As [`fails_with`], inside a run that already started.
fn fails_with_after_start(sim: &mut Sim, error: &str) {
    sim.event(Event::AgentEnd {
        stop_reason: Some(StopReason::Error),
        error_message: Some(error.to_string()),
    });
    let mut failed = Message::assistant(StopReason::Error, vec![]);
    failed.error_message = Some(error.to_string());
    sim.settle_as(Settled {
        tail: vec![Message::user("go"), failed],
        ..Settled::default()
    });
}
