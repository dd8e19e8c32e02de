use super::*;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("pokeshell").chain(args.iter().copied())).and_then(Cli::with_globals)
}

#[test]
fn trailing_arguments_go_to_pi_even_when_they_look_like_the_subcommand() {
    let cli = parse(&["--pi", "/x/pi", "--", "demo", "--continue"]).unwrap();
    assert!(cli.mode.is_none());
    assert_eq!(cli.pi.as_deref(), Some(std::path::Path::new("/x/pi")));
    assert_eq!(cli.pi_args, ["demo", "--continue"]);
    let cli = parse(&["--threshold", "5"]).unwrap();
    assert!(cli.mode.is_none() && cli.pi_args.is_empty());
}

#[test]
fn demo_takes_its_own_options() {
    let cli = parse(&[
        "demo",
        "--pi",
        "/p/pi",
        "--install-pi",
        "--script",
        "stall.json",
        "--chapters",
        "1-3",
        "--prefix",
        "ctrl+b",
    ])
    .unwrap();
    let Some(Mode::Demo(args)) = cli.mode else {
        panic!("not the demo: {cli:?}")
    };
    assert_eq!(args.pi.as_deref(), Some(std::path::Path::new("/p/pi")));
    assert!(args.install_pi);
    assert_eq!(args.script.as_deref(), Some(std::path::Path::new("stall.json")));
    assert_eq!(args.chapters, Some(ChapterRange { first: 1, last: 3 }));
    assert_eq!(args.prefix.map(|p| p.canonical()).as_deref(), Some("ctrl+b"));
    let bare = parse(&["demo"]).unwrap();
    assert!(matches!(
        bare.mode,
        Some(Mode::Demo(DemoArgs {
            install_pi: false,
            ..
        }))
    ));
}

#[test]
fn the_demos_session_argv_parses_back_to_the_same_demo() {
    let cli = parse(&[
        "--prefix",
        "ctrl+b",
        "demo",
        "--chapters",
        "2-3",
        "--script",
        "/t/s.json",
    ])
    .unwrap();
    let Some(Mode::Demo(args)) = cli.mode else {
        panic!("not the demo: {cli:?}")
    };
    let argv = args.session_argv(std::path::Path::new("/x/pi"));
    let back = Cli::try_parse_from_argv(&argv).unwrap();
    let Some(Mode::Demo(back)) = back.mode else {
        panic!("not the demo: {argv:?}")
    };
    assert_eq!(back.pi.as_deref(), Some(std::path::Path::new("/x/pi")));
    assert_eq!(back.script, args.script);
    assert_eq!(back.chapters, args.chapters);
    assert_eq!(back.prefix, args.prefix);
    assert!(!back.install_pi, "the terminal installs pi, never the server");
}

#[test]
fn demo_refuses_what_it_does_not_know() {
    assert!(parse(&["demo", "--", "--continue"]).is_err());
    assert!(parse(&["demo", "--chapters", "3-1"]).is_err());
    assert!(
        parse(&["--threshold", "5", "demo"]).is_err(),
        "top-level options do not mix with demo"
    );
    assert!(parse(&["demo", "--threshold", "5"]).is_err());
    assert!(parse(&["demos"]).is_err());
}

#[test]
fn global_options_are_taken_before_or_after_a_subcommand() {
    let path = Some(std::path::Path::new("/x/pi"));
    for args in [
        &["--pi", "/x/pi", "--prefix", "ctrl+b", "attach", "work"][..],
        &["attach", "--pi", "/x/pi", "work", "--prefix", "ctrl+b"][..],
    ] {
        let cli = parse(args).unwrap();
        assert!(
            matches!(&cli.mode, Some(Mode::Attach { name: Some(n) }) if n == "work"),
            "{args:?}"
        );
        assert_eq!(cli.pi.as_deref(), path, "{args:?}");
        assert_eq!(cli.prefix.map(|p| p.canonical()).as_deref(), Some("ctrl+b"));
    }
    for args in [
        &["--command", "htop", "--threshold", "9", "new", "-d"][..],
        &["new", "--command", "htop", "-d", "--threshold", "9"][..],
    ] {
        let cli = parse(args).unwrap();
        assert!(matches!(&cli.mode, Some(Mode::New(n)) if n.detached), "{args:?}");
        assert_eq!(cli.command.as_deref(), Some("htop"));
        assert_eq!(cli.config.to_argv(), ["--threshold", "9"]);
    }
    for args in [&["--pi", "/x/pi", "demo"][..], &["demo", "--pi", "/x/pi"][..]] {
        let Some(Mode::Demo(demo)) = parse(args).unwrap().mode else {
            panic!("not the demo: {args:?}")
        };
        assert_eq!(
            demo.pi.as_deref(),
            path,
            "the demo gets the global --pi: {args:?}"
        );
    }
    for args in [
        &["--pi", "/x/pi", "ls"][..],
        &["ls", "--pi", "/x/pi"][..],
        &["kill", "a", "--pi", "/p"][..],
    ] {
        assert!(parse(args).is_ok(), "{args:?}");
    }
}

#[test]
fn what_a_subcommand_would_lose_or_does_not_know_is_refused_plainly() {
    let err = parse(&["--bogus", "ls"]).unwrap_err().to_string();
    assert!(err.contains("unexpected argument '--bogus'"), "{err}");
    let err = parse(&["ls", "--bogus"]).unwrap_err().to_string();
    assert!(err.contains("unexpected argument '--bogus'"), "{err}");
    let err = parse(&["demo", "--command", "htop"]).unwrap_err().to_string();
    assert!(
        err.contains("--command does not apply to `pokeshell demo`"),
        "{err}"
    );
    let err = parse(&["--show-config", "ls"]).unwrap_err().to_string();
    assert!(
        err.contains("--show-config does not apply to `pokeshell ls`"),
        "{err}"
    );
    assert!(
        parse(&["--pi", "/a", "--command", "x", "ls"]).is_err(),
        "--pi and --command conflict"
    );
}
