//! End to end on a terminal that speaks the kitty keyboard protocol: pokeshell tells pi so, mirrors
//! pi's keyboard flags onto the terminal, recognises its prefix in CSI-u form with release events,
//! and pops its flags on exit.

mod support;

use support::pi::PiEnv;
use support::pty::Pty;
use support::shell::{quit, side, wait_ready};
use support::{WAIT, model_server};

/// A kitty-like host: answers the keyboard-flags query and DA1, nothing else.
fn kitty_host(chunk: &[u8]) -> Vec<u8> {
    let has = |s: &[u8]| chunk.windows(s.len()).any(|w| w == s);
    let mut reply = Vec::new();
    if has(b"\x1b[?u") {
        reply.extend_from_slice(b"\x1b[?0u");
    }
    if has(b"\x1b[c") {
        reply.extend_from_slice(b"\x1b[?62;22c");
    }
    reply
}

fn contains(raw: &[u8], s: &[u8]) -> bool {
    raw.windows(s.len()).any(|w| w == s)
}

#[test]
fn kitty_host_gets_pis_flags_the_prefix_works_in_csi_u_and_flags_are_popped_on_exit() {
    let server = model_server();
    let env = PiEnv::new(&server.base_url());
    let mut pty = Pty::spawn_answering(env.pokeshell_command(&[], &[]), 40, 120, kitty_host);
    wait_ready(&pty);
    // pi pushed flags 7 (it was told the host speaks kitty); pokeshell set them on the host.
    let raw = pty.raw_output();
    assert!(
        contains(&raw, b"\x1b[=7;1u") || contains(&raw, b"\x1b[>7u"),
        "pokeshell did not set pi's flags on the host"
    );

    // The prefix and `s` as a kitty host reports them with flags 7: presses and releases.
    pty.send("\x1b[93;5u\x1b[93;5:3us\x1b[115;1:3u");
    pty.wait_for_text_gone("uptime", WAIT);
    // Nothing of that reached pi's editor; ordinary typing still does.
    pty.send("abc");
    pty.wait_for_text("abc", WAIT);
    pty.with_screen(|s| {
        let editor_line = s
            .contents()
            .lines()
            .find(|l| l.contains("abc"))
            .unwrap_or_default()
            .to_string();
        assert_eq!(
            editor_line.trim(),
            "abc",
            "no stray key reached pi: {editor_line:?}"
        );
    });
    // Shift+Enter in the kitty encoding makes a new line in pi's editor.
    pty.send("\x1b[13;2udef");
    pty.wait_until("two editor lines", WAIT, |s| {
        let text = s.contents();
        let a = text.lines().position(|l| l.trim() == "abc");
        let d = text.lines().position(|l| l.trim() == "def");
        matches!((a, d), (Some(a), Some(d)) if d == a + 1)
    });
    // Clear the editor before quitting: Ctrl+C, as a kitty host encodes it.
    pty.send("\x1b[99;5u");
    pty.wait_for_text_gone("def", WAIT);
    pty.send("\x1b[93;5u\x1b[93;5:3us\x1b[115;1:3u");
    pty.wait_until("the side pane back", WAIT, |s| side(s).contains("uptime"));
    assert_eq!(quit(&mut pty), 0);
    let raw = pty.raw_output();
    let last_leave = raw
        .windows(8)
        .rposition(|w| w == b"\x1b[?1049l")
        .expect("left the alternate screen");
    assert!(
        contains(&raw[..last_leave], b"\x1b[<u"),
        "the kitty entry was popped before leaving"
    );
}
