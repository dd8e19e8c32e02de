use super::*;
use crate::demo::model::Reply;
use pokeshell_core::config::{KeyId, SettingValue};

fn chapter_json(extra: &str) -> String {
    format!(
        r#"{{"chapters":[{{"title":"T","about":"A","prompt":"do it","steps":[{{"type":"empty"}}]{extra}}}]}}"#
    )
}

fn error_of(text: &str) -> String {
    format!("{:#}", Tour::from_json(text).unwrap_err())
}

#[test]
fn built_in_tour_has_the_eleven_stalls_each_with_a_recovery_to_wait_for() {
    let tour = Tour::built_in().unwrap();
    let plans = tour.plans(None).unwrap();
    assert_eq!(plans.len(), 11);
    let expected: Vec<&str> = plans.iter().map(|p| p.expect[0].rule.as_str()).collect();
    assert_eq!(
        expected,
        [
            "POKE-M2", "POKE-M3", "POKE-W4", "SAR-S8", "SAR-L4", "WAK-T3", "HO-T1", "STALL-S1", "LIMIT-W1",
            "PROM-P1", "RST-D1"
        ]
    );
    for (i, plan) in plans.iter().enumerate() {
        assert_eq!(plan.number, i + 1);
        assert!(!plan.scenario.steps.is_empty(), "chapter {} has no steps", i + 1);
        assert!(
            plan.watch.is_some() && plan.done.is_some(),
            "chapter {} narrates",
            i + 1
        );
        assert!(
            plan.timeout_ms <= 45_000,
            "chapter {} keeps the tour short",
            i + 1
        );
    }
    assert!(tour.default.is_some(), "free typing gets a plain answer");
}

#[test]
fn built_in_tour_turns_auto_abort_on_only_in_its_chapter() {
    let plans = Tour::built_in().unwrap().plans(None).unwrap();
    let with_abort: Vec<usize> = plans
        .iter()
        .filter(|p| {
            p.changes
                .iter()
                .any(|c| c.key == KeyId::PokeAutoAbort && c.value == SettingValue::Bool(true))
        })
        .map(|p| p.number)
        .collect();
    assert_eq!(with_abort, [2]);
    let abort = &plans[1].changes;
    assert!(
        abort
            .iter()
            .any(|c| c.key == KeyId::PokeAutoPoke && c.value == SettingValue::Bool(false)),
        "auto-abort and auto-poke exclude each other, so the chapter turns auto-poke off: {abort:?}"
    );
}

