//! End to end: pokeshell's settings with real pi 1.6.0: the files, the dialog, and
//! the session entry that survives pi's /reload and a pokeshell restart on the same session.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::pi::PiEnv;
use support::pty::Pty;
use support::shell::{footer, quit, submit, wait_ready};
use support::{Step, WAIT, model_server};

/// Types a slash command and presses Enter until `done` holds (pi may first complete the command).
#[track_caller]
fn slash(pty: &mut Pty, command: &str, what: &str, mut done: impl FnMut(&vt100::Screen) -> bool) {
    pty.send(command);
    pty.wait_for_text(command, WAIT);
    let deadline = Instant::now() + WAIT;
    loop {
        pty.send("\r");
        if pty.try_wait_until(Duration::from_millis(700), &mut done) {
            return;
        }
        if Instant::now() >= deadline {
            pty.fail(&format!("{command} never led to {what}"));
        }
    }
}

#[test]
fn poke_disabled_in_settings_json_shows_p_off() {
    let server = model_server();
    let env = PiEnv::builder(&server.base_url())
        .settings(json!({"poke": {"enabled": false}}))
        .build();
    let pty = Pty::spawn(env.pokeshell_command(&[], &[]), 40, 120);
    wait_ready(&pty);
    pty.wait_until("📌 p:off in the footer", WAIT, |s| {
        footer(s).starts_with("📌 p:off")
    });
}

/// pokeshell with `poke.enabled: false` in settings.json, after one exchange with the model (so pi
/// has written its session file before any settings entry lands in it), showing `📌 p:off`.
fn started_with_poke_off() -> (support::ModelServer, PiEnv, Pty) {
    let server = model_server();
    server.set_default(Step::text("noted"));
    let env = PiEnv::builder(&server.base_url())
        .settings(json!({"poke": {"enabled": false}}))
        .build();
    let mut pty = Pty::spawn(env.pokeshell_command(&[], &[]), 40, 120);
    wait_ready(&pty);
    submit(&mut pty, &server, "hello");
    pty.wait_for_text("noted", WAIT);
    pty.wait_until("📌 p:off", WAIT, |s| footer(s).starts_with("📌 p:off"));
    (server, env, pty)
}

#[test]
fn a_dialog_toggle_applies_at_once_and_survives_reload_and_restart() {
    let (_server, env, mut pty) = started_with_poke_off();

    // prefix+c opens the dialog on its first row, the master switch; Enter flips it; Esc closes.
    pty.send("\x1dc");
    pty.wait_for_text("pokeshell settings", WAIT);
    pty.send("\r");
    pty.wait_until("📌 p:on right after the toggle", WAIT, |s| {
        footer(s).starts_with("📌 p:on")
    });
    pty.send("\x1b");
    pty.wait_for_text_gone("pokeshell settings", WAIT);

    // /reload replaces pi's runtime: the bridge reconnects and the session entry is read back.
    slash(&mut pty, "/reload", "pi's reload message", |s| {
        s.contents().contains("Reloaded")
    });
    wait_ready(&pty);
    pty.wait_until("📌 p:on after /reload", WAIT, |s| {
        footer(s).starts_with("📌 p:on")
    });

    // Quit, then start pokeshell again on the same session.
    let code = quit(&mut pty);
    assert_eq!(code, 0);
    drop(pty);

    let again = Pty::spawn(env.pokeshell_command(&[], &["--continue"]), 40, 120);
    wait_ready(&again);
    again.wait_for_text("hello", WAIT);
    again.wait_until("📌 p:on restored from the session", WAIT, |s| {
        footer(s).starts_with("📌 p:on")
    });
}

#[test]
fn a_new_session_starts_from_the_files_again() {
    let (_server, _env, mut pty) = started_with_poke_off();
    pty.send("\x1dc");
    pty.wait_for_text("pokeshell settings", WAIT);
    pty.send("\r\x1b");
    pty.wait_until("📌 p:on for this session", WAIT, |s| {
        footer(s).starts_with("📌 p:on")
    });
    slash(&mut pty, "/new", "a new session", |s| {
        s.contents().contains("New session")
    });
    pty.wait_until("📌 p:off from the files in the new session", WAIT, |s| {
        footer(s).starts_with("📌 p:off")
    });
}
