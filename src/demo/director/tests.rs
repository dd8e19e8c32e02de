use super::*;
use crate::demo::model::Step;
use crate::demo::tour::{Expect, ExpectKind, Tour};
use pokeshell_core::config::{KeyId, SettingValue};

const PACE: Pace = Pace {
    lead_ms: 1000,
    type_ms: 200,
    enter_retry_ms: 500,
    enter_tries: 3,
    quiet_ms: 700,
};

fn plan(number: usize, expect: &[(&str, ExpectKind)], changes: Vec<Change>) -> ChapterPlan {
    ChapterPlan {
        number,
        title: format!("title {number}"),
        about: format!("about {number}"),
        watch: Some(format!("watch {number}")),
        done: Some(format!("done {number}")),
        prompt: format!("prompt {number}"),
        changes,
        scenario: Scenario {
            steps: vec![Step::text(format!("answer {number}"))],
            summaries: Vec::new(),
            default: None,
        },
        expect: expect
            .iter()
            .map(|(rule, kind)| Expect {
                rule: rule.to_string(),
                kind: *kind,
                text: None,
            })
            .collect(),
        timeout_ms: 10_000,
    }
}

fn abort_on() -> Vec<Change> {
    vec![Change {
        key: KeyId::PokeAutoAbort,
        value: SettingValue::Bool(true),
    }]
}

fn record(rule: &str, kind: LedgerKind) -> Cue {
    Cue::Record {
        rule: rule.to_string(),
        kind,
        reason: "what happened".to_string(),
    }
}

fn two_chapters() -> Director {
    Director::new(
        "tour",
        vec![
            plan(1, &[("POKE-M2", ExpectKind::Declined)], Vec::new()),
            plan(2, &[("POKE-M3", ExpectKind::Action)], abort_on()),
        ],
        2,
        PACE,
    )
}

/// Plays the first chapter up to its run having started at `t` (returned).
fn start_first_run(d: &mut Director) -> u64 {
    assert!(matches!(d.handle(Cue::PiReady, 0)[..], [Act::Queue(_)]));
    assert_eq!(d.tick(1000), [Act::Type("prompt 1".into())]);
    assert_eq!(d.tick(1200), [Act::Enter]);
    assert!(d.handle(Cue::AgentStart, 1300).is_empty());
    assert_eq!(d.stage(), Stage::Playing);
    1300
}

#[test]
fn nothing_happens_before_pi_is_ready() {
    let mut d = two_chapters();
    assert!(d.tick(60_000).is_empty());
    assert_eq!(d.stage(), Stage::Waiting);
    assert_eq!(d.narration().text, "pi is starting…");
    assert_eq!(d.narration().heading, "tour");
}

#[test]
fn a_chapter_queues_its_answers_then_types_its_prompt_after_the_lead_and_presses_enter() {
    let mut d = two_chapters();
    let acts = d.handle(Cue::PiReady, 0);
    let [Act::Queue(s)] = &acts[..] else {
        panic!("only the queue: {acts:?}")
    };
    assert_eq!(s.steps, vec![Step::text("answer 1")]);
    assert_eq!(d.stage(), Stage::Intro);
    assert_eq!(d.narration().text, "about 1");
    assert_eq!(d.next_deadline(), Some(1000));
    assert!(d.tick(999).is_empty(), "the reader gets the lead time");
    assert_eq!(d.tick(1000), [Act::Type("prompt 1".into())]);
    assert!(d.tick(1199).is_empty(), "the prompt stays visible in the editor");
    assert_eq!(d.tick(1200), [Act::Enter]);
    assert_eq!(d.stage(), Stage::Submitted);
}

#[test]
fn enter_is_pressed_again_until_the_run_starts_then_the_chapter_plays() {
    let mut d = two_chapters();
    d.handle(Cue::PiReady, 0);
    d.tick(1000);
    assert_eq!(d.tick(1200), [Act::Enter]);
    assert!(d.tick(1600).is_empty());
    assert_eq!(d.tick(1700), [Act::Enter], "pi ignored the first Enter");
    assert!(d.handle(Cue::AgentStart, 1800).is_empty());
    assert_eq!(d.stage(), Stage::Playing);
    assert!(d.tick(5000).is_empty(), "no more Enter once the run started");
    assert_eq!(d.narration().text, "👀 watch 1");
    assert_eq!(d.next_deadline(), Some(11_800), "the chapter's timeout");
}

#[test]
fn the_prompt_waits_while_pi_is_busy_or_compacting() {
    let mut d = two_chapters();
    d.handle(Cue::PiReady, 0);
    d.handle(Cue::AgentStart, 500);
    assert!(d.tick(2000).is_empty(), "a run of the user's is going on");
    assert!(d.handle(Cue::Compaction { running: true }, 2100).is_empty());
    assert!(d.handle(Cue::AgentSettled, 2200).is_empty(), "still compacting");
    assert_eq!(
        d.handle(Cue::Compaction { running: false }, 2300),
        [Act::Type("prompt 1".into())]
    );
}