#[test]
fn built_in_tour_steps_play_the_intended_stalls() {
    let plans = Tour::built_in().unwrap().plans(None).unwrap();
    let compaction = &plans[2].scenario;
    assert!(
        compaction.steps[0].prompt_tokens.is_some_and(|t| t > 8000),
        "the tool call's usage crosses the 8000-token compaction threshold of the 16k model"
    );
    assert!(matches!(
        compaction.steps[1].reply,
        Reply::Error { status: 400, .. }
    ));
    assert!(matches!(plans[3].scenario.steps[0].reply, Reply::Thinking { .. }));
    let refused: Vec<&str> = plans[4]
        .scenario
        .steps
        .iter()
        .filter_map(|s| match &s.reply {
            Reply::ToolCalls { calls, .. } => calls[0].arguments["command"].as_str(),
            _ => None,
        })
        .collect();
    assert_eq!(
        refused.len(),
        3,
        "three identical calls reach the loop threshold of 3"
    );
    assert!(
        refused.iter().all(|c| *c == refused[0] && c.contains("rm -rf"))
            && crate::demo::env::GUARD_EXTENSION.contains(r#"includes("rm -rf")"#),
        "the demo's guard refuses the loop chapter's call: {refused:?}"
    );
    let Reply::ToolCalls { calls, .. } = &plans[5].scenario.steps[0].reply else {
        panic!("the wakeup chapter starts with a tool call")
    };
    assert_eq!(calls[0].name, "schedule_wakeup");
    let tokens: Vec<u64> = plans[6]
        .scenario
        .steps
        .iter()
        .filter_map(|s| s.prompt_tokens)
        .collect();
    assert!(
        tokens.iter().all(|t| *t < 8000) && tokens.last().is_some_and(|t| *t >= 6400),
        "the handoff chapter settles above 40 % of 16k, never reaching pi's own compaction threshold: {tokens:?}"
    );
    assert_eq!(plans[6].expect[0].text.as_deref(), Some("finished"));
}

#[test]
fn plain_scenario_files_are_tours_without_chapters() {
    let tour =
        Tour::from_json(r#"{"steps":[{"type":"text","text":"hi"}],"default":{"type":"empty"}}"#).unwrap();
    assert!(tour.chapters.is_empty());
    assert_eq!(tour.opening().steps.len(), 1);
    assert!(tour.opening().default.is_some());
    assert!(tour.plans(None).unwrap().is_empty());
}

#[test]
fn chapter_settings_are_checked_against_the_schema() {
    let ok = Tour::from_json(&chapter_json(
        r#","settings":{"poke":{"thresholdSeconds":7},"pokeshell":{"bell":false}}"#,
    ))
    .unwrap();
    let changes = &ok.plans(None).unwrap()[0].changes;
    assert_eq!(changes.len(), 2);
    assert!(changes.contains(&Change {
        key: KeyId::PokeThresholdSeconds,
        value: SettingValue::Int(7)
    }));

    let err = error_of(&chapter_json(r#","settings":{"poke":{"thresholdSeconds":0}}"#));
    assert!(
        err.contains("poke.thresholdSeconds") && err.contains("chapter 1"),
        "{err}"
    );
    let err = error_of(&chapter_json(r#","settings":{"poke":{"colour":1}}"#));
    assert!(err.contains("poke.colour is not a pokeshell setting"), "{err}");
    let err = error_of(&chapter_json(r#","settings":{"retry":{"maxRetries":1}}"#));
    assert!(err.contains("only pokeshell's blocks"), "{err}");
    let err = error_of(r#"{"settings":{"handoff":{"percent":"high"}}}"#);
    assert!(
        err.contains("handoff.percent") && err.contains("top-level"),
        "{err}"
    );
}

#[test]
fn expectations_name_known_rules_and_kinds() {
    let tour = Tour::from_json(&chapter_json(
        r#","expect":[{"rule":"POKE-M2","kind":"declined"},{"rule":"SAR-S8"}]"#,
    ))
    .unwrap();
    let expect = &tour.plans(None).unwrap()[0].expect;
    assert_eq!(expect[0].kind, ExpectKind::Declined);
    assert_eq!(expect[1].kind, ExpectKind::Action);
    assert!(ExpectKind::Action.matches(LedgerKind::Action));
    assert!(!ExpectKind::Action.matches(LedgerKind::Declined));

    let err = error_of(&chapter_json(r#","expect":[{"rule":"POKE-X9"}]"#));
    assert!(err.contains("unknown rule \"POKE-X9\""), "{err}");
    let err = error_of(&chapter_json(r#","expect":[{"rule":"SAR-S8","kind":"maybe"}]"#));
    assert!(err.contains("maybe"), "{err}");
}

#[test]
fn prompts_must_be_one_plain_line() {
    for (prompt, why) in [
        ("", "empty"),
        ("two\\nlines", "one line"),
        ("/quit", "must not start with /"),
        ("!rm -rf x", "must not start with /"),
    ] {
        let text = format!(r#"{{"chapters":[{{"title":"T","about":"A","prompt":"{prompt}"}}]}}"#);
        let err = error_of(&text);
        assert!(err.contains(why), "{prompt:?}: {err}");
    }
}

#[test]
fn unknown_fields_and_bad_steps_are_errors_naming_the_place() {
    let err = error_of(&chapter_json(r#","colour":"red""#));
    assert!(err.contains("colour"), "{err}");
    let err = error_of(r#"{"chapters":[{"title":"T","about":"A","prompt":"p","steps":[{"type":"txt"}]}]}"#);
    assert!(err.contains("txt"), "{err}");
    let err = error_of(&chapter_json(r#","timeout_seconds":0"#));
    assert!(err.contains("timeout_seconds"), "{err}");
}

#[test]
fn chapter_ranges_select_chapters_and_keep_their_numbers() {
    assert_eq!(
        "2-3".parse::<ChapterRange>(),
        Ok(ChapterRange { first: 2, last: 3 })
    );
    assert_eq!(
        "4".parse::<ChapterRange>(),
        Ok(ChapterRange { first: 4, last: 4 })
    );
    assert!("3-2".parse::<ChapterRange>().is_err());
    assert!("0".parse::<ChapterRange>().is_err());
    assert!("a-b".parse::<ChapterRange>().is_err());

    let tour = Tour::built_in().unwrap();
    let numbers: Vec<usize> = tour
        .plans(Some(ChapterRange { first: 2, last: 3 }))
        .unwrap()
        .iter()
        .map(|p| p.number)
        .collect();
    assert_eq!(numbers, [2, 3]);
    let err = tour
        .plans(Some(ChapterRange { first: 6, last: 12 }))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no chapter 12") && err.contains("11 chapters"),
        "{err}"
    );
}

#[test]
fn a_file_that_cannot_be_read_is_named() {
    let err = format!(
        "{:#}",
        Tour::from_file(Path::new("/nonexistent/tour.json")).unwrap_err()
    );
    assert!(err.contains("/nonexistent/tour.json"), "{err}");
}

#[test]
fn the_documented_tour_example_parses() {
    let doc = include_str!("../../../docs/scenario-format.md");
    let tours = &doc[doc.find("## Tours").expect("a Tours section")..];
    let start = tours.find("```json\n").expect("an example") + "```json\n".len();
    let end = start + tours[start..].find("```").expect("the example ends");
    let tour = Tour::from_json(&tours[start..end]).unwrap();
    let plans = tour.plans(None).unwrap();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].expect[0].rule, "POKE-M3");
    assert_eq!(plans[0].changes.len(), 2);
}
