use proptest::prelude::*;

use super::{PlainRun, TAKES_NEXT, has_messages, plain_run, prompts_defused};

fn verdict(args: &[&str]) -> Option<PlainRun> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    plain_run(&args)
}

#[test]
fn a_conversation_opens_the_screen() {
    for args in [
        &[][..],
        &["--continue"],
        &["say hi"],
        &["@notes.md", "what is in it"],
        &["--model", "mock/mock-large", "--thinking", "high", "hello"],
        &["--mode", "text"],
        &["--tui-mode", "regular", "-c"],
        &["--name", "refactor", "--use-theme", "dark"],
        &["--session-dir", "/tmp/s", "--offline", "-na"],
        &["--plan", "--verbose"],
        &["--plan=deep"],
    ] {
        assert_eq!(verdict(args), None, "{args:?}");
    }
}

#[test]
fn each_plain_mode_is_recognised() {
    let cases: [(&[&str], PlainRun); 12] = [
        (&["-p", "say hi"], PlainRun::Print),
        (&["--print"], PlainRun::Print),
        (&["--mode", "json", "-p", "say hi"], PlainRun::Json),
        (&["--mode", "json"], PlainRun::Json),
        (&["--mode", "rpc"], PlainRun::Rpc),
        (&["--help"], PlainRun::Help),
        (&["-h"], PlainRun::Help),
        (&["--version"], PlainRun::Version),
        (&["-v"], PlainRun::Version),
        (&["--list-models"], PlainRun::ListModels),
        (&["--list-models", "sonnet"], PlainRun::ListModels),
        (&["--export", "session.jsonl", "out.html"], PlainRun::Export),
    ];
    for (args, want) in cases {
        assert_eq!(verdict(args), Some(want), "{args:?}");
    }
}

#[test]
fn commands_count_only_as_the_first_argument() {
    for command in [
        "install",
        "remove",
        "uninstall",
        "update",
        "list",
        "config",
        "auth",
        "mcp",
    ] {
        assert_eq!(
            verdict(&[command, "--help"]),
            Some(PlainRun::Command(command.to_string()))
        );
        // Anywhere else the word is a message to the agent.
        assert_eq!(verdict(&["--continue", command]), None, "{command}");
    }
}

#[test]
fn a_value_is_never_read_as_an_option() {
    assert_eq!(verdict(&["--model", "--version"]), None);
    assert_eq!(verdict(&["--session", "-p"]), None);
    assert_eq!(verdict(&["--name", "-p"]), None);
    assert_eq!(verdict(&["-e", "--help", "--provider", "-v"]), None);
    assert_eq!(verdict(&["-p", "--version"]), Some(PlainRun::Version));
    // `-p` takes a prompt that starts with three dashes, not one that starts with one or two.
    assert_eq!(verdict(&["-p", "---", "hello"]), Some(PlainRun::Print));
    assert_eq!(
        verdict(&["-p", "-h"]),
        Some(PlainRun::Help),
        "pi shows its help, it runs no prompt"
    );
    // `--list-models` and an extension's flag take a plain next word only.
    assert_eq!(verdict(&["--list-models", "-v"]), Some(PlainRun::Version));
    assert_eq!(verdict(&["--plan", "-p"]), Some(PlainRun::Print));
    assert_eq!(verdict(&["--plan", "deep", "hello"]), None);
}

#[test]
fn everything_after_the_double_dash_is_a_message() {
    assert_eq!(verdict(&["--", "-p", "--version", "install"]), None);
    assert_eq!(verdict(&["-p", "--", "- a list item"]), Some(PlainRun::Print));
}

#[test]
fn the_last_mode_wins_and_json_or_rpc_outrank_print() {
    assert_eq!(verdict(&["--mode", "rpc", "--mode", "text"]), None);
    assert_eq!(
        verdict(&["--mode", "text", "--mode", "json"]),
        Some(PlainRun::Json)
    );
    assert_eq!(verdict(&["-p", "hi", "--mode", "rpc"]), Some(PlainRun::Rpc));
    assert_eq!(verdict(&["--mode", "text", "-p", "hi"]), Some(PlainRun::Print));
}

#[test]
fn arguments_pi_rejects_are_left_for_pi_to_reject() {
    for args in [
        &["-x"][..],
        &["--mode"],
        &["--mode", "yaml"],
        &["--mode", "--help"],
        &["--name"],
        &["-n"],
        &["--use-theme"],
        &["--use-theme", "-c"],
        &["--tui-mode", "wide"],
        &["--tui-mode"],
        // A short option with its value missing is an unknown option to pi.
        &["-e"],
        &["--version", "-zz"],
    ] {
        assert_eq!(verdict(args), Some(PlainRun::Refused), "{args:?}");
    }
    // A long option with its value missing is only an unknown flag, and pi starts.
    assert_eq!(verdict(&["--model"]), None);
    assert_eq!(verdict(&["--export"]), None);
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,8}",
        Just("-p".to_string()),
        Just("--version".to_string()),
        Just("--help".to_string()),
        Just("--mode".to_string()),
        Just("json".to_string()),
        Just("--".to_string()),
        Just("-x".to_string()),
        Just("@f".to_string()),
        Just("--plan".to_string()),
    ]
}

proptest! {
    /// Whatever follows an option that takes a value, the value itself changes nothing.
    #[test]
    fn a_taken_value_changes_nothing(
        option in proptest::sample::select(
            TAKES_NEXT.iter().copied().filter(|o| *o != "--export").collect::<Vec<_>>()
        ),
        value in word(),
        rest in proptest::collection::vec(word(), 0..6),
    ) {
        let mut with: Vec<String> = vec!["--continue".into(), option.into(), value];
        with.extend(rest.iter().cloned());
        let mut without: Vec<String> = vec!["--continue".into()];
        without.extend(rest);
        prop_assert_eq!(plain_run(&with), plain_run(&without));
    }
}

#[test]
fn a_first_prompt_is_a_message_argument_not_an_option_its_value_or_a_file() {
    let has = |a: &[&str]| has_messages(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert!(has(&["fix the test"]));
    assert!(has(&["--model", "mock/mock-model", "fix it"]));
    assert!(has(&["--", "-starts with a dash"]));
    assert!(has(&["@notes.md", "read these"]));
    assert!(!has(&[]));
    assert!(!has(&["--model", "mock/mock-model", "--continue"]));
    assert!(!has(&["@notes.md"]));
    assert!(!has(&["--", "@notes.md"]));
    assert!(!has(&["--session", "/s/file.jsonl", "--name", "x"]));
}

#[test]
fn prompts_are_written_out_and_options_their_values_and_files_are_not() {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let esc = "a\u{1b}[2J\u{7}b";
    let out = "a\\x1b[2J\\x07b";
    assert_eq!(
        prompts_defused(v(&["--model", esc, "@f\u{1b}", esc, "--", "@g", esc, "-x\u{9b}"])),
        v(&["--model", esc, "@f\u{1b}", out, "--", "@g", out, "-x\\x9b"])
    );
    assert_eq!(prompts_defused(v(&["-p", esc])), v(&["-p", out]));
    assert_eq!(prompts_defused(v(&["fix\tit\r\nnow"])), v(&["fix\tit\nnow"]));
    assert_eq!(prompts_defused(v(&["--continue"])), v(&["--continue"]));
}
