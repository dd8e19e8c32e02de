//! Several sessions and several clients of one server, on real pi 1.6.0 against the scripted model:
//! prefix+n starts a second session, prefix+1, prefix+2 and the switcher (prefix+w) go between them
//! and each shows its own pi; a hidden session's stalled stream is recovered with nobody looking at
//! it, and when it stalls again and pokeshell gives up, the shown session's side pane lists it
//! first. Two clients of one session share it at the smaller size, and both type into the same pi,
//! each with its own half-typed prefix.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use std::time::{Duration, Instant};

use common::{PREFIX, client, detach, session_list, start, wait_ready};
use serde_json::json;
use support::matrix::{Matrix, side_flat, trailing_user_text};
use support::pty::{Pty, ServerHome};
use support::shell::footer;
use support::{Step, WAIT, model_server};

const FIRST: &str = "Apples: the answer of the first session.";
const SECOND: &str = "Bananas: the answer of the second session.";
const STALL_SECONDS: u64 = 4;
const RESUME: &str = "[Poke] The model provider's reply stream stalled";

/// Waits until the session numbered `shown` is on screen: marked in the session list, with `own`
/// (its answer) in its pane and not `other` (the other session's).
#[track_caller]
fn wait_shown(pty: &Pty, shown: u32, own: &str, other: &str) {
    let mark = format!("▸{shown} ");
    pty.wait_until(&format!("session {shown} on screen"), WAIT, |s| {
        let text = s.contents();
        session_list(s).iter().any(|l| l.starts_with(&mark)) && text.contains(own) && !text.contains(other)
    });
}

#[test]
fn prefix_n_starts_a_second_session_and_prefix_digits_switch_between_them() {
    let home = ServerHome::new();
    let server = model_server();
    server.push(Step::text(FIRST));
    let mut m = start(
        &home,
        server,
        json!({"poke": {"streamStallSeconds": STALL_SECONDS, "postCompactMaxPokes": 1}}),
    );
    m.submit("what does the first session say?");
    m.wait_text(FIRST);

    m.pty.send([PREFIX, b'n']);
    m.pty.wait_for_text("New session", WAIT);
    m.pty.send("\r");
    m.pty
        .wait_until("the second session shown, both listed", WAIT, |s| {
            let list = session_list(s);
            list.iter().any(|l| l.starts_with("▸2 work-2 ")) && list.iter().any(|l| l.starts_with("1 work "))
        });
    wait_ready(&m.pty);
    m.pty.with_screen(|s| {
        assert!(
            !s.contents().contains(FIRST),
            "a fresh pi in the new session: {}",
            s.contents()
        )
    });
    m.server.push(Step::text(SECOND));
    m.submit("what does the second session say?");
    m.wait_text(SECOND);

    m.pty.send([PREFIX, b'1']);
    wait_shown(&m.pty, 1, FIRST, SECOND);
    // Back with the switcher: its filter leaves the second session alone.
    m.pty.send([PREFIX, b'w']);
    m.pty.wait_for_text("Enter show", WAIT);
    m.pty.send("work-2");
    m.pty.wait_for_text("work-2", WAIT);
    m.pty.send("\r");
    wait_shown(&m.pty, 2, SECOND, FIRST);
    m.pty.send([PREFIX, b'1']);
    wait_shown(&m.pty, 1, FIRST, SECOND);
    m.pty.send([PREFIX, b'2']);
    wait_shown(&m.pty, 2, SECOND, FIRST);

    hidden_stall_is_recovered_and_listed_first(&mut m);
}

