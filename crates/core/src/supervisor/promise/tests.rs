use super::*;

fn certain(text: &str) -> String {
    match classify(text) {
        Verdict::Certain { step } => step,
        other => panic!("expected certain for {text:?}, got {other:?}"),
    }
}

fn is_no(text: &str) -> bool {
    classify(text) == Verdict::No
}

fn run(text: &str, had_tool_calls: bool) -> RunEnding<'_> {
    RunEnding {
        text,
        had_tool_calls,
        ended_badly: false,
    }
}

#[test]
fn the_issues_example_is_certain_and_quotes_the_step() {
    let step =
        certain("Ok, the parser change is in. Now I'll run the test suite to make sure nothing else broke:");
    assert_eq!(
        step,
        "Now I'll run the test suite to make sure nothing else broke:"
    );
}

#[test]
fn announced_steps_in_their_usual_shapes_are_certain() {
    for text in [
        "I'll download the binary and install it from the local file now.",
        "Let me check the logs.",
        "Next, I'll update the migration.",
        "Moving on to the frontend:",
        "Running the linter now.",
        "The build failed on a missing import. Let me fix that...",
        "Now I'll run it:\n\n```bash\ncargo test\n```",
        "I\u{2019}m going to rewrite the loader first.",
    ] {
        certain(text);
    }
}

#[test]
fn a_plan_without_a_mark_of_immediacy_is_unsure() {
    assert!(matches!(
        classify("I'll refactor the config loader."),
        Verdict::Unsure { .. }
    ));
    assert!(matches!(
        classify("I need to update the schema as well."),
        Verdict::Unsure { .. }
    ));
    assert!(matches!(
        classify("I'll handle the remaining cases as follows:\n\n1. empty input\n2. huge input"),
        Verdict::Unsure { .. }
    ));
}

// The healthy twins [PROM-D1]: each shape of a finished or handed-back turn is left alone.

#[test]
fn a_final_summary_is_left_alone() {
    assert!(is_no(
        "All done. The parser now handles nested quotes, and the 42 tests pass.\n\nChanges:\n- src/parse.rs: new quote state\n- tests/parse.rs: three new cases"
    ));
    assert!(is_no("I've fixed the bug and all tests pass."));
}

#[test]
fn a_question_to_the_user_is_left_alone() {
    assert!(is_no(
        "The migration drops a column. Should I go ahead and run it?"
    ));
    assert!(is_no("Which of the two layouts do you prefer?"));
}

#[test]
fn a_let_me_know_is_left_alone() {
    assert!(is_no(
        "The fix is in place. Let me know if you want me to also update the docs."
    ));
    assert!(is_no(
        "Would you like me to run the benchmarks next? If so, I'll start with the parser."
    ));
}

#[test]
fn a_refusal_is_left_alone() {
    assert!(is_no(
        "I can't push to that remote: the credentials are not available to me."
    ));
    assert!(is_no("I'm sorry, but I won't disable the certificate check."));
}

#[test]
fn a_plain_answer_is_left_alone() {
    assert!(is_no(
        "The function returns the number of bytes written, or an error if the file is closed."
    ));
    assert!(is_no(
        "Yes: `--release` turns on optimisations and strips debug assertions."
    ));
}

#[test]
fn a_step_put_off_on_purpose_is_left_alone() {
    assert!(is_no("I will look again later."));
    assert!(is_no(
        "The build takes an hour; I'll check back once it finishes."
    ));
    assert!(is_no("I will check back soon."));
}

#[test]
fn a_summary_that_gives_its_content_after_a_colon_is_left_alone() {
    assert!(is_no(
        "Let me summarize: the cache was stale, the key is now hashed, and the tests pass."
    ));
}

#[test]
fn an_empty_or_blank_message_is_not_judged() {
    assert!(is_no(""));
    assert!(is_no("  \n\n "));
}

#[test]
fn other_languages_are_left_alone_unless_an_english_cue_matches() {
    assert!(is_no("Jetzt führe ich die Tests aus:"));
    assert!(is_no("Je vais maintenant lancer les tests :"));
    assert!(is_no("现在我来运行测试："));
    assert!(is_no("Ahora voy a ejecutar las pruebas."));
    // An English cue inside is matched like any other.
    certain("Die Änderung ist drin. Now I'll run the tests:");
}

#[test]
fn a_run_without_tool_calls_is_left_alone_unless_certain() {
    let plan = "I'll refactor the config loader.";
    assert!(matches!(judge(run(plan, true)), Verdict::Unsure { .. }));
    assert_eq!(judge(run(plan, false)), Verdict::No);
    let promise = "Let me look at the file.";
    assert!(matches!(judge(run(promise, false)), Verdict::Certain { .. }));
}

#[test]
fn a_failed_or_aborted_run_is_another_rules_business() {
    let ending = RunEnding {
        text: "Now I'll run the tests:",
        had_tool_calls: true,
        ended_badly: true,
    };
    assert_eq!(judge(ending), Verdict::No);
}

#[test]
fn a_long_step_is_quoted_by_its_end_and_on_one_line() {
    let long = format!("Now I'll {} finally run the tests:", "carefully ".repeat(40));
    let step = certain(&long);
    assert_eq!(step.chars().count(), STEP_QUOTE_MAX);
    assert!(step.starts_with('…') && step.ends_with("finally run the tests:"));
    assert!(!certain("Now I'll run\nthe tests:").contains('\n'));
}
