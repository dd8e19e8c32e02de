//! End to end: the pi commands the bridge registers (`/poke`, `/poke status|on|off`), typed into real
//! pi 1.6.0 inside pokeshell, against the scripted model; and pi with the bridge but no pokeshell.

mod support;

use std::time::{Duration, Instant};

use support::matrix::Matrix;
use support::pi::PiEnv;
use support::pty::Pty;
use support::shell::footer;
use support::{Step, WAIT, model_server};

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
        pokeshell::bridge::asset::install_bridge_in(&dir.path().join("rt")).expect("write the bridge");
    let bridge = bridge.to_string_lossy().into_owned();
    let mut pty = Pty::spawn(env.pty_command(&["-e", &bridge]), 40, 120);
    pty.wait_for_text("mock-model", WAIT);
    run(&mut pty, "/poke", "the not-connected notice", |s| {
        s.contents()
            .contains("pokeshell is not connected, so /poke did nothing.")
    });
    assert!(server.model_requests().is_empty(), "nothing reached the model");
}