#[test]
fn the_expected_record_recovers_the_chapter_and_the_next_starts_after_quiet_idle_time() {
    let mut d = two_chapters();
    start_first_run(&mut d);
    assert!(d.handle(record("POKE-M2", LedgerKind::Declined), 4300).is_empty());
    assert_eq!(d.stage(), Stage::Recovered);
    assert_eq!(d.narration().text, "✔ done 1");
    assert!(d.tick(6000).is_empty(), "the run is still going");
    assert!(d.handle(Cue::AgentSettled, 9000).is_empty());
    assert!(d.tick(9699).is_empty(), "quiet time after the settle");
    let acts = d.tick(9700);
    assert!(
        matches!(&acts[..], [Act::ApplySettings(c), Act::Queue(_)] if *c == abort_on()),
        "chapter 2 applies its settings and queues its answers: {acts:?}"
    );
    assert_eq!(d.narration().heading, "chapter 2/2");
    assert_eq!(d.narration().title.as_deref(), Some("title 2"));
}

#[test]
fn no_deadline_while_a_stage_waits_for_pi_to_be_idle() {
    let mut d = two_chapters();
    start_first_run(&mut d);
    d.handle(record("POKE-M2", LedgerKind::Declined), 2000);
    assert_eq!(d.next_deadline(), None, "recovered, but the run goes on");
    d.handle(Cue::AgentSettled, 9000);
    assert_eq!(d.next_deadline(), Some(9700));

    let mut d = two_chapters();
    d.handle(Cue::PiReady, 0);
    d.handle(Cue::AgentStart, 10);
    assert_eq!(d.next_deadline(), None, "the prompt waits for the user's run");
}

#[test]
fn activity_after_the_recovery_restarts_the_quiet_time() {
    let mut d = two_chapters();
    start_first_run(&mut d);
    d.handle(Cue::AgentSettled, 2000);
    d.handle(record("POKE-M2", LedgerKind::Declined), 2000);
    assert!(
        d.handle(Cue::AgentStart, 2500).is_empty(),
        "a resume started a run"
    );
    d.handle(Cue::AgentSettled, 4000);
    assert!(d.tick(4699).is_empty());
    assert!(!d.tick(4700).is_empty());
}

#[test]
fn records_of_another_kind_or_before_the_prompt_do_not_count() {
    let mut d = two_chapters();
    d.handle(Cue::PiReady, 0);
    d.handle(record("POKE-M2", LedgerKind::Declined), 100);
    d.tick(1000);
    d.tick(1200);
    d.handle(Cue::AgentStart, 1300);
    d.handle(record("POKE-M2", LedgerKind::Action), 1400);
    d.handle(record("POKE-M3", LedgerKind::Declined), 1500);
    assert_eq!(d.stage(), Stage::Playing);
}

#[test]
fn an_expectation_with_text_waits_for_a_record_that_says_it() {
    let mut chapter = plan(1, &[("HO-T1", ExpectKind::Outcome)], Vec::new());
    chapter.expect[0].text = Some("finished".into());
    let mut d = Director::new("tour", vec![chapter], 1, PACE);
    start_first_run(&mut d);
    let outcome = |reason: &str| Cue::Record {
        rule: "HO-T1".into(),
        kind: LedgerKind::Outcome,
        reason: reason.into(),
    };
    d.handle(outcome("the handoff compaction failed: nothing to compact"), 2000);
    assert_eq!(d.stage(), Stage::Playing);
    d.handle(outcome("the handoff compaction finished"), 2500);
    assert_eq!(d.stage(), Stage::Recovered);
}

#[test]
fn settings_of_a_chapter_are_undone_when_it_ends() {
    let mut d = Director::new(
        "tour",
        vec![plan(2, &[("POKE-M3", ExpectKind::Action)], abort_on())],
        7,
        PACE,
    );
    let acts = d.handle(Cue::PiReady, 0);
    assert!(matches!(&acts[..], [Act::ApplySettings(_), Act::Queue(_)]));
    assert_eq!(d.narration().heading, "chapter 2/7", "a range keeps the numbers");
    d.tick(1000);
    d.tick(1200);
    d.handle(Cue::AgentStart, 1300);
    d.handle(record("POKE-M3", LedgerKind::Action), 4300);
    d.handle(Cue::AgentSettled, 4400);
    assert_eq!(d.tick(5100), [Act::RestoreSettings]);
    assert_eq!(d.stage(), Stage::Finished);
    assert!(
        d.narration()
            .text
            .starts_with("Tour over: 1 of 1 stalls handled.")
    );
    assert_eq!(d.next_deadline(), None);
}

