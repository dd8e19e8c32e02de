//! Scripts drive agents, end to end on real pi against the scripted model, in one server: a first
//! prompt given to `new` (its escape sequences written out), `send` (words and standard input), `wait` right after it (for the run the
//! message started, never an earlier state), `read` as text and JSON, `events`, a wait that times
//! out and one for the session's end; bad input refused with the reason and nothing sent; the bound
//! on sessions agents start. docs/driving.md.

#[path = "drive/lead.rs"]
mod lead;
mod support;
#[path = "drive/world.rs"]
mod world;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::matrix::trailing_user_text;
use world::{SLOW, World, said, stdout};

/// What the model was asked, as the last user message of each chat request.
fn prompts(w: &World) -> Vec<String> {
    w.model
        .chat_requests()
        .iter()
        .filter_map(trailing_user_text)
        .collect()
}

/// A command line, its standard input, the status it must end with and what it must say.
type BadInput<'a> = (&'a [&'a str], Option<&'a [u8]>, i32, &'a str);

#[track_caller]
fn ok(out: &std::process::Output, what: &str) {
    assert!(out.status.success(), "{what}: {}", said(out));
}

#[test]
fn a_script_sends_waits_and_reads_and_bad_input_sends_nothing() {
    let w = World::new(json!({}));
    // A first prompt for `new`: pi's own message arguments after `--`.
    let out = w.new_session(None, "w1", &["say hello [[text:hello from w1]]"]);
    ok(&out, "new with a first prompt");
    assert!(said(&out).contains("started session 1:w1"), "{}", said(&out));
    let events = w.spawn(&["events", "--json"]);
    // Right after `new`: the run the first prompt started.
    let wait = w.run(&["wait", "w1", "--timeout", "120"]);
    ok(&wait, "wait after new");
    assert_eq!(stdout(&wait), "", "a wait that reached its state is quiet");
    assert_eq!(stdout(&w.run(&["read", "w1"])), "hello from w1\n");

    // A reply that takes 1.5 s: a wait right after the send waits for it, not for the idle state
    // the session was in a moment before.
    let sent = Instant::now();
    let sent_ms = world::unix_ms();
    ok(
        &w.run(&["send", "w1", "slowly", "[[delay:1500]][[text:the slow answer]]"]),
        "send",
    );
    ok(&w.run(&["wait", "1:w1"]), "wait after send");
    let returned_ms = world::unix_ms();
    assert!(
        sent.elapsed() >= Duration::from_millis(1500),
        "the wait returned before the reply"
    );
    assert_eq!(stdout(&w.run(&["read", "1"])), "the slow answer\n");
    // Speed: the wait returned soon after the session saw it go idle (the `state` event's time is
    // the session's report's), and a send to an idle session is over once pi has the message.
    let idle_at = events.wait_line("the idle state after the slow answer", SLOW, |l| {
        serde_json::from_str::<Value>(l).is_ok_and(|e| {
            e["kind"] == "state" && e["attention"] == "idle" && e["at_ms"].as_u64() > Some(sent_ms + 1500)
        })
    });
    let idle_at: Value = serde_json::from_str(&idle_at).unwrap();
    let wait_ms = returned_ms.saturating_sub(idle_at["at_ms"].as_u64().unwrap_or(u64::MAX));
    let mut sends: Vec<u128> = (0..3)
        .map(|i| {
            let started = Instant::now();
            ok(&w.run(&["send", "w1", &format!("[[text:quick {i}]]")]), "send");
            let took = started.elapsed().as_millis();
            ok(&w.run(&["wait", "w1"]), "wait");
            took
        })
        .collect();
    sends.sort_unstable();
    eprintln!(
        "speed: wait returned {wait_ms} ms after the session went idle; send (the whole command) took {sends:?} ms"
    );
    assert!(wait_ms < 1000, "the wait returned {wait_ms} ms after the change");
    assert!(sends[1] < 1000, "send took {sends:?} ms");

    // Standard input, and a text that is not a directive's: the transcript keeps both sides.
    let piped = b"from a pipe\nsecond line [[text:piped reply]]";
    ok(&w.run_in(None, &["send", "w1", "-"], Some(piped)), "send -");
    ok(&w.run(&["wait", "w1"]), "wait");
    let last = stdout(&w.run(&["read", "w1", "--last", "4"]));
    assert!(
        last.contains("── user ──\nfrom a pipe\nsecond line [[text:piped reply]]")
            && last.contains("── assistant ──\npiped reply"),
        "{last}"
    );
    let doc: Value = serde_json::from_str(&stdout(&w.run(&["read", "w1", "--json", "--last", "2"]))).unwrap();
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["session"], "1:w1");
    assert_eq!(doc["attention"], "idle");
    assert_eq!(doc["reply"], "piped reply");
    assert_eq!(doc["messages"].as_array().map(Vec::len), Some(2));
    assert_eq!(doc["messages"][1]["role"], "assistant");
    assert!(doc["messages"][1]["tokens"]["output"].as_u64() > Some(0), "{doc}");
    assert!(doc["tokens"]["input"].as_u64() > Some(0), "{doc}");

    // Bad input: a clear error, a non-zero status, and nothing reaches pi.
    let before = prompts(&w);
    let big = vec![b'x'; 200 << 10];
    let cases: [BadInput; 7] = [
        (&["send", "nope", "hi"], None, 1, "no session named \"nope\""),
        (&["send", "w1", ""], None, 1, "the text is empty"),
        (&["send", "w1", " ", "\n"], None, 1, "the text is empty"),
        (&["send", "w1", "-"], Some(&big), 1, "at most 128 KiB"),
        (
            &["wait", "w1", "--until", "never"],
            None,
            2,
            "invalid value 'never'",
        ),
        (&["wait", "nope"], None, 1, "no session named \"nope\""),
        (&["read", "nope"], None, 1, "no session named \"nope\""),
    ];
    for (args, input, code, why) in cases {
        let out = w.run_in(None, args, input);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", said(&out));
        assert!(said(&out).contains(why), "{args:?}: {}", said(&out));
    }
    ok(
        &w.run(&["send", "w1", "[[text:after]]"]),
        "send after the bad ones",
    );
    ok(&w.run(&["wait", "w1"]), "wait");
    let mut expected = before.clone();
    expected.push("[[text:after]]".into());
    assert_eq!(prompts(&w), expected, "only the good message reached the model");

    // A wait that times out says so with its own status; the run goes on and is waited for.
    ok(&w.run(&["send", "w1", "[[delay:3000]][[text:late]]"]), "send");
    let out = w.run(&["wait", "w1", "--timeout", "0.3"]);
    assert_eq!(out.status.code(), Some(124), "{}", said(&out));
    assert!(
        said(&out).contains("w1 was not idle within 0.3 s"),
        "{}",
        said(&out)
    );
    ok(&w.run(&["wait", "w1"]), "wait after the timeout");
    assert_eq!(stdout(&w.run(&["read", "w1"])), "late\n");

    // What `events` followed meanwhile: each message, and the runs it started and ended.
    let kinds: Vec<(String, String)> = events
        .lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["session"] == "1:w1")
        .map(|e| {
            let what = e["attention"].as_str().or(e["text"].as_str()).unwrap_or_default();
            (
                e["kind"].as_str().unwrap_or_default().to_string(),
                what.to_string(),
            )
        })
        .collect();
    let messages = kinds.iter().filter(|(k, _)| k == "message").count();
    assert_eq!(messages, 7, "{kinds:?} from {:#?}", events.lines());
    assert!(kinds.contains(&("state".into(), "working".into())), "{kinds:?}");
    assert!(kinds.contains(&("state".into(), "idle".into())), "{kinds:?}");

    // A first prompt on `new`'s command line is written out as a sent text is (second red-team
    // pass, row 32): pi draws it as it is, so its escape sequences acted on the terminal.
    let out = w.new_session(None, "w2", &["look\u{1b}]9;FAKE\u{7}\u{1b}[2J [[text:seen]]"]);
    ok(&out, "new with escape sequences in its first prompt");
    ok(&w.run(&["wait", "w2", "--timeout", "120"]), "wait for w2");
    let asked = prompts(&w);
    assert!(
        asked
            .iter()
            .any(|p| p == "look\\x1b]9;FAKE\\x07\\x1b[2J [[text:seen]]"),
        "{asked:?}"
    );
    assert!(!asked.iter().any(|p| p.contains('\u{1b}')), "{asked:?}");

    // A wait for the end, and the end.
    let mut exited = w.spawn(&["wait", "w1", "--until", "exited"]);
    ok(&w.run(&["kill", "w1"]), "kill");
    assert_eq!(exited.wait_exit(world::SLOW), 0, "{:?}", exited.lines());
    events.wait_line("the end", SLOW, |l| l.contains("\"kind\":\"ended\""));
}

