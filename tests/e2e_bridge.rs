//! End to end: the bridge inside real pi 1.6.0 talking to pokeshell.

mod support;

use std::time::Duration;

use support::pi::PiEnv;
use support::shell::{footer, side, spawn, submit, wait_ready};
use support::{Step, WAIT, model_server};

#[test]
fn a_running_bash_call_shows_in_the_side_pane_with_a_ticking_timer_and_leaves_when_done() {
    let server = model_server();
    server.push(Step::bash("sleep 3"));
    server.push(Step::text("slept well"));
    let env = PiEnv::new(&server.base_url());
    let mut pty = spawn(&env, &[], 40, 120);
    wait_ready(&pty);
    submit(&mut pty, &server, "take a nap");
    pty.wait_until("the tool in the side pane at 1s", WAIT, |s| {
        side(s).contains("bash  1s")
    });
    pty.wait_until("the timer ticking to 2s", WAIT, |s| side(s).contains("bash  2s"));
    assert!(
        pty.with_screen(|s| side(s).contains("sleep 3")),
        "args preview shown\n{}",
        pty.dump()
    );
    assert!(
        pty.with_screen(|s| footer(s).contains("📌 p:on ⏳ bash")),
        "{}",
        pty.dump()
    );
    pty.wait_for_text("slept well", WAIT);
    pty.wait_until("the tool gone and the footer back to its base", WAIT, |s| {
        !side(s).contains("bash  ") && footer(s).starts_with("📌 p:on ") && !footer(s).contains("⏳")
    });
}

#[test]
fn prefix_p_while_idle_makes_the_model_receive_the_poke() {
    let server = model_server();
    server.push(Step::text("back at work"));
    let env = PiEnv::new(&server.base_url());
    let mut pty = spawn(&env, &[], 40, 120);
    wait_ready(&pty);
    pty.send("\x1dp");
    let requests = server
        .wait_for_requests(1, WAIT)
        .unwrap_or_else(|e| pty.fail(&e.to_string()));
    let last = requests[0].last_user_text().unwrap_or_default();
    assert!(
        last.starts_with("[Poke]"),
        "the poke is the last user message: {last:?}"
    );
    pty.wait_for_text("back at work", WAIT);
    pty.wait_until("the side pane lists the poke", WAIT, |s| {
        side(s).contains("poked")
    });
}

#[test]
fn prefix_p_while_a_tool_runs_is_delivered_after_the_tool_in_the_same_run() {
    let server = model_server();
    server.push(Step::bash("sleep 2"));
    server.push(Step::text("done after the poke"));
    let env = PiEnv::new(&server.base_url());
    let mut pty = spawn(&env, &[], 40, 120);
    wait_ready(&pty);
    submit(&mut pty, &server, "run a slow command");
    pty.wait_until("the tool running", WAIT, |s| footer(s).contains("⏳ bash"));
    pty.send("\x1dp");
    let requests = server
        .wait_for_requests(2, WAIT)
        .unwrap_or_else(|e| pty.fail(&e.to_string()));
    let second = &requests[1];
    assert_eq!(
        second.tool_results().len(),
        1,
        "the tool's result comes first, in the same run"
    );
    let last = second.last_user_text().unwrap_or_default();
    assert!(
        last.starts_with("[Poke]"),
        "the poke follows the tool result: {last:?}"
    );
    pty.wait_for_text("done after the poke", WAIT);
    assert_eq!(server.model_requests().len(), 2, "no extra run was started");
}

#[test]
fn new_session_reconnects_the_bridge_and_shows_the_new_session() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = spawn(&env, &[], 40, 120);
    wait_ready(&pty);
    let session_of = |s: &vt100::Screen| {
        side(s)
            .lines()
            .find_map(|l| l.strip_prefix("session").map(|v| v.trim().to_string()))
    };
    let first = pty
        .with_screen(session_of)
        .unwrap_or_else(|| pty.fail("no session shown"));
    pty.send("/new");
    pty.wait_for_text("/new", WAIT);
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        pty.send("\r");
        let changed = pty.try_wait_until(Duration::from_millis(700), |s| {
            session_of(s).is_some_and(|id| id != first) && side(s).contains("connected")
        });
        if changed {
            break;
        }
        if std::time::Instant::now() >= deadline {
            pty.fail("the side pane never showed a new session");
        }
    }
    wait_ready(&pty);
}

#[test]
fn a_bridge_connection_dropped_mid_run_leaves_pokeshell_and_pi_working() {
    let server = model_server();
    server.push(Step::bash("sleep 3"));
    server.push(Step::text("finished despite the drop"));
    server.push(Step::text("still poking fine"));
    let env = PiEnv::new(&server.base_url());
    let mut pty = spawn(&env, &[], 40, 120);
    wait_ready(&pty);
    submit(&mut pty, &server, "a long job");
    pty.wait_until("the tool running", WAIT, |s| footer(s).contains("⏳ bash"));
    // The session runs in the server: the debugging signal goes there.
    // SAFETY: a signal to the server of this test's own home.
    unsafe { libc::kill(pty.host_pid(), libc::SIGUSR1) };
    pty.wait_until("the side pane reporting the drop", WAIT, |s| {
        side(s).contains("not connected")
    });
    pty.wait_for_text("finished despite the drop", WAIT);
    wait_ready(&pty);
    pty.send("\x1dp");
    pty.wait_for_text("still poking fine", WAIT);
}

#[test]
fn a_hosted_command_says_the_bridge_is_not_connected_and_still_works() {
    let mut cmd = portable_pty::CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.args(["--command", "sh -c 'echo hosted; read line; echo got $line'"]);
    let mut pty = support::pty::Pty::spawn(cmd, 30, 120);
    pty.wait_for_text("hosted", WAIT);
    pty.wait_until("bridge: not connected in the side pane", WAIT, |s| {
        side(s).contains("not connected")
    });
    pty.send("\x1dp");
    pty.wait_until("the footer explaining why nothing was poked", WAIT, |s| {
        footer(s).contains("not connected")
    });
    pty.send("hello\r");
    pty.wait_for_text("got hello", WAIT);
}

#[test]
fn a_pi_older_than_1_1_is_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fake = dir.path().join("pi");
    std::fs::write(
        &fake,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 0.73.1; exit 0; fi\necho fake pi; exec sleep 30\n",
    )
    .expect("write fake pi");
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let mut cmd = portable_pty::CommandBuilder::new(env!("CARGO_BIN_EXE_pokeshell"));
    cmd.arg("--pi");
    cmd.arg(&fake);
    let pty = support::pty::Pty::spawn(cmd, 30, 120);
    pty.wait_for_text("fake pi", WAIT);
    pty.wait_until("the footer naming the old version", WAIT, |s| {
        footer(s).contains("0.73.1")
    });
}