/// From session 2: its run stalls, the user switches to session 1; the stall is recovered, stalls
/// again, and pokeshell gives up on it: session 1's list shows session 2 first.
fn hidden_stall_is_recovered_and_listed_first(m: &mut Matrix) {
    // What the resume gets: a stream that stalls again.
    m.server.push(Step::stall("Still looking", 1000));
    let before = m.chat().len();
    m.submit("[[stall:Let me look]] where is the bug?");
    m.pty.send([PREFIX, b'1']);
    wait_shown(&m.pty, 1, FIRST, SECOND);
    let stalled = m.chat().len();
    assert_eq!(
        stalled,
        before + 1,
        "session 2 was hidden before its stall was noticed: only the stalled request so far"
    );

    let resumed = m.wait_trailing(RESUME);
    assert_eq!(
        resumed, stalled,
        "the request after the stalled one is the resume"
    );
    m.wait_record("STALL-S1", "action", "aborted the agent");
    m.wait_record("STALL-S1", "action", "sent the resume after a");
    let gave_up = m.wait_record("STALL-S1", "declined", "already resumed 1 stall");
    assert!(gave_up.to_string().contains("silent"), "{gave_up}");

    m.pty
        .wait_until("session 2 listed first, as it needs the user", WAIT, |s| {
            let list = session_list(s);
            list.len() == 2 && list[0].starts_with("2 work-2 gave up") && list[1].starts_with("▸1 work idle")
        });
    m.pty.with_screen(|s| {
        assert!(s.contents().contains(FIRST), "session 1 is still the one shown");
    });
    assert_eq!(
        m.chat().len(),
        resumed + 1,
        "after the give-up nothing more is sent: {:?}",
        m.trailing_user_texts()
    );
}

#[test]
fn two_clients_share_a_session_at_the_smaller_size_and_both_type_into_pi() {
    let home = ServerHome::new();
    let mut m = start(&home, model_server(), json!({}));
    m.wait_side("pane 102×49");
    let mut small = client(&m, &["attach"], 40, 120);
    wait_ready(&small);
    for pty in [&m.pty, &small] {
        pty.wait_until("the session at the smaller client's size", WAIT, |s| {
            side_flat(s).contains("pane 72×39")
        });
    }
    m.pty.send("from-one ");
    small.wait_for_text("from-one", WAIT);
    small.send("from-two");
    m.pty.wait_for_text("from-one from-two", WAIT);
    let deadline = Instant::now() + WAIT;
    while m.server.wait_for_requests(1, Duration::from_millis(300)).is_err() {
        assert!(Instant::now() < deadline, "pi never sent the prompt");
        small.send("\r");
    }
    let chat = m.wait_chats(1);
    assert_eq!(
        trailing_user_text(&chat[0]).as_deref(),
        Some("from-one from-two"),
        "what both typed reached pi"
    );
    detach(&mut small);
    m.wait_side("pane 102×49");
}

/// Two terminals on one session each keep their own half-typed prefix, as tmux keeps one key table
/// per client: A presses the prefix, B types "d": B is not detached and its "d" reaches pi; then A
/// types "d" and A, only A, detaches.
#[test]
fn two_terminals_on_one_session_each_keep_their_own_half_typed_prefix() {
    let home = ServerHome::new();
    let mut m = start(&home, model_server(), json!({}));
    let mut b = client(&m, &["attach"], 50, 140);
    wait_ready(&b);
    b.send("keep-");
    m.pty.wait_for_text("keep-", WAIT);

    m.pty.send([PREFIX]);
    m.pty
        .wait_until("A's footer offers the keys after the prefix", WAIT, |s| {
            footer(s).contains("detach")
        });
    assert!(
        !b.with_screen(|s| footer(s).contains("detach")),
        "B's footer is not armed:\n{}",
        b.dump()
    );
    b.send("d");
    for pty in [&m.pty, &b] {
        pty.wait_for_text("keep-d", WAIT);
    }
    assert_eq!(b.try_exit_code(), None, "B is not detached");
    assert_eq!(
        m.pty.try_exit_code(),
        None,
        "A is still there, its prefix still armed"
    );

    m.pty.send("d");
    assert_eq!(m.pty.wait_exit(WAIT), 0, "A detaches");
    m.pty.wait_for_text("detached from", WAIT);
    b.send("x");
    b.wait_for_text("keep-dx", WAIT);
    assert_eq!(b.try_exit_code(), None, "B, attached still, types on");
    let deadline = Instant::now() + WAIT;
    while m.server.wait_for_requests(1, Duration::from_millis(300)).is_err() {
        assert!(Instant::now() < deadline, "pi never sent the prompt");
        b.send("\r");
    }
    let chat = m.wait_chats(1);
    assert_eq!(
        trailing_user_text(&chat[0]).as_deref(),
        Some("keep-dx"),
        "B's d reached pi, A's prefix+d did not"
    );
    detach(&mut b);
}
