//! End to end: the pi commands the bridge registers (`/poke`, `/poke status|on|off`), typed into real
//! pi 1.6.0 inside pokeshell, against the scripted model; and pi with the bridge but no pokeshell.

mod support;

use std::time::{Duration, Instant};

use support::matrix::Matrix;
use support::pi::PiEnv;
use support::pty::Pty;
use support::shell::footer;
use support::{START_WAIT, Step, WAIT, model_server};

/// Types `text` into pi and presses Enter until `done` holds: pi's editor may first take Enter to
/// accept a completion, and ignores it while still starting.
#[track_caller]
fn run(pty: &mut Pty, text: &str, what: &str, mut done: impl FnMut(&vt100::Screen) -> bool) {
    pty.send(text);
    pty.wait_for_text(text, WAIT);
    let deadline = Instant::now() + WAIT;
    loop {
        pty.send("\r");
        if pty.try_wait_until(Duration::from_millis(700), &mut done) {
            return;
        }
        if Instant::now() >= deadline {
            pty.fail(&format!("after typing {text:?}: {what} never happened"));
        }
    }
}

#[test]
fn poke_p1_slash_poke_makes_the_model_receive_the_poke_and_pi_shows_the_answer() {
    let server = model_server();
    server.push(Step::text("Picking the work back up."));
    let mut m = Matrix::builder().start(server);
    run(&mut m.pty, "/poke", "the poke reaching the model", |_| {
        !m.server.chat_requests().is_empty()
    });
    let pokes = m.pokes();
    assert_eq!(pokes.len(), 1, "one poke: {:?}", m.trailing_user_texts());
    assert!(pokes[0].starts_with("[Poke] The user poked"), "{:?}", pokes[0]);
    m.wait_text("Poke delivered: the agent was asked to pick its work back up");
    m.wait_text("Picking the work back up.");
    m.wait_record("POKE-P1", "action", "you poked the agent");
}

#[test]
fn poke_c4_slash_poke_off_shows_p_off_in_pokeshells_footer_and_on_brings_it_back() {
    let mut m = Matrix::builder().start(model_server());
    assert!(m.pty.with_screen(|s| footer(s).starts_with("📌 p:on")));
    run(&mut m.pty, "/poke off", "p:off in the footer", |s| {
        footer(s).starts_with("📌 p:off")
    });
    m.wait_text("supervision is now off (p:off)");
    run(&mut m.pty, "/poke on", "p:on in the footer", |s| {
        footer(s).starts_with("📌 p:on")
    });
    m.wait_text("supervision is now on (p:on)");
    assert!(m.chat().is_empty(), "switching sends nothing to the model");
}

#[test]
fn slash_poke_status_shows_pokeshells_live_status_inside_pi() {
    let mut m = Matrix::builder().start(model_server());
    run(&mut m.pty, "/poke status", "the status notice", |s| {
        s.contents().contains("pokeshell status")
    });
    m.wait_text("Supervision: on");
    m.wait_text("Bridge: connected");
    m.wait_text("Pokes this episode: 0 of 2");
    assert!(m.chat().is_empty(), "asking sends nothing to the model");
}

#[test]
fn without_pokeshell_the_commands_say_plainly_that_it_is_not_connected() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let dir = tempfile::tempdir().expect("temp dir for the bridge");
    let bridge =
        pokeshell::pi::bridge::asset::install_bridge_in(&dir.path().join("rt")).expect("write the bridge");
    let bridge = bridge.to_string_lossy().into_owned();
    let mut pty = Pty::spawn(env.pty_command(&["-e", &bridge]), 40, 120);
    pty.wait_for_text("mock-model", START_WAIT);
    run(&mut pty, "/poke", "the not-connected notice", |s| {
        s.contents()
            .contains("pokeshell is not connected, so /poke did nothing.")
    });
    assert!(server.model_requests().is_empty(), "nothing reached the model");
}

#[test]
fn wak_t2_slash_wakeups_lists_the_pending_wakeup_completes_its_id_and_cancels_it() {
    let server = model_server();
    server.push_all([
        Step::tool(
            "schedule_wakeup",
            serde_json::json!({"delay_seconds": 600, "prompt": "Look at the deploy.", "reason": "deploy running"}),
        ),
        Step::text("I will look again later."),
    ]);
    let mut m = Matrix::builder().start(server);
    m.submit("deploy, then look again later");
    m.wait_text("I will look again later.");
    m.wait_side("wakeups wake-1 in");
    run(&mut m.pty, "/wakeups", "the list of wakeups", |s| {
        s.contents().contains("1 pending wakeup(s):")
    });
    m.wait_text("wake-1 due in 9m");
    m.wait_text(": deploy running");
    // pi's editor offers the pending id as a completion of `cancel`.
    m.pty.send("/wakeups cancel ");
    m.pty
        .wait_until("the pending id offered as a completion", WAIT, |s| {
            s.contents().contains("cancel wake-1")
        });
    let mut done = |s: &vt100::Screen| s.contents().contains("Wakeup wake-1 cancelled.");
    let deadline = Instant::now() + WAIT;
    while !m.pty.try_wait_until(Duration::from_millis(700), &mut done) {
        if Instant::now() >= deadline {
            m.pty.fail("the completed /wakeups cancel never answered");
        }
        m.pty.send("\r");
    }
    m.wait_record("WAK-T2", "action", "you cancelled wakeup wake-1");
    m.pty.wait_until("the wakeup gone from the side pane", WAIT, |s| {
        !support::matrix::side_flat(s).contains("wakeups wake-1")
    });
}

#[test]
fn ho_t2_slash_handoff_with_a_focus_compacts_with_a_handoff_document() {
    let server = model_server();
    server.push_all([
        Step::text(support::matrix::long_text("Notes", 1600)),
        Step::text(support::matrix::long_text("Plan", 1600)),
    ]);
    let mut m = Matrix::builder()
        .settings(serde_json::json!({"compaction": {"keepRecentTokens": 1}, "handoff": {"save": false}}))
        .start(server);
    m.submit("take some notes");
    m.wait_text("line 3 of the scripted notes");
    m.submit("make a plan");
    m.wait_text("Plan: line 1");
    m.server.push(Step::text(
        "## Goal\nShip the parser.\n\n## Next Steps\n1. Handle the edge cases (MARKER-SLASH-HANDOFF).",
    ));
    run(
        &mut m.pty,
        "/handoff the parser edge cases",
        "the handoff starting",
        |_| m.server.model_requests().len() >= 3,
    );
    m.wait_record(
        "HO-T2",
        "action",
        "you asked for a handoff (focus: the parser edge cases)",
    );
    let asked = m.server.model_requests()[2].body["messages"].to_string();
    assert!(
        asked.contains("the parser edge cases"),
        "the focus reaches the handoff request: {asked}"
    );
    m.wait_footer("handoff written");
}