#[test]
fn agents_may_start_eight_sessions_and_the_ninth_is_refused() {
    let w = World::new(json!({}));
    let agent = |args: &[&str]| {
        let mut cmd = std::process::Command::new(world::exe());
        cmd.args(args)
            .env_clear()
            .envs(w.env.env_vars())
            // As pokeshell gives it to pi: a `pokeshell` run by that session's agent.
            .env("POKESHELL_SESSION", "lead")
            .current_dir(w.env.work_dir())
            .stdin(std::process::Stdio::null());
        cmd.output().expect("run pokeshell")
    };
    // Cheap sessions: the bound is the server's, whatever runs in them.
    for i in 1..=8 {
        let name = format!("s{i}");
        ok(
            &agent(&["new", "-d", "--name", &name, "--command", "sleep 600"]),
            "new",
        );
    }
    let out = agent(&["new", "-d", "--name", "s9", "--command", "sleep 600"]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let text = said(&out);
    assert!(
        text.contains("agents may run at most 8 sessions of their own at once (pokeshell.maxAgentSessions)")
            && text.contains("1:s1, 2:s2"),
        "{text}"
    );
    // The person is not bounded by it.
    ok(
        &w.run(&["new", "-d", "--name", "mine", "--command", "sleep 600"]),
        "new",
    );
    // An agent's kill is a ledger record naming it, and makes room.
    ok(&agent(&["kill", "s1"]), "kill");
    let records = w.records("DRIVE-K1");
    assert_eq!(
        records,
        ["ended by the agent of session lead"],
        "{:?}",
        w.ledger()
    );
    assert_eq!(w.records("DRIVE-N1").len(), 8, "{:?}", w.ledger());
    let deadline = Instant::now() + SLOW;
    loop {
        let out = agent(&["new", "-d", "--name", "s9", "--command", "sleep 600"]);
        if out.status.success() {
            break;
        }
        // `kill` answers once the session is gone from the list; its program may take a moment.
        assert!(Instant::now() < deadline, "no room after a kill: {}", said(&out));
        std::thread::sleep(Duration::from_millis(100));
    }
    // Speed: `events` following twenty idle sessions costs (next to) nothing: it is told changes,
    // it does not poll, and an idle session has none to tell.
    for i in 0..10 {
        let name = format!("idle{i}");
        ok(
            &w.run(&["new", "-d", "--name", &name, "--command", "sleep 600"]),
            "new",
        );
    }
    let events = w.spawn(&["events", "--json"]);
    ok(
        &w.run(&["new", "-d", "--name", "idle10", "--command", "sleep 600"]),
        "new",
    );
    events.wait_line("the twentieth session", SLOW, |l| l.contains("idle10"));
    let listed: Value = serde_json::from_str(&stdout(&w.run(&["ls", "--json"]))).unwrap();
    assert_eq!(listed["sessions"].as_array().map(Vec::len), Some(20), "{listed}");
    let window = Duration::from_secs(5);
    let before = world::cpu_time(events.child.id());
    // A measurement over a window of time, not a wait for something.
    std::thread::sleep(window);
    let used = world::cpu_time(events.child.id()) - before;
    let share = used.as_secs_f64() / window.as_secs_f64() * 100.0;
    eprintln!(
        "speed: events following 20 idle sessions used {used:?} of CPU in {window:?} ({share:.2} % of a core)"
    );
    assert!(share < 1.0, "events used {share:.2} % of a core");
    drop(events);

    // No send into itself.
    let out = agent(&["send", "lead", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    let out = w.run(&["new", "-d", "--name", "lead", "--command", "sleep 600"]);
    ok(&out, "new lead");
    let out = agent(&["send", "lead", "hi"]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(
        said(&out).contains("cannot send a message to itself"),
        "{}",
        said(&out)
    );
}