#[test]
fn a_chapter_whose_records_never_come_is_missed_named_and_left() {
    let mut d = two_chapters();
    let t = start_first_run(&mut d);
    d.handle(Cue::AgentSettled, t + 2000);
    assert!(d.tick(t + 9999).is_empty());
    assert!(d.tick(t + 10_000).is_empty(), "missed; the quiet time starts");
    assert_eq!(d.stage(), Stage::Missed);
    let text = d.narration().text;
    assert!(
        text.starts_with("✘ pokeshell recorded no POKE-M2 within 10 s"),
        "{text}"
    );
    assert!(matches!(
        d.tick(t + 10_700)[..],
        [Act::ApplySettings(_), Act::Queue(_)]
    ));
    assert_eq!(d.missed(), [1]);
}

#[test]
fn a_prompt_pi_never_takes_is_missed_after_the_enter_tries() {
    let mut d = two_chapters();
    d.handle(Cue::PiReady, 0);
    d.tick(1000);
    let enters: usize = [1200, 1700, 2200, 2700]
        .into_iter()
        .map(|t| d.tick(t).iter().filter(|a| **a == Act::Enter).count())
        .sum();
    assert_eq!(enters, 3);
    assert_eq!(d.stage(), Stage::Missed);
    assert!(d.narration().text.contains("pi did not take the prompt"));
}

#[test]
fn a_chapter_without_expectations_ends_with_its_first_settle() {
    let mut d = Director::new("tour", vec![plan(1, &[], Vec::new())], 1, PACE);
    d.handle(Cue::PiReady, 0);
    d.tick(1000);
    d.tick(1200);
    d.handle(Cue::AgentStart, 1300);
    d.handle(Cue::AgentSettled, 2000);
    assert_eq!(d.stage(), Stage::Recovered);
    d.tick(2700);
    assert_eq!(d.stage(), Stage::Finished);
}

#[test]
fn a_script_without_chapters_is_free_play_from_the_start() {
    let mut d = Director::new("my stall", Vec::new(), 0, PACE);
    assert!(d.handle(Cue::PiReady, 0).is_empty());
    assert_eq!(d.stage(), Stage::Finished);
    let n = d.narration();
    assert_eq!(n.heading, "my stall");
    assert!(n.text.starts_with("Type a prompt"), "{}", n.text);
}

#[test]
fn the_whole_built_in_tour_plays_through_when_every_recovery_comes() {
    let tour = Tour::built_in().unwrap();
    let plans = tour.plans(None).unwrap();
    let mut d = Director::new("tour", plans.clone(), plans.len(), Pace::default());
    let mut typed = Vec::new();
    let mut applied = 0;
    let mut restored = 0;
    let mut t = 0;
    let mut perform = |acts: Vec<Act>, typed: &mut Vec<String>| {
        for act in acts {
            match act {
                Act::Type(p) => typed.push(p),
                Act::ApplySettings(_) => applied += 1,
                Act::RestoreSettings => restored += 1,
                Act::Queue(_) | Act::Enter => {}
            }
        }
    };
    perform(d.handle(Cue::PiReady, t), &mut typed);
    for plan in &plans {
        // Time passes until the prompt is submitted.
        let mut entered = false;
        while !entered {
            t += 100;
            let acts = d.tick(t);
            entered = acts.contains(&Act::Enter);
            perform(acts, &mut typed);
            assert!(t < 1_000_000, "chapter {} never submitted", plan.number);
        }
        perform(d.handle(Cue::AgentStart, t), &mut typed);
        for e in &plan.expect {
            let kind = match e.kind {
                ExpectKind::Action => LedgerKind::Action,
                ExpectKind::Declined => LedgerKind::Declined,
                ExpectKind::Outcome => LedgerKind::Outcome,
            };
            let cue = Cue::Record {
                rule: e.rule.clone(),
                kind,
                reason: format!("… {} …", e.text.clone().unwrap_or_default()),
            };
            perform(d.handle(cue, t + 10), &mut typed);
        }
        perform(d.handle(Cue::AgentSettled, t + 20), &mut typed);
    }
    perform(d.tick(t + 10_000), &mut typed);
    let prompts: Vec<String> = plans.iter().map(|p| p.prompt.clone()).collect();
    assert_eq!(typed, prompts, "each chapter's prompt typed once, in order");
    assert_eq!(d.stage(), Stage::Finished);
    assert!(d.missed().is_empty());
    assert_eq!(
        (applied, restored),
        (3, 3),
        "auto-abort, handoff and stalled-stream chapters"
    );
}
